"""The `static` shape of issue 32 (spec/contract.md): STATIC_DIR under /static/.

Granian 2.8.7's own static route (``--static-path-mount``) answers chunked, with neither an ETag
nor Last-Modified and no compression, so it cannot pass the contract (README.md). Here the file
itself is still sent by Granian's Rust side (RSGI ``proto.response_file``) with its
Content-Length; this module adds the type by extension (``mimetypes``), a weak ETag from size and
mtime, Last-Modified, 304 on revalidation, and gzip for text files when the client asks
(compressed once per file version and kept, as nginx's ``gzip_static`` serves a precompressed
copy). A path that leaves the folder (``..``; Granian percent-decodes the path) gets 403.
"""

import gzip
import mimetypes
import os
from email.utils import formatdate, parsedate_to_datetime

mimetypes.add_type("font/woff2", ".woff2")
mimetypes.add_type("text/javascript", ".js")

PREFIX = "/static/"
TEXT = [("content-type", "text/plain")]
ROOT = os.path.realpath(os.environ["STATIC_DIR"]) if os.environ.get("STATIC_DIR") else None
# (path, etag) -> gzip bytes
_gzipped: "dict[tuple[str, str], bytes]" = {}


def _compressible(media_type):
    return media_type.startswith("text/") or media_type in ("application/json", "image/svg+xml")


def _resolve(path):
    """The file under ROOT that a request path names, or None when it leaves ROOT."""
    full = os.path.normpath(os.path.join(ROOT, path[len(PREFIX):]))
    return full if full.startswith(ROOT + os.sep) else None


def _not_modified(headers, etag, mtime):
    match = headers.get("if-none-match")
    if match is not None:
        return etag in (t.strip() for t in match.split(","))
    since = headers.get("if-modified-since")
    try:
        return since is not None and int(mtime) <= parsedate_to_datetime(since).timestamp()
    except (TypeError, ValueError):
        return False


def _gzip(path, etag):
    key = (path, etag)
    body = _gzipped.get(key)
    if body is None:
        with open(path, "rb") as f:
            body = _gzipped[key] = gzip.compress(f.read(), 6)
    return body


def serve(scope, proto):
    """Answers GET /static/PATH from ROOT."""
    path = _resolve(scope.path)
    if path is None:
        proto.response_bytes(403, TEXT, b"Forbidden")
        return
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is None or not os.path.isfile(path):
        proto.response_bytes(404, TEXT, b"Not Found")
        return
    media_type = mimetypes.guess_type(path)[0] or "application/octet-stream"
    etag = f'W/"{st.st_size:x}-{st.st_mtime_ns:x}"'
    headers = [
        ("content-type", media_type),
        ("etag", etag),
        ("last-modified", formatdate(st.st_mtime, usegmt=True)),
    ]
    text = _compressible(media_type)
    if text:
        headers.append(("vary", "Accept-Encoding"))
    if _not_modified(scope.headers, etag, st.st_mtime):
        proto.response_empty(304, headers)
        return
    accept = scope.headers.get("accept-encoding") or ""
    if text and "gzip" in (t.split(";")[0].strip().lower() for t in accept.split(",")):
        proto.response_bytes(200, headers + [("content-encoding", "gzip")], _gzip(path, etag))
        return
    proto.response_file(200, headers + [("content-length", str(st.st_size))], path)
