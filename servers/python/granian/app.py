"""The serverbench contract as an RSGI application (Granian's native interface).

`__rsgi_init__` also opens the TCP echo server on ECHO_PORT in each worker's event loop (with
SO_REUSEPORT, so that every Granian worker process shares the port). `https_app` is the same
application without the echo server, for the Granian process that serves TLS_PORT (run.sh).
"""

import asyncio
import json
import os

import database
import shapes

PAYLOAD = bytes(ord("a") + i % 26 for i in range(1 << 20))

TEXT = [("content-type", "text/plain")]
HTML = [("content-type", "text/html")]
JSON = [("content-type", "application/json")]
OCTETS = [("content-type", "application/octet-stream")]

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


class App:
    """The RSGI application: HTTP routes in `__rsgi__`, the echo server's lifetime in the hooks."""

    def __init__(self, echo: bool = True) -> None:
        self.with_echo = echo
        self.echo = None

    def __rsgi_init__(self, loop) -> None:
        if not self.with_echo:
            return
        host = os.environ.get("HOST") or "127.0.0.1"
        port = int(os.environ.get("ECHO_PORT") or "9000")
        start = loop.create_server(Echo, host, port, reuse_port=True, backlog=1024)
        self.echo = loop.run_until_complete(start)  # the loop is not running yet here

    def __rsgi_del__(self, loop) -> None:
        if self.echo is not None:
            self.echo.close()

    async def __rsgi__(self, scope, proto):
        path = scope.path
        # baseline, upload, compression (shapes.py).
        if await shapes.handle(scope, proto):
            return
        if path == "/json":
            proto.response_bytes(200, JSON, json.dumps({"message": "Hello, World!"}).encode())
        elif path == "/pingpong":
            proto.response_bytes(200, OCTETS, await pingpong.ask())
        else:
            route = ROUTES.get(path)
            if route is None and DATABASE is not None:
                handler = DATABASE.route(path)
                if handler is not None:
                    await database.respond(proto, handler, scope.query_string)
                    return
            status, headers, body = route or NOT_FOUND
            proto.response_bytes(status, headers, body)


app = App()
https_app = App(echo=False)
