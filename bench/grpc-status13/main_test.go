package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
)

// A Sum call over h2c gets HTTP 200, application/grpc and grpc-status 13 with no message.
func TestEveryCallIsAnsweredWithStatus200AndGrpcStatus13(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer()
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	body := []byte{0, 0, 0, 0, 4, 0x08, 0x14, 0x10, 0x16}
	req, err := http.NewRequest("POST", "http://"+ln.Addr().String()+"/serverbench.Bench/Sum", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(resp.Body)
	if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
		t.Fatalf("got %s %d, want HTTP/2 200", resp.Proto, resp.StatusCode)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/grpc" {
		t.Errorf("content-type %q, want application/grpc", got)
	}
	if got := resp.Header.Get("Grpc-Status"); got != "13" {
		t.Errorf("grpc-status %q in the headers (trailers-only), want 13", got)
	}
	if len(reply) != 0 {
		t.Errorf("a reply of %d bytes, want none", len(reply))
	}
}
