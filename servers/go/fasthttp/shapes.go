package main

// The HTTP shapes of issue 32 (spec/contract.md) the way fasthttp programs do them: bodies
// streamed (Server.StreamRequestBody: a body larger than MaxRequestBodySize reaches the
// handler as ctx.RequestBodyStream(), read through a 32 KiB buffer and counted; fasthttp
// answers Expect: 100-continue itself), /json compressed with fasthttp's own encoders (its
// CompressHandler skips bodies under 200 bytes, and /json is 27), fasthttp.FS for STATIC_DIR
// (on-the-fly br/gzip/zstd cached in a folder of its own, Last-Modified and 304).

import (
	"bytes"
	"io"
	"log"
	"mime"
	"os"
	"path/filepath"
	"strconv"

	"github.com/valyala/fasthttp"
)

func plainInt(ctx *fasthttp.RequestCtx, n int64) {
	ctx.SetContentType("text/plain")
	ctx.SetBodyString(strconv.FormatInt(n, 10))
}

func queryInt(ctx *fasthttp.RequestCtx, name string) int64 {
	n, _ := strconv.ParseInt(string(ctx.QueryArgs().Peek(name)), 10, 64)
	return n
}

// bodyReader is the request body, streamed when it was too large to buffer.
func bodyReader(ctx *fasthttp.RequestCtx) io.Reader {
	if s := ctx.RequestBodyStream(); s != nil {
		return s
	}
	return bytes.NewReader(ctx.PostBody())
}

// compressedJSON answers body in the first coding of Accept-Encoding fasthttp makes; false when
// none was asked.
func compressedJSON(ctx *fasthttp.RequestCtx, body []byte) bool {
	var out []byte
	var coding string
	switch {
	case ctx.Request.Header.HasAcceptEncoding("br"):
		out, coding = fasthttp.AppendBrotliBytesLevel(nil, body, fasthttp.CompressBrotliDefaultCompression), "br"
	case ctx.Request.Header.HasAcceptEncoding("gzip"):
		out, coding = fasthttp.AppendGzipBytesLevel(nil, body, fasthttp.CompressDefaultCompression), "gzip"
	case ctx.Request.Header.HasAcceptEncoding("zstd"):
		out, coding = fasthttp.AppendZstdBytesLevel(nil, body, fasthttp.CompressZstdDefault), "zstd"
	case ctx.Request.Header.HasAcceptEncoding("deflate"):
		out, coding = fasthttp.AppendDeflateBytesLevel(nil, body, fasthttp.CompressDefaultCompression), "deflate"
	default:
		return false
	}
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Content-Encoding", coding)
	ctx.Response.Header.Set("Vary", "Accept-Encoding")
	ctx.SetBody(out)
	return true
}

// shapeHandler answers baseline, upload and /static/ (true when it did).
func shapeHandler() func(*fasthttp.RequestCtx) bool {
	files := staticFiles()
	return func(ctx *fasthttp.RequestCtx) bool {
		path := ctx.Path()
		switch {
		case string(path) == "/baseline":
			sum := queryInt(ctx, "a") + queryInt(ctx, "b")
			if ctx.IsPost() {
				body, _ := io.ReadAll(io.LimitReader(bodyReader(ctx), 64))
				n, _ := strconv.ParseInt(string(bytes.TrimSpace(body)), 10, 64)
				sum += n
			}
			plainInt(ctx, sum)
		case string(path) == "/upload" && ctx.IsPost():
			n, err := io.CopyBuffer(io.Discard, bodyReader(ctx), make([]byte, 32<<10))
			if err != nil {
				ctx.Error(err.Error(), fasthttp.StatusBadRequest)
				return true
			}
			plainInt(ctx, n)
		case files != nil && bytes.HasPrefix(path, []byte("/static/")):
			files(ctx)
		default:
			return false
		}
		return true
	}
}

func staticFiles() fasthttp.RequestHandler {
	dir := os.Getenv("STATIC_DIR")
	if dir == "" {
		return nil
	}
	// Go's built-in table lacks .woff2 where /etc/mime.types is missing.
	mime.AddExtensionType(".woff2", "font/woff2")
	cache := filepath.Join(os.TempDir(), "go-fasthttp-static-"+strconv.Itoa(os.Getpid()))
	if err := os.MkdirAll(cache, 0o755); err != nil {
		log.Fatalf("go/fasthttp: compressed-file cache %s: %v", cache, err)
	}
	fs := &fasthttp.FS{
		Root:           dir,
		Compress:       true,
		CompressBrotli: true,
		CompressRoot:   cache,
		PathRewrite:    fasthttp.NewPathSlashesStripper(1),
	}
	return fs.NewRequestHandler()
}
