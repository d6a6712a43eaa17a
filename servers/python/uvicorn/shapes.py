"""The HTTP shapes of issue 32 (spec/contract.md) on the plain ASGI app.

baseline and upload read the body from ``receive`` (the upload counted message by message,
never held; uvicorn answers ``Expect: 100-continue`` when the app first calls ``receive``).
/json with ``Accept-Encoding`` goes through Starlette's ``GZipMiddleware`` (gzip only: br,
zstd and deflate are answered identity, which the contract allows), and ``/static/`` is
Starlette's ``StaticFiles`` (ETag, Last-Modified, 304) for STATIC_DIR behind the same
middleware: the ASGI pieces a plain ASGI app mounts.
"""

import json
import os
from urllib.parse import parse_qs

from starlette.exceptions import HTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.staticfiles import StaticFiles

TEXT = (b"content-type", b"text/plain")


def _int(values):
    try:
        return int(values[0])
    except (ValueError, IndexError, TypeError):
        return 0


async def _body(receive):
    """Yields the request body's chunks as they arrive."""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return


async def _plain(send, n):
    body = str(n).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [TEXT, (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _json(scope, receive, send):
    body = json.dumps({"message": "Hello, World!"}).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


# minimum_size=0: the contract's /json is 27 bytes, under the middleware's 500-byte default.
_JSON_GZIP = GZipMiddleware(_json, minimum_size=0)
_STATIC_DIR = os.environ.get("STATIC_DIR")
_STATIC = GZipMiddleware(StaticFiles(directory=_STATIC_DIR), minimum_size=0) if _STATIC_DIR else None


async def _static(scope, receive, send):
    """StaticFiles under /static/; its 404 (an HTTPException, which a Starlette app's exception
    middleware would answer) answered here."""
    try:
        await _STATIC(dict(scope, root_path=scope.get("root_path", "") + "/static"), receive, send)
    except HTTPException as e:
        body = (e.detail or "").encode()
        await send({"type": "http.response.start", "status": e.status_code,
                    "headers": [TEXT, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def _accepts_encoding(scope):
    return any(name == b"accept-encoding" for name, _ in scope["headers"])


async def handle(scope, receive, send):
    """Answers the shapes; False when the request is not one of them."""
    path = scope["path"]
    if path == "/baseline":
        q = parse_qs(scope["query_string"].decode())
        total = _int(q.get("a")) + _int(q.get("b"))
        if scope["method"] == "POST":
            raw = b"".join([chunk async for chunk in _body(receive)])
            total += _int([raw.strip()])
        await _plain(send, total)
    elif path == "/upload" and scope["method"] == "POST":
        n = 0
        async for chunk in _body(receive):
            n += len(chunk)
        await _plain(send, n)
    elif path == "/json" and _accepts_encoding(scope):
        await _JSON_GZIP(scope, receive, send)
    elif _STATIC is not None and path.startswith("/static/"):
        await _static(scope, receive, send)
    else:
        return False
    return True
