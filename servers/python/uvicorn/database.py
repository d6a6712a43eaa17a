"""The contract's database workloads (db, queries, fortunes, updates) for the ASGI apps: asyncpg
with a pool per worker process (min = max = DATABASE_POOL / WORKERS, at least one), prepared
statements from asyncpg's statement cache, and a Jinja2 template with autoescape for /fortunes.
"""

import asyncio
import json
import os
import random
from urllib.parse import parse_qs

import asyncpg
import jinja2

WORLD_ROWS = 10000
SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = $1"
SELECT_FORTUNE = "SELECT id, message FROM fortune"
UPDATE_WORLD = "UPDATE world SET randomnumber = $2 WHERE id = $1"
ADDITIONAL = "Additional fortune added at request time."

JSON = (b"content-type", b"application/json")
HTML = (b"content-type", b"text/html; charset=utf-8")
TEXT = (b"content-type", b"text/plain")

FORTUNES = jinja2.Environment(autoescape=True).from_string(
    "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
    "<tr><th>id</th><th>message</th></tr>"
    "{% for f in fortunes %}<tr><td>{{ f[0] }}</td><td>{{ f[1] }}</td></tr>{% endfor %}"
    "</table></body></html>"
)


def query_count(query_string: bytes) -> int:
    """The queries parameter: missing, empty or not a number means 1; clamped to 1..500."""
    raw = parse_qs(query_string.decode("latin-1")).get("queries", [""])[0]
    n = int(raw) if raw.isascii() and raw.isdigit() else 1
    return min(max(n, 1), 500)


def random_id() -> int:
    return random.randint(1, WORLD_ROWS)


class Database:
    """One pool per worker process, made on the first request (or at startup) in its own loop."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size = url, size
        self.pool = None
        self.lock = asyncio.Lock()
        self.routes = {
            "/db": self.db,
            "/queries": self.queries,
            "/fortunes": self.fortunes,
            "/updates": self.updates,
        }

    async def get_pool(self):
        if self.pool is None:
            async with self.lock:
                if self.pool is None:
                    self.pool = await asyncpg.create_pool(
                        self.url, min_size=self.size, max_size=self.size
                    )
        return self.pool

    async def read_worlds(self, conn, n: int) -> list:
        rows = []
        for _ in range(n):
            row = await conn.fetchrow(SELECT_WORLD, random_id())
            rows.append({"id": row[0], "randomNumber": row[1]})
        return rows

    async def db(self, query_string):
        async with (await self.get_pool()).acquire() as conn:
            return JSON, json.dumps((await self.read_worlds(conn, 1))[0]).encode()

    async def queries(self, query_string):
        async with (await self.get_pool()).acquire() as conn:
            return JSON, json.dumps(await self.read_worlds(conn, query_count(query_string))).encode()

    async def updates(self, query_string):
        async with (await self.get_pool()).acquire() as conn:
            rows = await self.read_worlds(conn, query_count(query_string))
            # One number per distinct id (the rows returned match the table), written in id
            # order so concurrent requests lock rows in the same order.
            latest = {row["id"]: random_id() for row in rows}
            for row in rows:
                row["randomNumber"] = latest[row["id"]]
            await conn.executemany(UPDATE_WORLD, sorted(latest.items()))
        return JSON, json.dumps(rows).encode()

    async def fortunes(self, query_string):
        async with (await self.get_pool()).acquire() as conn:
            rows = [tuple(r) for r in await conn.fetch(SELECT_FORTUNE)]
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


async def respond(send, handler, query_string) -> None:
    """Runs a database handler and sends its answer; a database error answers 500."""
    try:
        ctype, body = await handler(query_string)
        status = 200
    except Exception as err:  # noqa: BLE001 - any database failure is a 500, and is logged
        print(f"database: {err!r}", flush=True)
        status, ctype, body = 500, TEXT, b"Internal Server Error"
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [ctype, (b"content-length", str(len(body)).encode())],
    })
    await send({"type": "http.response.body", "body": body})
