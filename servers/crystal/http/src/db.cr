# The database workloads (/db, /queries, /fortunes, /updates) on libpq through Crystal's C
# bindings (no shard registry is reachable, so no crystal-pg): libpq's asynchronous API, the
# fiber waiting on the connection's socket (IO#wait_readable) while PostgreSQL works, so the
# thread runs other fibers meanwhile. A pool of DATABASE_POOL connections shared by the threads.
require "ecr"
require "html"
require "json"

@[Link("pq")]
lib LibPQ
  type PGconn = Void*
  type PGresult = Void*
  CONNECTION_OK   = 0
  PGRES_COMMAND_OK = 1
  PGRES_TUPLES_OK  = 2
  fun connectdb = PQconnectdb(conninfo : UInt8*) : PGconn
  fun status = PQstatus(conn : PGconn) : Int32
  fun error_message = PQerrorMessage(conn : PGconn) : UInt8*
  fun finish = PQfinish(conn : PGconn)
  fun socket = PQsocket(conn : PGconn) : Int32
  fun send_prepare = PQsendPrepare(conn : PGconn, name : UInt8*, query : UInt8*, n : Int32, types : UInt32*) : Int32
  fun send_query_prepared = PQsendQueryPrepared(conn : PGconn, name : UInt8*, n : Int32, values : UInt8**, lengths : Int32*, formats : Int32*, result_format : Int32) : Int32
  fun consume_input = PQconsumeInput(conn : PGconn) : Int32
  fun is_busy = PQisBusy(conn : PGconn) : Int32
  fun get_result = PQgetResult(conn : PGconn) : PGresult
  fun result_status = PQresultStatus(res : PGresult) : Int32
  fun result_error = PQresultErrorMessage(res : PGresult) : UInt8*
  fun ntuples = PQntuples(res : PGresult) : Int32
  fun nfields = PQnfields(res : PGresult) : Int32
  fun getvalue = PQgetvalue(res : PGresult, row : Int32, col : Int32) : UInt8*
  fun clear = PQclear(res : PGresult)
end

class PgError < Exception
end

# One connection; one query in flight at a time (the pool lends it to one fiber).
class PgConn
  SELECT_WORLD    = "SELECT id, randomnumber FROM world WHERE id = $1"
  SELECT_FORTUNES = "SELECT id, message FROM fortune"

  # The random ids of the requests this connection serves: one generator per connection, so
  # no two threads share one (a @[ThreadLocal] object would not be seen by the GC).
  getter rng = Random::PCG32.new

  def initialize(url : String)
    @pg = LibPQ.connectdb(url)
    unless LibPQ.status(@pg) == LibPQ::CONNECTION_OK
      message = String.new(LibPQ.error_message(@pg)).strip
      LibPQ.finish(@pg)
      raise PgError.new(message)
    end
    @io = IO::FileDescriptor.new(LibPQ.socket(@pg), blocking: true, close_on_finalize: false)
    @updates = Set(Int32).new
    prepare("world", SELECT_WORLD, 1)
    prepare("fortunes", SELECT_FORTUNES, 0)
  end

  def broken? : Bool
    LibPQ.status(@pg) != LibPQ::CONNECTION_OK
  end

  def close : Nil
    LibPQ.finish(@pg)
  end

  def prepare(name : String, sql : String, n : Int32) : Nil
    check LibPQ.send_prepare(@pg, name, sql, n, nil)
    finish
  end

  def exec(name : String, params : Array(String)) : Array(Array(String))
    values = params.map(&.to_unsafe)
    check LibPQ.send_query_prepared(@pg, name, params.size, values.to_unsafe, nil, nil, 0)
    finish
  end

  # `UPDATE world SET randomnumber = v.r FROM (VALUES ($1::int, $2::int), ...) ...` for n rows,
  # prepared once per row count on this connection.
  def update_statement(n : Int32) : String
    name = "update_#{n}"
    unless @updates.includes?(n)
      values = (0...n).map { |i| "($#{2 * i + 1}::int, $#{2 * i + 2}::int)" }.join(", ")
      prepare(name, "UPDATE world SET randomnumber = v.r FROM (VALUES #{values}) AS v(id, r) " \
                    "WHERE world.id = v.id", 2 * n)
      @updates << n
    end
    name
  end

  private def check(sent : Int32) : Nil
    raise PgError.new(String.new(LibPQ.error_message(@pg)).strip) if sent == 0
  end

  # Waits (fiber-wise) for every result of the query just sent; the rows of the last one.
  private def finish : Array(Array(String))
    rows = [] of Array(String)
    error = nil
    loop do
      until LibPQ.is_busy(@pg) == 0
        @io.wait_readable
        check LibPQ.consume_input(@pg)
      end
      res = LibPQ.get_result(@pg)
      break if res.null?
      status = LibPQ.result_status(res)
      if status == LibPQ::PGRES_TUPLES_OK || status == LibPQ::PGRES_COMMAND_OK
        fields = LibPQ.nfields(res)
        rows = Array.new(LibPQ.ntuples(res)) do |i|
          Array.new(fields) { |j| String.new(LibPQ.getvalue(res, i, j)) }
        end
      else
        error ||= String.new(LibPQ.result_error(res)).strip
      end
      LibPQ.clear(res)
    end
    raise PgError.new(error) if error
    rows
  end
end

# DATABASE_POOL slots in a channel; a slot holds a connection once one was opened in it.
class PgPool
  def initialize(@url : String, size : Int32)
    @slots = Channel(PgConn?).new(size)
    size.times { @slots.send(nil) }
  end

  def use(&)
    conn = @slots.receive
    begin
      conn ||= PgConn.new(@url)
      yield conn
    rescue e
      if conn && conn.broken?
        conn.close
        conn = nil
      end
      raise e
    ensure
      @slots.send(conn)
    end
  end
end

class FortunesPage
  def initialize(@fortunes : Array({Int32, String}))
  end

  ECR.def_to_s "src/fortunes.ecr"
end

module Database
  MAX_QUERIES = 500
  PATHS       = {"/db", "/queries", "/fortunes", "/updates"}

  def self.pool_from_env : PgPool?
    url = ENV["DATABASE_URL"]?
    return nil if url.nil? || url.empty?
    size = Math.max(1, (ENV["DATABASE_POOL"]? || "16").to_i? || 16)
    puts "crystal/http: database pool of #{size} connections"
    PgPool.new(url, size)
  end

  def self.random_id(conn : PgConn) : Int32
    conn.rng.rand(1..10_000)
  end

  # N from `queries`: missing, empty or not a number means 1; clamped to 1..500.
  def self.count(value : String?) : Int32
    (value.try(&.to_i64?) || 1_i64).clamp(1_i64, MAX_QUERIES.to_i64).to_i32
  end

  def self.world(conn : PgConn, id : Int32) : {Int32, Int32}
    rows = conn.exec("world", [id.to_s])
    raise PgError.new("no world row with id #{id}") if rows.size != 1
    {rows[0][0].to_i, rows[0][1].to_i}
  end

  # N rows, one SELECT each, one after the other on the connection.
  def self.worlds(conn : PgConn, n : Int32) : Array({Int32, Int32})
    Array.new(n) { world(conn, random_id(conn)) }
  end

  def self.to_json(w : {Int32, Int32}, json : JSON::Builder)
    json.object do
      json.field "id", w[0]
      json.field "randomNumber", w[1]
    end
  end

  def self.to_json(ws : Array({Int32, Int32})) : String
    JSON.build { |json| json.array { ws.each { |w| to_json(w, json) } } }
  end

  # Reads N rows, gives each a new number and writes them back in one batched UPDATE, ids
  # sorted (concurrent requests lock rows in the same order) and distinct (a row drawn twice
  # gets one new number, shown twice).
  def self.update(conn : PgConn, n : Int32) : Array({Int32, Int32})
    ws = worlds(conn, n)
    numbers = {} of Int32 => Int32
    ws.each { |w| numbers[w[0]] = random_id(conn) }
    changes = numbers.to_a.sort!
    conn.exec(conn.update_statement(changes.size), changes.flat_map { |id, r| [id.to_s, r.to_s] })
    ws.map { |w| {w[0], numbers[w[0]]} }
  end

  def self.fortunes(conn : PgConn) : String
    list = conn.exec("fortunes", [] of String).map { |r| {r[0].to_i, r[1]} }
    list << {0, "Additional fortune added at request time."}
    list.sort_by!(&.[1]) # String#<=> compares bytes: the contract's UTF-8 order
    FortunesPage.new(list).to_s
  end

  # {content type, body} for one of PATHS.
  def self.answer(pool : PgPool, path : String, queries : String?) : {String, String}
    pool.use do |conn|
      case path
      when "/db"
        {"application/json", JSON.build { |json| to_json(world(conn, random_id(conn)), json) }}
      when "/queries" then {"application/json", to_json(worlds(conn, count(queries)))}
      when "/updates" then {"application/json", to_json(update(conn, count(queries)))}
      else                 {"text/html; charset=utf-8", fortunes(conn)}
      end
    end
  end
end
