"""The HTTP shapes of issue 32 (spec/contract.md) on the plain RSGI app.

baseline and upload read the body from the protocol object as it streams (``async for chunk in
proto``: the upload counted, never held; Granian's hyper answers ``Expect: 100-continue`` when
the body is first read). /json with ``Accept-Encoding`` is compressed with the standard
library (gzip, zlib for deflate; br and zstd are answered identity, which the contract allows):
RSGI has no middleware of its own.
"""

import gzip
import json
import zlib
from urllib.parse import parse_qs

import static_files

TEXT = [("content-type", "text/plain")]
CODINGS = {"gzip": lambda b: gzip.compress(b, 6), "deflate": lambda b: zlib.compress(b, 6)}


def _int(values):
    try:
        return int(values[0])
    except (ValueError, IndexError, TypeError):
        return 0


def _json(proto, accept):
    body = json.dumps({"message": "Hello, World!"}).encode()
    tokens = (t.split(";")[0].strip().lower() for t in accept.split(","))
    coding = next((t for t in tokens if t in CODINGS), None)
    headers = [("content-type", "application/json"), ("vary", "Accept-Encoding")]
    if coding is not None:
        body = CODINGS[coding](body)
        headers.append(("content-encoding", coding))
    proto.response_bytes(200, headers, body)


async def handle(scope, proto):
    """Answers the shapes; False when the request is not one of them."""
    path = scope.path
    if path == "/baseline":
        q = parse_qs(scope.query_string)
        total = _int(q.get("a")) + _int(q.get("b"))
        if scope.method == "POST":
            total += _int([(await proto()).strip()])
        proto.response_bytes(200, TEXT, str(total).encode())
    elif static_files.ROOT is not None and path.startswith(static_files.PREFIX):
        static_files.serve(scope, proto)
    elif path == "/upload" and scope.method == "POST":
        n = 0
        async for chunk in proto:
            n += len(chunk)
        proto.response_bytes(200, TEXT, str(n).encode())
    elif path == "/json" and scope.headers.get("accept-encoding"):
        _json(proto, scope.headers.get("accept-encoding"))
    else:
        return False
    return True
