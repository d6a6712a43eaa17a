# frozen_string_literal: true

# The HTTP shapes of issue 32 (spec/contract.md) the way Rack applications do them:
# rack.input for the bodies (the upload read 64 KiB at a time and counted; Puma itself keeps a
# body over 112 KiB in a temporary file, not in memory), Rack::Deflater for /json (gzip), and
# Rack::Files behind Rack::ConditionalGet and Rack::Deflater for STATIC_DIR.
require 'json'
require 'rack'

class Shapes
  PLAIN = 'text/plain'
  CHUNK = 64 * 1024

  def initialize
    json = ->(_env) { text(200, 'application/json', JSON.generate({ message: 'Hello, World!' })) }
    @json = Rack::Deflater.new(json)
    dir = ENV.fetch('STATIC_DIR', '')
    @files = Rack::Deflater.new(Rack::ConditionalGet.new(Rack::Files.new(dir))) unless dir.empty?
  end

  # The answer to a shape, or nil when the request is not one.
  def call(env)
    path = env['PATH_INFO']
    if path == '/baseline'
      baseline(env)
    elsif path == '/upload' && env['REQUEST_METHOD'] == 'POST'
      text(200, PLAIN, count(env['rack.input']).to_s)
    elsif path == '/json' && env['HTTP_ACCEPT_ENCODING']
      @json.call(env)
    elsif @files && path.start_with?('/static/')
      @files.call(env.merge('SCRIPT_NAME' => '/static', 'PATH_INFO' => path.delete_prefix('/static')))
    end
  end

  private

  def baseline(env)
    q = Rack::Utils.parse_query(env['QUERY_STRING'])
    sum = q['a'].to_i + q['b'].to_i
    sum += env['rack.input'].read.to_s.strip.to_i if env['REQUEST_METHOD'] == 'POST'
    text(200, PLAIN, sum.to_s)
  end

  def count(input)
    n = 0
    buf = +''
    n += buf.bytesize while input.read(CHUNK, buf)
    n
  end

  def text(status, type, body)
    [status, { 'content-type' => type, 'content-length' => body.bytesize.to_s }, [body]]
  end
end
