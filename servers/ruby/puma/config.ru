# frozen_string_literal: true

# serverbench ruby/puma: a plain Rack application served by Puma in cluster mode.
require 'json'
require_relative 'shapes'

# ws-echo: faye-websocket (Debian's ruby-faye-websocket, on ruby-websocket-driver and
# EventMachine). Without it, /ws answers 501 and says why; the other routes are unchanged.
begin
  require 'faye/websocket'
rescue LoadError => e
  warn "ruby/puma: #{e.message}: /ws answers 501 (apt-get install ruby-faye-websocket)"
end

PAYLOAD = Array.new(1 << 20) { |i| (97 + i % 26).chr }.join.freeze

# /pingpong: the request thread hands a reply queue to a worker thread through a
# Thread::Queue and returns what the worker sends back. The worker thread is started lazily
# in each forked Puma worker (threads do not survive fork, and the app is preloaded).
class PingPong
  def initialize(payload)
    @payload = payload
    @lock = Mutex.new
    @pid = nil
  end

  def call
    ensure_worker
    reply = Thread::Queue.new
    @requests << reply
    reply.pop
  end

  private

  def ensure_worker
    return if @pid == Process.pid

    @lock.synchronize do
      next if @pid == Process.pid

      requests = Thread::Queue.new
      Thread.new { loop { requests.pop << @payload } }
      @requests = requests
      @pid = Process.pid
    end
  end
end

# /ws: a Rack hijack handed to faye-websocket, whose EventMachine reactor thread (one per Puma
# worker, started on the first upgrade) then reads and writes the socket; no Puma thread is held.
# Every message goes back as it came: a text message arrives as a String and is sent as text, a
# binary one as an Array of bytes and is sent as binary. No extensions are offered (so no
# permessage-deflate), no server pings (ping: nil), messages up to 16 MiB; faye has no idle
# timeout. The library answers pings, closes with the same code and reassembles fragments.
module WebSocketEcho
  OPTIONS = { ping: nil, max_length: 16 << 20 }.freeze
  UPGRADE_REQUIRED = [426, { 'content-type' => 'text/plain', 'upgrade' => 'websocket' }, ['Upgrade Required']].freeze
  UNAVAILABLE = [501, { 'content-type' => 'text/plain' }, ['faye-websocket is not installed']].freeze

  def self.call(env)
    return UNAVAILABLE unless defined?(Faye::WebSocket)
    return UPGRADE_REQUIRED unless Faye::WebSocket.websocket?(env)

    ws = Faye::WebSocket.new(env, nil, OPTIONS)
    ws.on(:message) { |event| ws.send(event.data) }
    ws.rack_response
  end
end

# The router: a Hash lookup on the exact path.
class App
  PLAIN = 'text/plain'
  OCTETS = 'application/octet-stream'
  STATIC = {
    '/hello' => [PLAIN, 'Hello World!'],
    '/hey' => [PLAIN, 'Hey!'],
    '/hell' => [PLAIN, 'Hell!'],
    '/about' => ['text/html', '<html><body>About page</body></html>'],
    '/payload' => [OCTETS, PAYLOAD]
  }.freeze

  def initialize
    @pingpong = PingPong.new(PAYLOAD)
    @shapes = Shapes.new
    # The database routes only with DATABASE_URL (db.rb; without it, pg is not even loaded).
    url = ENV.fetch('DATABASE_URL', '')
    return if url.empty?

    require_relative 'db'
    @db = Database.new(url)
  end

  def call(env)
    path = env['PATH_INFO']
    # baseline, upload, compression, static (shapes.rb).
    shape = @shapes.call(env)
    return shape if shape

    if (type, body = STATIC[path])
      respond(200, type, body)
    elsif path == '/json'
      respond(200, 'application/json', JSON.generate({ message: 'Hello, World!' }))
    elsif path == '/pingpong'
      respond(200, OCTETS, @pingpong.call)
    elsif path == '/ws'
      WebSocketEcho.call(env)
    elsif @db && Database::PATHS.include?(path)
      respond(*@db.call(path, env['QUERY_STRING']))
    else
      respond(404, PLAIN, 'Not Found')
    end
  end

  private

  def respond(status, type, body)
    [status, { 'content-type' => type, 'content-length' => body.bytesize.to_s }, [body]]
  end
end

run App.new
