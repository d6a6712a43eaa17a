"""Starts serverbench's python/aioquic server: the ASGI app of app.py under Hypercorn, HTTP/1.1
on PORT, HTTP/1.1 and h2 over TLS on TLS_PORT (each answer carrying Hypercorn's Alt-Svc header
for H3_PORT) and HTTP/3 on the UDP port H3_PORT through aioquic, in WORKERS processes.

Each worker process binds its own sockets with SO_REUSEPORT, so the kernel spreads TCP
connections and, by the UDP 4-tuple hash, QUIC connections over the processes: every datagram of
one QUIC connection reaches the process that holds its state. (Hypercorn's own --workers binds one
UDP socket in the parent and shares it, so any process could read any connection's datagram.)
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
    sock.set_inheritable(True)
    return sock


def config(env: dict) -> tuple[Config, list[socket.socket]]:
    """Hypercorn's Config over sockets this process bound (fd:// binds keep them open)."""
    host = env.get("HOST") or "127.0.0.1"
    cfg = Config()
    cfg.accesslog = None
    cfg.loglevel = "WARNING"
    cfg.backlog = 2048
    # No Date or Server header: the contract's answers carry only what they need.
    cfg.include_date_header = False
    cfg.include_server_header = False
    socks = [bound(host, int(env.get("PORT") or "8080"), socket.SOCK_STREAM)]
    tls_port, h3_port = env.get("TLS_PORT"), env.get("H3_PORT")
    if tls_port or h3_port:
        cfg.certfile, cfg.keyfile = env["TLS_CERT"], env["TLS_KEY"]
        cfg.insecure_bind = [f"fd://{socks[0].fileno()}"]
        cfg.bind = []
        if tls_port:
            socks.append(bound(host, int(tls_port), socket.SOCK_STREAM))
            cfg.bind = [f"fd://{socks[-1].fileno()}"]
        if h3_port:
            socks.append(bound(host, int(h3_port), socket.SOCK_DGRAM))
            cfg.quic_bind = [f"fd://{socks[-1].fileno()}"]
    else:
        cfg.bind = [f"fd://{socks[0].fileno()}"]
    return cfg, socks


def worker(env: dict) -> None:
    cfg, socks = config(env)
    stop = asyncio.Event()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        await serve(app, cfg, shutdown_trigger=stop.wait)

    uvloop.run(main())
    for sock in socks:
        sock.close()


def main() -> None:
    env = dict(os.environ)
    if (env.get("TLS_PORT") or env.get("H3_PORT")) and not (env.get("TLS_CERT") and env.get("TLS_KEY")):
        sys.exit(f"python/aioquic: TLS_PORT/H3_PORT need TLS_CERT and TLS_KEY (got {env.get('TLS_CERT')!r}, "
                 f"{env.get('TLS_KEY')!r})")
    workers = max(1, int(env.get("WORKERS") or "1"))
    if workers == 1:
        worker(env)
        return
    procs = [multiprocessing.Process(target=worker, args=(env,)) for _ in range(workers)]
    for proc in procs:
        proc.start()

    def stop(signum, frame):
        for proc in procs:
            proc.terminate()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for proc in procs:
        proc.join()


if __name__ == "__main__":
    main()
