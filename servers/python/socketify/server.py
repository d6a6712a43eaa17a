"""The serverbench contract on socketify.py (uWebSockets through CFFI), native interface.

WORKERS processes are forked; each one runs its own App and listens on the same port
(uSockets sets SO_REUSEPORT), the parent forwards SIGTERM/SIGINT to them and waits.
"""

import json
import os
import queue
import signal
import sys
import threading

from socketify import App, AppListenOptions, CompressOptions

PAYLOAD = bytes(ord("a") + i % 26 for i in range(1 << 20))

TEXT = b"text/plain"
HTML = b"text/html"
JSON = b"application/json"
OCTETS = b"application/octet-stream"


class PingPong:
    """One worker thread fed through a queue.Queue; each request carries a one-slot reply queue.

    The handler waits for the reply synchronously: uWebSockets closes a connection when a
    pipelined request arrives while an asynchronous response is still pending, so an asyncio
    hand-off (await in the handler) would break pipelining.
    """

    def __init__(self) -> None:
        self.queue: "queue.Queue[queue.Queue[bytes]]" = queue.Queue()
        threading.Thread(target=self._serve, name="pingpong", daemon=True).start()

    def ask(self) -> bytes:
        reply: "queue.Queue[bytes]" = queue.Queue(maxsize=1)
        self.queue.put(reply)
        return reply.get()

    def _serve(self) -> None:
        while True:
            self.queue.get().put(PAYLOAD)


def static(content_type: bytes, body: bytes, status: int = 200):
    def handler(res, req):
        res.send(body, content_type=content_type, status=status)

    return handler


def json_message(res, req):
    res.send(json.dumps({"message": "Hello, World!"}).encode(), content_type=JSON, status=200)


def ws_echo(ws, message, opcode):
    """Sends a message back as it came: socketify hands text over as str, binary as bytes."""
    ws.send(message, opcode)


# ws-echo: uWebSockets' WebSocket through socketify. Compression off (socketify's default, said
# again); messages up to 16 MiB (the default is 16 KiB); no backpressure limit (uWS drops sends
# past the default 64 KiB, losing echoes under pipelining); idle timeout 960 s (uWS's maximum;
# the default 120 s) and no server pings. uWS answers pings and closes itself.
WS_BEHAVIOR = {
    "compression": CompressOptions.DISABLED,
    "max_payload_length": 16 * 1024 * 1024,
    "max_backpressure": 0,
    "close_on_backpressure_limit": False,
    "idle_timeout": 960,
    "send_pings_automatically": False,
    "message": ws_echo,
}


def make_app() -> App:
    pingpong = PingPong()

    def pingpong_handler(res, req):
        res.send(pingpong.ask(), content_type=OCTETS, status=200)

    app = App()
    app.get("/hello", static(TEXT, b"Hello World!"))
    app.get("/hey", static(TEXT, b"Hey!"))
    app.get("/hell", static(TEXT, b"Hell!"))
    app.get("/about", static(HTML, b"<html><body>About page</body></html>"))
    app.get("/json", json_message)
    app.get("/payload", static(OCTETS, PAYLOAD))
    app.get("/pingpong", pingpong_handler)
    app.ws("/ws", WS_BEHAVIOR)
    # A GET /ws without Upgrade: the ws route passes it on (uWS yields it) to this one.
    app.get("/ws", static(TEXT, b"Upgrade Required", 426))
    app.any("/*", static(TEXT, b"Not Found", 404))
    return app


def serve(host: str, port: int) -> None:
    app = make_app()
    app.listen(
        AppListenOptions(port=port, host=host),
        lambda config: print(f"socketify: pid {os.getpid()} on {host}:{port}", flush=True),
    )
    app.run()


def main() -> None:
    host = os.environ.get("HOST") or "127.0.0.1"
    port = int(os.environ.get("PORT") or "8080")
    workers = max(1, int(os.environ.get("WORKERS") or "1"))
    if workers == 1:
        serve(host, port)
        return
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:
                serve(host, port)
            finally:
                os._exit(0)
        children.append(pid)

    def stop(signum, frame):
        for child in children:
            try:
                os.kill(child, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for child in children:
        os.waitpid(child, 0)
    sys.exit(0)


if __name__ == "__main__":
    main()
