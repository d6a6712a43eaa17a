// go/grpc-go: the serverbench.Bench service (spec/serverbench.proto) on google.golang.org/grpc,
// h2c on PORT and, when TLS_PORT is set, TLS with ALPN h2 there.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	_ "google.golang.org/grpc/encoding/gzip" // decodes requests sent with grpc-encoding: gzip
	"google.golang.org/grpc/status"

	pb "serverbench/servers/go/grpc-go/pb"
)

type bench struct {
	pb.UnimplementedBenchServer
}

func (bench) Sum(_ context.Context, r *pb.SumRequest) (*pb.SumReply, error) {
	return &pb.SumReply{Result: r.A + r.B}, nil
}

func (bench) Echo(_ context.Context, p *pb.Payload) (*pb.Payload, error) {
	return p, nil
}

// ServerStream sends n chunks; with delay_ms it waits before each one, and gives up with
// DEADLINE_EXCEEDED (or CANCELLED) as soon as the call's context ends.
func (bench) ServerStream(c *pb.Count, s grpc.ServerStreamingServer[pb.Chunk]) error {
	ctx := s.Context()
	delay := time.Duration(c.DelayMs) * time.Millisecond
	for i := int32(0); i < c.N; i++ {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return status.FromContextError(ctx.Err()).Err()
			case <-t.C:
			}
		}
		chunk := &pb.Chunk{Seq: i, Data: bytes.Repeat([]byte{byte(i)}, int(c.Size))}
		if err := s.Send(chunk); err != nil {
			return err
		}
	}
	return nil
}

// ClientStream reads chunks until the client ends its side (io.EOF), then answers once with
// their number and their data bytes in total.
func (bench) ClientStream(s grpc.ClientStreamingServer[pb.Chunk, pb.Count]) error {
	var n, size int32
	for {
		c, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return s.SendAndClose(&pb.Count{N: n, Size: size})
		}
		if err != nil {
			return err
		}
		n++
		size += int32(len(c.Data))
	}
}

func (bench) BidiEcho(s grpc.BidiStreamingServer[pb.Chunk, pb.Chunk]) error {
	for {
		c, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.Send(c); err != nil {
			return err
		}
	}
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// serve registers the service on a new server with opts and serves it on HOST:port.
func serve(port string, opts ...grpc.ServerOption) *grpc.Server {
	lis, err := net.Listen("tcp", net.JoinHostPort(env("HOST", "127.0.0.1"), port))
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	pb.RegisterBenchServer(srv, bench{})
	go func() {
		if err := srv.Serve(lis); err != nil {
			log.Fatal(err)
		}
	}()
	return srv
}

func main() {
	workers, err := strconv.Atoi(env("WORKERS", "1"))
	if err != nil || workers < 1 {
		workers = 1
	}
	runtime.GOMAXPROCS(workers)
	servers := []*grpc.Server{serve(env("PORT", "8080"))}
	if port := os.Getenv("TLS_PORT"); port != "" {
		cert, err := tls.LoadX509KeyPair(os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY"))
		if err != nil {
			log.Fatal(err)
		}
		creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})
		servers = append(servers, serve(port, grpc.Creds(creds)))
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	<-sig
	for _, s := range servers {
		s.Stop()
	}
}
