"""The serverbench contract as a plain ASGI application (no framework), served by uvicorn.

The lifespan startup also opens the TCP echo server on ECHO_PORT in the same event loop (with
SO_REUSEPORT, so that every uvicorn worker process shares the port).
"""

import asyncio
import json
import os

import database
import shapes

PAYLOAD = bytes(ord("a") + i % 26 for i in range(1 << 20))

TEXT = (b"content-type", b"text/plain")
HTML = (b"content-type", b"text/html")
JSON = (b"content-type", b"application/json")
OCTETS = (b"content-type", b"application/octet-stream")

ROUTES = {
    "/hello": (200, TEXT, b"Hello World!"),
    "/hey": (200, TEXT, b"Hey!"),
    "/hell": (200, TEXT, b"Hell!"),
    "/about": (200, HTML, b"<html><body>About page</body></html>"),
    "/payload": (200, OCTETS, PAYLOAD),
}
NOT_FOUND = (404, TEXT, b"Not Found")
# The database routes, only when DATABASE_URL is set (None otherwise: nothing else changes).
DATABASE = database.from_env()


class PingPong:
    """One worker task per event loop, fed through an asyncio.Queue; replies come on futures."""

    def __init__(self) -> None:
        self.queue: "asyncio.Queue[asyncio.Future[bytes]] | None" = None

    async def ask(self) -> bytes:
        if self.queue is None:  # created on first use, inside the worker process's own loop
            self.queue = asyncio.Queue()
            self.task = asyncio.get_running_loop().create_task(self._serve(self.queue))
        reply = asyncio.get_running_loop().create_future()
        await self.queue.put(reply)
        return await reply

    @staticmethod
    async def _serve(queue: "asyncio.Queue[asyncio.Future[bytes]]") -> None:
        while True:
            reply = await queue.get()
            if not reply.cancelled():
                reply.set_result(PAYLOAD)


pingpong = PingPong()


class Echo(asyncio.Protocol):
    """Writes back every byte read; closes when the peer closes."""

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.transport.write(data)

    def eof_received(self):
        return False  # close our side once the buffered data is written


async def lifespan(receive, send):
    server = None
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            host = os.environ.get("HOST") or "127.0.0.1"
            port = int(os.environ.get("ECHO_PORT") or "9000")
            loop = asyncio.get_running_loop()
            server = await loop.create_server(Echo, host, port, reuse_port=True, backlog=1024)
            if DATABASE is not None:
                try:  # open the pool now; if the database is down, the first request retries
                    await DATABASE.get_pool()
                except Exception as err:  # noqa: BLE001
                    print(f"database: {err!r}", flush=True)
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            if server is not None:
                server.close()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def websocket_echo(scope, receive, send):
    """ws-echo: accept, then send every message back as it came (text as text, bytes as bytes)."""
    if scope["path"] != "/ws":
        await send({"type": "websocket.close", "code": 1008})  # uvicorn answers the upgrade 403
        return
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "websocket.receive":
            text = message.get("text")
            if text is not None:
                await send({"type": "websocket.send", "text": text})
            else:
                await send({"type": "websocket.send", "bytes": message["bytes"]})
        elif kind == "websocket.connect":
            await send({"type": "websocket.accept"})
        else:  # websocket.disconnect
            return


UPGRADE_REQUIRED = (426, TEXT, b"Upgrade Required")


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["type"] == "websocket":
        await websocket_echo(scope, receive, send)
        return
    path = scope["path"]
    # baseline, upload, compression, static (shapes.py).
    if await shapes.handle(scope, receive, send):
        return
    if path == "/json":
        status, ctype, body = 200, JSON, json.dumps({"message": "Hello, World!"}).encode()
    elif path == "/pingpong":
        status, ctype, body = 200, OCTETS, await pingpong.ask()
    elif path == "/ws":  # an HTTP request: it did not ask to upgrade
        status, ctype, body = UPGRADE_REQUIRED
    else:
        route = ROUTES.get(path)
        if route is None and DATABASE is not None:
            handler = DATABASE.route(path)
            if handler is not None:
                await database.respond(send, handler, scope["query_string"])
                return
        status, ctype, body = route or NOT_FOUND
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [ctype, (b"content-length", str(len(body)).encode())],
    })
    await send({"type": "http.response.body", "body": body})
