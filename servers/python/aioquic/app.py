"""The serverbench contract's hello, routes, json and payload: answer() gives a path's status,
content type and body, to h3.py (HTTP/3 on aioquic) and to app, a plain ASGI application (no
framework) that Hypercorn serves over HTTP/1.1 and h2; see server.py."""

import json

PAYLOAD = bytes(ord("a") + i % 26 for i in range(1 << 20))

TEXT = b"text/plain"
HTML = b"text/html"
OCTETS = b"application/octet-stream"

ROUTES = {
    "/hello": (200, TEXT, b"Hello World!"),
    "/hey": (200, TEXT, b"Hey!"),
    "/hell": (200, TEXT, b"Hell!"),
    "/about": (200, HTML, b"<html><body>About page</body></html>"),
    "/payload": (200, OCTETS, PAYLOAD),
}
NOT_FOUND = (404, TEXT, b"Not Found")


def answer(path: str) -> tuple[int, bytes, bytes]:
    if path == "/json":
        # Serialized per request, as the contract asks.
        body = json.dumps({"message": "Hello, World!"}, separators=(",", ":")).encode()
        return 200, b"application/json", body
    return ROUTES.get(path, NOT_FOUND)


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    status, content_type, body = answer(scope["path"])
    headers = [(b"content-type", content_type), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
