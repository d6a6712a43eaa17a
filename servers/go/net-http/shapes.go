package main

// The HTTP shapes of issue 32 (spec/contract.md) the way net/http programs do them: the
// request body read as a stream (io.Copy into a counter: the upload is never held; net/http
// answers Expect: 100-continue when the handler first reads the body), gzip from
// klauspost/compress's gzhttp (the compression middleware Go services use; gzip only, so br,
// zstd and deflate are answered identity, which the contract allows), http.FileServer for
// STATIC_DIR.

import (
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// compressed gzips a handler's answers when the client asks, from the first byte (the
// contract's /json is 27 bytes, under gzhttp's 1 KiB default).
var compressed = func() func(http.Handler) http.HandlerFunc {
	wrap, err := gzhttp.NewWrapper(gzhttp.MinSize(0))
	if err != nil {
		panic(err)
	}
	return wrap
}()

func intParam(r *http.Request, name string) int64 {
	n, _ := strconv.ParseInt(r.URL.Query().Get(name), 10, 64)
	return n
}

func plain(w http.ResponseWriter, n int64) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, strconv.FormatInt(n, 10))
}

func addShapeRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /baseline", func(w http.ResponseWriter, r *http.Request) {
		plain(w, intParam(r, "a")+intParam(r, "b"))
	})
	mux.HandleFunc("POST /baseline", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
		plain(w, intParam(r, "a")+intParam(r, "b")+n)
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		plain(w, n)
	})
	if dir := os.Getenv("STATIC_DIR"); dir != "" {
		files := http.FileServerFS(os.DirFS(dir))
		mux.Handle("GET /static/", http.StripPrefix("/static/", compressed(files)))
	}
}
