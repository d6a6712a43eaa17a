// Command go-quic-go-http3 is serverbench's go/quic-go-http3 server: one net/http ServeMux served
// three ways, HTTP/1.1 on PORT, HTTP/1.1 and h2 over TLS on TLS_PORT (announcing HTTP/3 with
// quic-go's Alt-Svc header), and HTTP/3 on the UDP port H3_PORT with quic-go's http3.Server,
// the same certificate on both. GOMAXPROCS follows WORKERS.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

const payloadLen = 1 << 20

// maxStreams is how many concurrent request streams a client may open on one QUIC connection
// (quic-go's default is 100: a load with -m above it would wait for stream credit).
const maxStreams = 1024

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

func text(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func newMux(payload []byte) *http.ServeMux {
	mux := http.NewServeMux()
	// "/" matches every path no other pattern does: the contract's plain 404.
	mux.Handle("/", text(http.StatusNotFound, "text/plain", "Not Found"))
	mux.Handle("/hello", text(http.StatusOK, "text/plain", "Hello World!"))
	mux.Handle("/hey", text(http.StatusOK, "text/plain", "Hey!"))
	mux.Handle("/hell", text(http.StatusOK, "text/plain", "Hell!"))
	mux.Handle("/about", text(http.StatusOK, "text/html", "<html><body>About page</body></html>"))
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		body, err := json.Marshal(message{Message: "Hello, World!"})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	mux.HandleFunc("/payload", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Length", strconv.Itoa(len(payload)))
		w.Write(payload)
	})
	addStatic(mux)
	return mux
}

// altSvc adds quic-go's Alt-Svc header (h3=":H3_PORT"; ma=2592000) to every answer on TLS_PORT.
func altSvc(h3 *http3.Server, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h3.SetQUICHeaders(w.Header()); err != nil {
			log.Printf("go/quic-go-http3: Alt-Svc: %v", err)
		}
		next.ServeHTTP(w, r)
	})
}

// loadTLS reads TLS_CERT and TLS_KEY when TLS_PORT or H3_PORT is set, so a bad file stops the
// server before it reports ready.
func loadTLS(tlsPort, h3Port string) *tls.Config {
	if tlsPort == "" && h3Port == "" {
		return nil
	}
	cert, key := os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY")
	if cert == "" || key == "" {
		log.Fatalf("go/quic-go-http3: TLS_PORT=%q H3_PORT=%q need TLS_CERT and TLS_KEY (got %q, %q)",
			tlsPort, h3Port, cert, key)
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		log.Fatalf("go/quic-go-http3: TLS_CERT %s / TLS_KEY %s: %v", cert, key, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}}
}

// serveH3 starts HTTP/3 on the UDP address host:H3_PORT. The listener is bound before this
// returns, so the Alt-Svc header names its port from the first answer on.
func serveH3(h3 *http3.Server, addr string) {
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		log.Fatalf("go/quic-go-http3: h3 listen on udp %s: %v", addr, err)
	}
	go func() {
		if err := h3.Serve(conn); err != nil && err != http.ErrServerClosed {
			log.Fatalf("go/quic-go-http3: h3 on udp %s: %v", addr, err)
		}
	}()
}

func listen(addr, what string) net.Listener {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("go/quic-go-http3: %s listen on %s: %v", what, addr, err)
	}
	return ln
}

func main() {
	workers, err := strconv.Atoi(envOr("WORKERS", "1"))
	if err != nil || workers < 1 {
		workers = 1
	}
	runtime.GOMAXPROCS(workers)
	host := envOr("HOST", "127.0.0.1")
	httpAddr := net.JoinHostPort(host, envOr("PORT", "8080"))
	tlsPort, h3Port := os.Getenv("TLS_PORT"), os.Getenv("H3_PORT")
	tlsConf := loadTLS(tlsPort, h3Port)
	mux := newMux(buildPayload())

	h3 := &http3.Server{
		Handler:    mux,
		QUICConfig: &quic.Config{MaxIncomingStreams: maxStreams, Allow0RTT: true},
	}
	notes := "no h3 (H3_PORT unset)"
	if h3Port != "" {
		// ALPN h3 on a copy of the TLS_PORT certificate's config (TLS 1.3 only, as QUIC is).
		h3.TLSConfig = http3.ConfigureTLSConfig(tlsConf.Clone())
		h3Addr := net.JoinHostPort(host, h3Port)
		serveH3(h3, h3Addr)
		notes = "h3 on udp " + h3Addr
	}
	if tlsPort != "" {
		tlsAddr := net.JoinHostPort(host, tlsPort)
		var handler http.Handler = mux
		if h3Port != "" {
			handler = altSvc(h3, mux)
		}
		// ServeTLS with the certificate already in TLSConfig: net/http adds ALPN h2 and
		// http/1.1 (crypto/tls defaults: TLS 1.2 and 1.3, session tickets on).
		server := &http.Server{Handler: handler, TLSConfig: tlsConf.Clone()}
		ln := listen(tlsAddr, "https")
		go func() { log.Fatal(server.ServeTLS(ln, "", "")) }()
		notes += ", https (h2, http/1.1) on " + tlsAddr
	}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		<-sig
		// GOAWAY to every HTTP/3 connection, up to 1 s for its requests to finish, then
		// CONNECTION_CLOSE with H3_NO_ERROR (Shutdown closes what is left when ctx ends).
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		h3.Shutdown(ctx)
		log.Print("go/quic-go-http3: SIGTERM, exiting")
		os.Exit(0)
	}()
	log.Printf("go/quic-go-http3: http on %s, %s, GOMAXPROCS=%d", httpAddr, notes, workers)
	log.Fatal((&http.Server{Handler: mux}).Serve(listen(httpAddr, "http")))
}
