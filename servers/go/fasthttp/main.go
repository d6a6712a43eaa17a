// Command go-fasthttp is serverbench's go/fasthttp server: valyala/fasthttp with a switch on
// the path, a /pingpong handler that goes through a worker goroutine over channels, and a
// TCP echo server written with net, and a WebSocket echo on /ws with fasthttp/websocket (ws.go).
// GOMAXPROCS follows WORKERS.
//
// When TLS_PORT is set, the same server also serves HTTPS (HTTP/1.1) there with crypto/tls.
// fasthttp has no HTTP/2 (neither h2 nor h2c), so ALPN offers http/1.1 only.
package main

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"

	"github.com/valyala/fasthttp"
)

const payloadLen = 1 << 20

// pingRequest is what the /pingpong handler sends to the worker: where to send the reply.
type pingRequest struct {
	reply chan []byte
}

type message struct {
	Message string `json:"message"`
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// buildPayload returns the contract's 1 MiB body: byte i is 'a' + i mod 26.
func buildPayload() []byte {
	b := make([]byte, payloadLen)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

// pingWorker answers every request it receives with the payload.
func pingWorker(requests <-chan pingRequest, payload []byte) {
	for req := range requests {
		req.reply <- payload
	}
}

func handler(payload []byte, pings chan<- pingRequest, database func(*fasthttp.RequestCtx) bool) fasthttp.RequestHandler {
	shapes := shapeHandler()
	return func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/hello":
			ctx.SetContentType("text/plain")
			ctx.SetBodyString("Hello World!")
		case "/hey":
			ctx.SetContentType("text/plain")
			ctx.SetBodyString("Hey!")
		case "/hell":
			ctx.SetContentType("text/plain")
			ctx.SetBodyString("Hell!")
		case "/about":
			ctx.SetContentType("text/html")
			ctx.SetBodyString("<html><body>About page</body></html>")
		case "/json":
			body, err := json.Marshal(message{Message: "Hello, World!"})
			if err != nil {
				ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
				return
			}
			if compressedJSON(ctx, body) { // compression (shapes.go)
				return
			}
			ctx.SetContentType("application/json")
			ctx.SetBody(body)
		case "/payload":
			ctx.SetContentType("application/octet-stream")
			// The payload is never modified, so the response may point at it.
			ctx.Response.SetBodyRaw(payload)
		case "/ws":
			wsEcho(ctx)
		case "/pingpong":
			reply := make(chan []byte, 1)
			pings <- pingRequest{reply: reply}
			ctx.SetContentType("application/octet-stream")
			ctx.Response.SetBodyRaw(<-reply)
		default:
			if shapes(ctx) { // baseline, upload, static (shapes.go)
				return
			}
			if database != nil && database(ctx) {
				return
			}
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			ctx.SetContentType("text/plain")
			ctx.SetBodyString("Not Found")
		}
	}
}

func serveEcho(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			log.Printf("echo accept: %v", err)
			continue
		}
		go func() {
			defer conn.Close()
			buf := make([]byte, 64*1024)
			io.CopyBuffer(conn, conn, buf)
		}()
	}
}

// serveTLS starts HTTPS on TLS_PORT with the PEM files named by TLS_CERT and TLS_KEY, when
// TLS_PORT is set, and says what it serves. crypto/tls defaults (TLS 1.2 and 1.3, session
// tickets, no session-id cache) with ALPN http/1.1, the only protocol fasthttp speaks.
func serveTLS(server *fasthttp.Server, host string) string {
	port := os.Getenv("TLS_PORT")
	if port == "" {
		return "no TLS (TLS_PORT unset)"
	}
	cert, key := os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY")
	if cert == "" || key == "" {
		log.Fatalf("go/fasthttp: TLS_PORT=%s needs TLS_CERT and TLS_KEY (got %q, %q)", port, cert, key)
	}
	server.TLSConfig = &tls.Config{NextProtos: []string{"http/1.1"}}
	// Load the pair now, so a bad file stops the server before it reports ready.
	if err := server.AppendCert(cert, key); err != nil {
		log.Fatalf("go/fasthttp: TLS_CERT %s / TLS_KEY %s: %v", cert, key, err)
	}
	addr := net.JoinHostPort(host, port)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("go/fasthttp: https listen on %s: %v", addr, err)
	}
	// No file names: ServeTLS uses the certificate appended above.
	go func() { log.Fatal(server.ServeTLS(ln, "", "")) }()
	return "https (http/1.1) on " + addr
}

func main() {
	workers, err := strconv.Atoi(envOr("WORKERS", "1"))
	if err != nil || workers < 1 {
		workers = 1
	}
	runtime.GOMAXPROCS(workers)
	host := envOr("HOST", "127.0.0.1")
	httpAddr := net.JoinHostPort(host, envOr("PORT", "8080"))
	echoAddr := net.JoinHostPort(host, envOr("ECHO_PORT", "9000"))

	payload := buildPayload()
	pings := make(chan pingRequest, 1024)
	go pingWorker(pings, payload)

	echoLn, err := net.Listen("tcp", echoAddr)
	if err != nil {
		log.Fatalf("go/fasthttp: echo listen on %s: %v", echoAddr, err)
	}
	go serveEcho(echoLn)

	httpLn, err := net.Listen("tcp", httpAddr)
	if err != nil {
		log.Fatalf("go/fasthttp: http listen on %s: %v", httpAddr, err)
	}
	var database func(*fasthttp.RequestCtx) bool
	dbNote := "no database (DATABASE_URL unset)"
	if pool := openPool(); pool != nil {
		database = databaseHandler(pool)
		dbNote = "database pool of " + strconv.Itoa(int(pool.Config().MaxConns))
	}
	server := &fasthttp.Server{
		Handler: handler(payload, pings, database),
		Name:    "go-fasthttp",
		// The default 4 KiB read buffer also caps the request head: an 8 KiB Cookie got
		// 431. 16 KiB is what Node and most proxies accept.
		ReadBufferSize: 16 << 10,
		// Bodies over MaxRequestBodySize (4 MiB) reach the handler as a stream (upload).
		StreamRequestBody: true,
	}
	tlsAddr := serveTLS(server, host)
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		<-sig
		log.Print("go/fasthttp: SIGTERM, exiting")
		os.Exit(0)
	}()
	log.Printf("go/fasthttp: http on %s, %s, echo on %s, GOMAXPROCS=%d, %s", httpAddr, tlsAddr, echoAddr, workers, dbNote)
	log.Fatal(server.Serve(httpLn))
}
