"""The serverbench contract as a plain WSGI application (served by gunicorn + meinheld)."""

import json
import queue
import threading

import database
import shapes

PAYLOAD = bytes(ord("a") + i % 26 for i in range(1 << 20))

TEXT = "text/plain"
HTML = "text/html"
OCTETS = "application/octet-stream"

ROUTES = {
    "/hello": ("200 OK", TEXT, b"Hello World!"),
    "/hey": ("200 OK", TEXT, b"Hey!"),
    "/hell": ("200 OK", TEXT, b"Hell!"),
    "/about": ("200 OK", HTML, b"<html><body>About page</body></html>"),
    "/payload": ("200 OK", OCTETS, PAYLOAD),
}
NOT_FOUND = ("404 Not Found", TEXT, b"Not Found")
# The database routes, only when DATABASE_URL is set (None otherwise: nothing else changes).
DATABASE = database.from_env()

# /pingpong: requests go to one worker thread through a queue.Queue; each request carries its
# own one-slot reply queue, on which the handler waits for the worker's answer.
_pings: "queue.Queue[queue.Queue[bytes]]" = queue.Queue()


def _pingpong_worker() -> None:
    while True:
        reply = _pings.get()
        reply.put(PAYLOAD)


_worker_started = False
_worker_lock = threading.Lock()


def _pingpong() -> bytes:
    global _worker_started
    if not _worker_started:  # started lazily: gunicorn forks its workers after importing the app
        with _worker_lock:
            if not _worker_started:
                threading.Thread(target=_pingpong_worker, name="pingpong", daemon=True).start()
                _worker_started = True
    reply: "queue.Queue[bytes]" = queue.Queue(maxsize=1)
    _pings.put(reply)
    return reply.get()


def app(environ, start_response):
    path = environ.get("PATH_INFO", "")
    # baseline, upload, compression (shapes.py).
    shape = shapes.handle(environ)
    if shape is not None:
        headers, body = shape
        start_response("200 OK", headers + [("Content-Length", str(len(body)))])
        return [body]
    if path == "/json":
        body = json.dumps({"message": "Hello, World!"}).encode()
        status, ctype = "200 OK", "application/json"
    elif path == "/pingpong":
        status, ctype, body = "200 OK", OCTETS, _pingpong()
    else:
        route = ROUTES.get(path)
        handler = DATABASE.route(path) if route is None and DATABASE is not None else None
        if handler is not None:
            status, ctype, body = database.respond(handler, environ.get("QUERY_STRING", ""))
        else:
            status, ctype, body = route or NOT_FOUND
    start_response(status, [("Content-Type", ctype), ("Content-Length", str(len(body)))])
    return [body]
