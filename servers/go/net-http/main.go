// Command go-net-http is serverbench's go/net-http server: net/http with a ServeMux, a
// /pingpong handler that goes through a worker goroutine over channels (as the original
// experiment did), a TCP echo server written with net, and a WebSocket echo on /ws with
// gorilla/websocket (ws.go). GOMAXPROCS follows WORKERS.
package main

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
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

func text(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, body)
	}
}

func octets(w http.ResponseWriter, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

func newMux(payload []byte, pings chan<- pingRequest) *http.ServeMux {
	mux := http.NewServeMux()
	// "/" matches every path no other pattern does: the contract's plain 404.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "Not Found")
	})
	mux.Handle("/hello", text("Hello World!"))
	mux.Handle("/hey", text("Hey!"))
	mux.Handle("/hell", text("Hell!"))
	mux.HandleFunc("/about", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>About page</body></html>")
	})
	// gzip when asked (compression, shapes.go).
	mux.Handle("/json", compressed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := json.Marshal(message{Message: "Hello, World!"})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})))
	mux.HandleFunc("/payload", func(w http.ResponseWriter, r *http.Request) { octets(w, payload) })
	mux.HandleFunc("/ws", wsEcho)
	mux.HandleFunc("/pingpong", func(w http.ResponseWriter, r *http.Request) {
		reply := make(chan []byte, 1)
		pings <- pingRequest{reply: reply}
		octets(w, <-reply)
	})
	addShapeRoutes(mux)
	return mux
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

// serveTLS starts HTTPS (ALPN h2 and http/1.1) on TLS_PORT with the PEM files named by TLS_CERT
// and TLS_KEY, when TLS_PORT is set, and says what it serves. crypto/tls defaults: TLS 1.2 and
// 1.3, session tickets on (keys made at start and rotated), no session-id cache.
func serveTLS(server *http.Server, host string) string {
	port := os.Getenv("TLS_PORT")
	if port == "" {
		return "no TLS (TLS_PORT unset)"
	}
	cert, key := os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY")
	if cert == "" || key == "" {
		log.Fatalf("go/net-http: TLS_PORT=%s needs TLS_CERT and TLS_KEY (got %q, %q)", port, cert, key)
	}
	// Load the pair now, so a bad file stops the server before it reports ready.
	if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
		log.Fatalf("go/net-http: TLS_CERT %s / TLS_KEY %s: %v", cert, key, err)
	}
	addr := net.JoinHostPort(host, port)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("go/net-http: https listen on %s: %v", addr, err)
	}
	go func() { log.Fatal(server.ServeTLS(ln, cert, key)) }()
	return "https (h2, http/1.1) on " + addr
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
		log.Fatalf("go/net-http: echo listen on %s: %v", echoAddr, err)
	}
	go serveEcho(echoLn)

	httpLn, err := net.Listen("tcp", httpAddr)
	if err != nil {
		log.Fatalf("go/net-http: http listen on %s: %v", httpAddr, err)
	}
	// One server for both listeners: HTTP/1.1 and h2c on the plain one, HTTP/1.1 and h2 (by
	// ALPN) on the TLS one.
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	mux := newMux(payload, pings)
	dbNote := "no database (DATABASE_URL unset)"
	if pool := openPool(); pool != nil {
		addDatabaseRoutes(mux, pool)
		dbNote = "database pool of " + strconv.Itoa(int(pool.Config().MaxConns))
	}
	server := &http.Server{Handler: mux, Protocols: &protocols}
	tlsAddr := serveTLS(server, host)
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		<-sig
		log.Print("go/net-http: SIGTERM, exiting")
		os.Exit(0)
	}()
	log.Printf("go/net-http: http and h2c on %s, %s, echo on %s, GOMAXPROCS=%d, %s", httpAddr, tlsAddr, echoAddr, workers, dbNote)
	log.Fatal(server.Serve(httpLn))
}
