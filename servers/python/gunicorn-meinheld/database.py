"""The contract's database workloads (db, queries, fortunes, updates) for the WSGI app: psycopg 3
with a psycopg_pool.ConnectionPool per gunicorn worker (min = max = DATABASE_POOL / WORKERS, at
least one), every statement prepared (prepare_threshold=0), and a Jinja2 template with autoescape
for /fortunes. The calls block: a meinheld worker answers one database request at a time.
"""

import json
import os
import random
import threading
from urllib.parse import parse_qs

import jinja2
from psycopg_pool import ConnectionPool

WORLD_ROWS = 10000
SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = %s"
SELECT_FORTUNE = "SELECT id, message FROM fortune"
UPDATE_WORLD = "UPDATE world SET randomnumber = %s WHERE id = %s"
ADDITIONAL = "Additional fortune added at request time."

JSON = "application/json"
HTML = "text/html; charset=utf-8"

FORTUNES = jinja2.Environment(autoescape=True).from_string(
    "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
    "<tr><th>id</th><th>message</th></tr>"
    "{% for f in fortunes %}<tr><td>{{ f[0] }}</td><td>{{ f[1] }}</td></tr>{% endfor %}"
    "</table></body></html>"
)


def query_count(query_string: str) -> int:
    """The queries parameter: missing, empty or not a number means 1; clamped to 1..500."""
    raw = parse_qs(query_string).get("queries", [""])[0]
    n = int(raw) if raw.isascii() and raw.isdigit() else 1
    return min(max(n, 1), 500)


def random_id() -> int:
    return random.randint(1, WORLD_ROWS)


def read_worlds(conn, n: int) -> list:
    rows = []
    for _ in range(n):
        row = conn.execute(SELECT_WORLD, (random_id(),), prepare=True).fetchone()
        rows.append({"id": row[0], "randomNumber": row[1]})
    return rows


class Database:
    """One pool per worker process, made on its first request (after gunicorn forked it)."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size = url, size
        self.pool = None
        self.lock = threading.Lock()
        self.routes = {
            "/db": self.db,
            "/queries": self.queries,
            "/fortunes": self.fortunes,
            "/updates": self.updates,
        }

    def connection(self):
        if self.pool is None:
            with self.lock:
                if self.pool is None:
                    self.pool = ConnectionPool(
                        self.url,
                        min_size=self.size,
                        max_size=self.size,
                        kwargs={"autocommit": True, "prepare_threshold": 0},
                        timeout=5.0,  # waiting for a connection longer than this answers 500
                        open=True,
                    )
        return self.pool.connection()

    def db(self, query_string):
        with self.connection() as conn:
            return JSON, json.dumps(read_worlds(conn, 1)[0]).encode()

    def queries(self, query_string):
        with self.connection() as conn:
            return JSON, json.dumps(read_worlds(conn, query_count(query_string))).encode()

    def updates(self, query_string):
        with self.connection() as conn:
            rows = read_worlds(conn, query_count(query_string))
            # One number per distinct id (the rows returned match the table), written in id
            # order so concurrent requests lock rows in the same order.
            latest = {row["id"]: random_id() for row in rows}
            for row in rows:
                row["randomNumber"] = latest[row["id"]]
            with conn.cursor() as cur:
                cur.executemany(UPDATE_WORLD, [(num, id_) for id_, num in sorted(latest.items())])
        return JSON, json.dumps(rows).encode()

    def fortunes(self, query_string):
        with self.connection() as conn:
            rows = conn.execute(SELECT_FORTUNE, prepare=True).fetchall()
        rows.append((0, ADDITIONAL))
        rows.sort(key=lambda r: r[1])
        return HTML, FORTUNES.render(fortunes=rows).encode()

    def route(self, path: str):
        """The handler of a database path, or None."""
        return self.routes.get(path)


def from_env():
    """The Database of DATABASE_URL with this process's share of DATABASE_POOL, or None."""
    url = os.environ.get("DATABASE_URL")
    if not url:
        return None
    workers = max(1, int(os.environ.get("WORKERS") or "1"))
    pool = int(os.environ.get("DATABASE_POOL") or "16")
    return Database(url, max(1, pool // workers))


def respond(handler, query_string):
    """Runs a database handler: (status, content type, body); a database error answers 500."""
    try:
        ctype, body = handler(query_string)
        return "200 OK", ctype, body
    except Exception as err:  # noqa: BLE001 - any database failure is a 500, and is logged
        print(f"database: {err!r}", flush=True)
        return "500 Internal Server Error", "text/plain", b"Internal Server Error"
