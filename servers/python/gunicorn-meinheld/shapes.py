"""The HTTP shapes of issue 32 (spec/contract.md) on the plain WSGI app.

baseline reads ``wsgi.input``; /json with ``Accept-Encoding`` is compressed with the standard library (gzip, zlib
for deflate; br and zstd are answered identity, which the contract allows): plain WSGI has no
middleware of its own for it.
"""

import gzip
import json
import zlib
from urllib.parse import parse_qs

CODINGS = {"gzip": lambda b: gzip.compress(b, 6), "deflate": lambda b: zlib.compress(b, 6)}


def _int(values):
    try:
        return int(values[0])
    except (ValueError, IndexError, TypeError):
        return 0


def _json(accept):
    body = json.dumps({"message": "Hello, World!"}).encode()
    tokens = (t.split(";")[0].strip().lower() for t in accept.split(","))
    coding = next((t for t in tokens if t in CODINGS), None)
    headers = [("Content-Type", "application/json"), ("Vary", "Accept-Encoding")]
    if coding is not None:
        body = CODINGS[coding](body)
        headers.append(("Content-Encoding", coding))
    return headers, body


def handle(environ):
    """(headers, body) of a shape's 200 answer, or None when the request is not one."""
    path = environ.get("PATH_INFO", "")
    method = environ.get("REQUEST_METHOD", "GET")
    text = [("Content-Type", "text/plain")]
    if path == "/baseline":
        q = parse_qs(environ.get("QUERY_STRING", ""))
        total = _int(q.get("a")) + _int(q.get("b"))
        if method == "POST":
            total += _int([environ["wsgi.input"].read().strip()])
        return text, str(total).encode()
    if path == "/json" and environ.get("HTTP_ACCEPT_ENCODING"):
        return _json(environ["HTTP_ACCEPT_ENCODING"])
    return None


# No upload: under verify, Meinheld 1.0.2 sent no `100 Continue` (verify waited 5 s) and reset
# the connection while a 128 MiB body was being sent.
