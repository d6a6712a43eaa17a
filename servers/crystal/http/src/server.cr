# serverbench crystal/http: the standard library's HTTP::Server, built with -Dpreview_mt so the
# connection fibers run on CRYSTAL_WORKERS threads; a TCP echo on ECHO_PORT.
require "http/server"
require "json"
require "./db"
require "./shapes"

PAYLOAD_SIZE = 1_048_576
PAYLOAD      = Bytes.new(PAYLOAD_SIZE) { |i| ('a'.ord + i % 26).to_u8 }

def env(name : String, default : String) : String
  value = ENV[name]?
  value.nil? || value.empty? ? default : value
end

# /pingpong: a handler sends a reply channel to the worker fiber, which answers with the payload.
PINGPONG = Channel(Channel(Bytes)).new(128)
spawn(name: "pingpong-worker") do
  loop { PINGPONG.receive.send(PAYLOAD) }
end

def reply(ctx : HTTP::Server::Context, type : String, body : String | Bytes, status = 200)
  ctx.response.status_code = status
  ctx.response.content_type = type
  ctx.response.content_length = body.bytesize
  ctx.response.write(body.is_a?(String) ? body.to_slice : body)
end

# The database routes only with DATABASE_URL (see db.cr).
DB_POOL = Database.pool_from_env

# ws-echo: the standard library's WebSocket handler; every message is sent back as it came
# (on_message: text, on_binary: binary). The library answers pings itself; a peer's close is
# answered with the same code (the library's own reply after on_close would carry none).
# No compression (the library has none), no idle timeout, no message size limit.
WS_ECHO = HTTP::WebSocketHandler.new do |ws, _ctx|
  ws.on_message { |text| ws.send(text) }
  ws.on_binary { |bytes| ws.send(bytes) }
  ws.on_close do |code, _reason|
    if code.no_status_received? || code.abnormal_closure?
      ws.close
    else
      ws.close(code)
    end
  end
end

# baseline, upload, compression, static (shapes.cr) first; the contract's routes behind it.
shapes = ShapesHandler.new(ENV["STATIC_DIR"]?.presence)
server = HTTP::Server.new([shapes] of HTTP::Handler) do |ctx|
  case ctx.request.path
  when "/ws"
    # A GET /ws without Upgrade is refused with 426; an upgrade goes to the WebSocket handler.
    if ctx.request.headers["Upgrade"]?.try(&.compare("websocket", case_insensitive: true)) == 0
      WS_ECHO.call(ctx)
    else
      ctx.response.headers["Upgrade"] = "websocket"
      reply(ctx, "text/plain", "Upgrade Required", 426)
    end
  when "/hello" then reply(ctx, "text/plain", "Hello World!")
  when "/hey"   then reply(ctx, "text/plain", "Hey!")
  when "/hell"  then reply(ctx, "text/plain", "Hell!")
  when "/about" then reply(ctx, "text/html", "<html><body>About page</body></html>")
  when "/json"  then reply(ctx, "application/json", {message: "Hello, World!"}.to_json)
  when "/payload"
    reply(ctx, "application/octet-stream", PAYLOAD)
  when "/pingpong"
    back = Channel(Bytes).new
    PINGPONG.send(back)
    reply(ctx, "application/octet-stream", back.receive)
  when "/db", "/queries", "/fortunes", "/updates"
    if pool = DB_POOL
      begin
        type, body = Database.answer(pool, ctx.request.path, ctx.request.query_params["queries"]?)
        reply(ctx, type, body)
      rescue e : PgError | IO::Error
        STDERR.puts "crystal/http: database error on #{ctx.request.path}: #{e.message}"
        reply(ctx, "text/plain", "database error", 500)
      end
    else
      reply(ctx, "text/plain", "Not Found", 404)
    end
  else reply(ctx, "text/plain", "Not Found", 404)
  end
end

def echo(client : TCPSocket)
  buf = Bytes.new(65536)
  while (n = client.read(buf)) > 0
    client.write(buf[0, n])
    client.flush
  end
rescue IO::Error
ensure
  client.close
end

host = env("HOST", "127.0.0.1")
port = env("PORT", "8080").to_i
echo_port = env("ECHO_PORT", "9000").to_i

echo_server = TCPServer.new(host, echo_port, backlog: 1024)
spawn(name: "echo-acceptor") do
  while client = echo_server.accept?
    client.sync = true
    client.tcp_nodelay = true
    spawn echo(client)
  end
end

Signal::TERM.trap { exit 0 }
server.bind_tcp(host, port)
puts "crystal/http: http on #{host}:#{port}, echo on #{host}:#{echo_port}, " \
     "CRYSTAL_WORKERS=#{ENV["CRYSTAL_WORKERS"]? || "default"}"
server.listen
