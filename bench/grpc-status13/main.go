// grpc-status13: a bench-only server (bench/grpc-vs-peers.sh's second part, not a catalog
// server) that fails every gRPC call: each request, whatever its path, is read to its end and
// answered with HTTP 200, `content-type: application/grpc` and `grpc-status: 13` (INTERNAL) in a
// trailers-only response, the form gRPC libraries send for a call that fails before any reply
// message. A tool that counts HTTP 200 as success scores it 100%; one that reads the status,
// 0%.
//
// The standard library's HTTP/2 server with unencrypted HTTP/2 (prior knowledge, Go >= 1.24):
// no dependency, so go.mod needs no go.sum. `go test` in this folder checks the answer.
//
// Usage: PORT=50051 grpc-status13   (binds 127.0.0.1:PORT; ends on SIGTERM or SIGINT)
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func fail(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	h.Set("Grpc-Status", "13")
	h.Set("Grpc-Message", "always fails")
	w.WriteHeader(http.StatusOK)
}

// newServer is the server on h2c with prior knowledge alone (no HTTP/1.1).
func newServer() *http.Server {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	return &http.Server{Handler: http.HandlerFunc(fail), Protocols: &protocols}
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		fmt.Fprintln(os.Stderr, "grpc-status13: PORT is not set")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "grpc-status13: listening on 127.0.0.1:%s: %v\n", port, err)
		os.Exit(1)
	}
	srv := newServer()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintf(os.Stderr, "grpc-status13: %v\n", err)
		os.Exit(1)
	}
}
