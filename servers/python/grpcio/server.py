"""python/grpcio: the serverbench.Bench service (spec/serverbench.proto) on grpcio's asyncio
API (grpc.aio), h2c on PORT and, when TLS_PORT is set, TLS with ALPN h2 there.

WORKERS processes, each with its own event loop and grpc.aio server on the same ports
(SO_REUSEPORT, on by default in gRPC's core): the processes are forked before any gRPC object
exists, as gRPC Python requires.
"""

import asyncio
import multiprocessing
import os
import signal

import grpc
from grpc import aio

import serverbench_pb2 as pb
import serverbench_pb2_grpc as pb_grpc


class Bench(pb_grpc.BenchServicer):
    async def Sum(self, request, context):
        return pb.SumReply(result=request.a + request.b)

    async def Echo(self, request, context):
        return request

    async def ServerStream(self, request, context):
        # With delay_ms (the contract's slow call), gRPC's core ends the call with
        # DEADLINE_EXCEEDED when the client's grpc-timeout passes, and cancels this task.
        delay = request.delay_ms / 1000
        for i in range(request.n):
            if delay > 0:
                await asyncio.sleep(delay)
            yield pb.Chunk(seq=i, data=bytes((i % 256,)) * request.size)

    async def ClientStream(self, request_iterator, context):
        # The iterator ends when the client ends its side; the one reply follows.
        n = size = 0
        async for chunk in request_iterator:
            n += 1
            size += len(chunk.data)
        return pb.Count(n=n, size=size)

    async def BidiEcho(self, request_iterator, context):
        async for chunk in request_iterator:
            yield chunk


def tls_credentials():
    with open(os.environ["TLS_KEY"], "rb") as k, open(os.environ["TLS_CERT"], "rb") as c:
        return grpc.ssl_server_credentials([(k.read(), c.read())])


async def serve():
    host = os.environ.get("HOST", "127.0.0.1")
    server = aio.server(options=[("grpc.so_reuseport", 1)])
    pb_grpc.add_BenchServicer_to_server(Bench(), server)
    server.add_insecure_port(f"{host}:{os.environ.get('PORT', '8080')}")
    tls_port = os.environ.get("TLS_PORT")
    if tls_port:
        server.add_secure_port(f"{host}:{tls_port}", tls_credentials())
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    await stop.wait()
    await server.stop(0)


def worker():
    asyncio.run(serve())


def main():
    workers = max(1, int(os.environ.get("WORKERS", "1") or 1))
    if workers == 1:
        worker()
        return
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=worker) for _ in range(workers)]
    for p in procs:
        p.start()

    def stop(signum, frame):
        for p in procs:
            p.terminate()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for p in procs:
        p.join()


if __name__ == "__main__":
    main()
