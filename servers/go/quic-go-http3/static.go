package main

// The static tree (feature static) the way net/http programs serve one: http.FileServerFS over
// STATIC_DIR (ETag-less but Last-Modified and 304, Content-Type by extension, ranges, ".."
// refused), behind klauspost/compress's gzhttp for the text files (gzip only: a client asking
// br and gzip gets gzip). The same handler answers over HTTP/1.1, h2 and HTTP/3.

import (
	"net/http"
	"os"

	"github.com/klauspost/compress/gzhttp"
)

// addStatic serves STATIC_DIR under /static/ when the harness sets it.
func addStatic(mux *http.ServeMux) {
	dir := os.Getenv("STATIC_DIR")
	if dir == "" {
		return
	}
	gzip, err := gzhttp.NewWrapper(gzhttp.MinSize(0))
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(os.DirFS(dir))
	mux.Handle("GET /static/", http.StripPrefix("/static/", gzip(files)))
}
