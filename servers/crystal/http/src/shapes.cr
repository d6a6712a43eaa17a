# The HTTP shapes of issue 32 (spec/contract.md) the way Crystal's standard library does them:
# the request body as an IO (the upload read 64 KiB at a time and counted, never held; the
# server answers Expect: 100-continue when the body is first read), /json compressed with
# Compress::Gzip / Compress::Deflate, and HTTP::StaticFileHandler behind HTTP::CompressHandler
# for STATIC_DIR.
require "http/server"
require "compress/gzip"
require "compress/deflate"

class ShapesHandler
  include HTTP::Handler

  @files : HTTP::Handler?

  def initialize(@static_dir : String?)
    @files = if dir = @static_dir
               compress = HTTP::CompressHandler.new
               compress.next = HTTP::StaticFileHandler.new(dir, fallthrough: false, directory_listing: false)
               compress
             end
  end

  def call(context : HTTP::Server::Context)
    ctx = context
    req = ctx.request
    path = req.path
    if path == "/baseline"
      sum = int(req.query_params["a"]?) + int(req.query_params["b"]?)
      sum += int(req.body.try(&.gets_to_end).try(&.strip)) if req.method == "POST"
      plain(ctx, sum)
    elsif path == "/upload" && req.method == "POST"
      plain(ctx, count(req.body))
    elsif path == "/json" && (accept = req.headers["Accept-Encoding"]?)
      json(ctx, accept)
    elsif (files = @files) && path.starts_with?("/static/")
      req.path = path.lchop("/static")
      files.call(ctx)
    else
      call_next(ctx)
    end
  end

  private def int(s : String?) : Int64
    s.try(&.to_i64?) || 0_i64
  end

  private def count(io : IO?) : Int64
    return 0_i64 unless io
    buf = Bytes.new(65536)
    n = 0_i64
    while (got = io.read(buf)) > 0
      n += got
    end
    n
  end

  private def plain(ctx, n)
    reply(ctx, "text/plain", n.to_s)
  end

  private def json(ctx, accept : String)
    body = {message: "Hello, World!"}.to_json
    coding = accept.split(',').map(&.split(';').first.strip.downcase).find { |t| t == "gzip" || t == "deflate" }
    ctx.response.headers["Vary"] = "Accept-Encoding"
    return reply(ctx, "application/json", body) unless coding
    packed = IO::Memory.new
    if coding == "gzip"
      Compress::Gzip::Writer.open(packed) { |w| w.print(body) }
    else
      Compress::Deflate::Writer.open(packed) { |w| w.print(body) }
    end
    ctx.response.headers["Content-Encoding"] = coding
    reply(ctx, "application/json", packed.to_slice)
  end
end
