"""Starts serverbench's python/aioquic server in WORKERS processes: HTTP/3 on the UDP port H3_PORT
with aioquic (h3.py), and the same answers (app.py, a plain ASGI app) over HTTP/1.1 on PORT and
HTTP/1.1 or h2 over TLS on TLS_PORT with Hypercorn, each TCP answer carrying
`alt-svc: h3=":H3_PORT"`.

Each worker process binds its own sockets with SO_REUSEPORT, so the kernel spreads TCP
connections and, by the UDP 4-tuple hash, QUIC connections over the processes: every datagram of
one QUIC connection reaches the process that holds its state.
"""

import asyncio
import multiprocessing
import os
import signal
import socket
import sys

import uvloop
from hypercorn.asyncio import serve
from hypercorn.config import Config

from app import app
from h3 import H3Server

# What each UDP socket asks the kernel for (SO_RCVBUF/SO_SNDBUF; Linux caps it at
# net.core.rmem_max/wmem_max and doubles it for its bookkeeping).
UDP_BUFFER = 4 << 20


def bound(host: str, port: int, kind: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, kind)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    if kind == socket.SOCK_STREAM:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    else:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, UDP_BUFFER)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, UDP_BUFFER)
    sock.bind((host, port))
    sock.setblocking(False)
    return sock


def hypercorn_config(env: dict, socks: list[socket.socket]) -> Config:
    """Hypercorn on the TCP sockets this process bound (fd:// binds keep them open)."""
    host = env.get("HOST") or "127.0.0.1"
    cfg = Config()
    cfg.accesslog = None
    cfg.loglevel = "WARNING"
    cfg.backlog = 2048
    # No Date or Server header: the contract's answers carry only what they need.
    cfg.include_date_header = False
    cfg.include_server_header = False
    socks.append(bound(host, int(env.get("PORT") or "8080"), socket.SOCK_STREAM))
    plain = f"fd://{socks[-1].fileno()}"
    if env.get("TLS_PORT"):
        cfg.certfile, cfg.keyfile = env["TLS_CERT"], env["TLS_KEY"]
        socks.append(bound(host, int(env["TLS_PORT"]), socket.SOCK_STREAM))
        cfg.bind, cfg.insecure_bind = [f"fd://{socks[-1].fileno()}"], [plain]
    else:
        cfg.bind = [plain]
    if env.get("H3_PORT"):
        cfg.alt_svc_headers = [f'h3=":{env["H3_PORT"]}"; ma=86400']
    return cfg


def worker(env: dict) -> None:
    socks: list[socket.socket] = []
    cfg = hypercorn_config(env, socks)
    h3 = None
    if env.get("H3_PORT"):
        udp = bound(env.get("HOST") or "127.0.0.1", int(env["H3_PORT"]), socket.SOCK_DGRAM)
        socks.append(udp)
        h3 = H3Server(udp, env["TLS_CERT"], env["TLS_KEY"])

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)

        async def stopped() -> None:
            await stop.wait()
            if h3 is not None:
                await h3.stop()

        if h3 is not None:
            await h3.start()
        await serve(app, cfg, shutdown_trigger=stopped)

    # socks stays referenced until here: Hypercorn's fd:// binds wrap the descriptors, and the
    # transports close them when the loop ends.
    uvloop.run(main())


def main() -> None:
    env = dict(os.environ)
    if (env.get("TLS_PORT") or env.get("H3_PORT")) and not (env.get("TLS_CERT") and env.get("TLS_KEY")):
        sys.exit(
            f"python/aioquic: TLS_PORT/H3_PORT need TLS_CERT and TLS_KEY "
            f"(got {env.get('TLS_CERT')!r}, {env.get('TLS_KEY')!r})"
        )
    workers = max(1, int(env.get("WORKERS") or "1"))
    if workers == 1:
        worker(env)
        return
    procs = [multiprocessing.Process(target=worker, args=(env,)) for _ in range(workers)]
    for proc in procs:
        proc.start()

    def forward(signum, frame):
        for proc in procs:
            proc.terminate()

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for proc in procs:
        proc.join()


if __name__ == "__main__":
    main()
