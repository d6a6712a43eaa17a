## The database workloads (/db, /queries, /fortunes, /updates) on the standard library's
## db_postgres (libpq, synchronous): one connection per worker thread, opened when the thread
## starts (only with DATABASE_URL), its statements prepared once. A query blocks the thread's
## dispatcher while it runs: db_postgres has no asynchronous API.
import std/[algorithm, db_postgres, json, os, random, strutils, tables, xmltree]

const
  MaxQueries = 500
  SelectWorld = sql"SELECT id, randomnumber FROM world WHERE id = $1"
  SelectFortunes = sql"SELECT id, message FROM fortune"

type
  Fortune = object
    id: int
    message: string
  Answer* = tuple[status: int, contentType, body: string]

include "fortunes.nimf"

var
  conn {.threadvar.}: DbConn
  connected {.threadvar.}: bool
  updates {.threadvar.}: Table[int, SqlPrepared]
  rng {.threadvar.}: Rand

proc enabled*(): bool = getEnv("DATABASE_URL").len > 0

proc connect() =
  ## This thread's connection, from DATABASE_HOST, _PORT, _USER, _PASSWORD and _NAME.
  conn = open(getEnv("DATABASE_HOST") & ":" & getEnv("DATABASE_PORT"), getEnv("DATABASE_USER"),
              getEnv("DATABASE_PASSWORD"), getEnv("DATABASE_NAME"))
  discard conn.prepare("world", SelectWorld, 1)
  discard conn.prepare("fortunes", SelectFortunes, 0)
  updates = initTable[int, SqlPrepared]()
  connected = true

proc initThread*(seed: int64) =
  ## Called by each worker thread before it serves: its random state and its connection.
  rng = initRand(seed)
  try:
    connect()
  except DbError as e:
    stderr.writeLine "nim/asynchttpserver: cannot connect to DATABASE_URL: ", e.msg

proc queryCount*(query: string): int =
  ## N from `queries`: missing, empty or not a number means 1; clamped to 1..500.
  result = 1
  for pair in query.split('&'):
    if pair.startsWith("queries="):
      try:
        result = clamp(parseInt(pair[8 .. ^1]), 1, MaxQueries)
      except ValueError:
        result = 1
      return

proc randomId(): int = rng.rand(1 .. 10_000)

proc world(id: int): (int, int) =
  let row = conn.getRow(SqlPrepared("world"), $id)
  if row[0].len == 0:
    raise newException(DbError, "no world row with id " & $id)
  (parseInt(row[0]), parseInt(row[1]))

proc worlds(n: int): seq[(int, int)] =
  ## N rows, one SELECT each, one after the other.
  for _ in 1 .. n:
    result.add world(randomId())

proc toJson(w: (int, int)): JsonNode = %*{"id": w[0], "randomNumber": w[1]}

proc toJson(ws: seq[(int, int)]): JsonNode =
  result = newJArray()
  for w in ws: result.add toJson(w)

proc updateStatement(n: int): SqlPrepared =
  ## `UPDATE world SET randomnumber = v.r FROM (VALUES ($1::int, $2::int), ...) ...` for n
  ## rows, prepared once per row count on this connection.
  if n notin updates:
    var values: seq[string]
    for i in 0 ..< n:
      values.add "($" & $(2 * i + 1) & "::int, $" & $(2 * i + 2) & "::int)"
    let query = "UPDATE world SET randomnumber = v.r FROM (VALUES " & values.join(", ") &
      ") AS v(id, r) WHERE world.id = v.id"
    updates[n] = conn.prepare("update_" & $n, SqlQuery(query), 2 * n)
  updates[n]

proc update(n: int): seq[(int, int)] =
  ## Reads N rows, gives each a new number and writes them back in one batched UPDATE, ids
  ## sorted (concurrent requests lock rows in the same order) and distinct (a row drawn twice
  ## gets one new number, shown twice).
  result = worlds(n)
  var changes = initOrderedTable[int, int]()
  for w in result: changes[w[0]] = randomId()
  changes.sort(proc (a, b: (int, int)): int = cmp(a[0], b[0]))
  var args: seq[string]
  for id, number in changes:
    args.add $id
    args.add $number
  conn.exec(updateStatement(changes.len), args)
  for w in result.mitems: w[1] = changes[w[0]]

proc fortunes(): string =
  var list: seq[Fortune]
  for row in conn.getAllRows(SqlPrepared("fortunes")):
    list.add Fortune(id: parseInt(row[0]), message: row[1])
  list.add Fortune(id: 0, message: "Additional fortune added at request time.")
  list.sort(proc (a, b: Fortune): int = cmp(a.message, b.message)) # byte order
  renderFortunes(list)

proc answer*(path, query: string): Answer =
  ## One of the four paths; a database error is a 500, and the connection is opened again on
  ## the next request.
  try:
    if not connected: connect()
    case path
    of "/db": (200, "application/json", $toJson(world(randomId())))
    of "/queries": (200, "application/json", $toJson(worlds(queryCount(query))))
    of "/updates": (200, "application/json", $toJson(update(queryCount(query))))
    else: (200, "text/html; charset=utf-8", fortunes())
  except DbError, ValueError:
    stderr.writeLine "nim/asynchttpserver: database error on ", path, ": ", getCurrentExceptionMsg()
    if connected:
      conn.close()
      connected = false
    (500, "text/plain", "database error")
