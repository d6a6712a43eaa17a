package main

import (
	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"
)

// wsMaxMessage caps a reassembled message: the contract asks for 64 KiB, so 1 MiB leaves room.
const wsMaxMessage = 1 << 20

// upgrader holds fasthttp/websocket's settings (the gorilla/websocket port to fasthttp): 4 KiB
// read and write buffers (its defaults; a larger message is read in several calls and
// reassembled), no permessage-deflate, any Origin (no browser talks to a benchmark server).
var upgrader = websocket.FastHTTPUpgrader{
	ReadBufferSize:    4096,
	WriteBufferSize:   4096,
	EnableCompression: false,
	CheckOrigin:       func(*fasthttp.RequestCtx) bool { return true },
}

// wsEcho is the contract's ws-echo on /ws: every text or binary message is sent back unchanged,
// in order. The library reassembles fragmented messages, answers a ping with a pong and a close
// with the same close code, and closes with 1002 on a protocol error such as an unmasked client
// frame. A request without the upgrade headers gets 400 from Upgrade. The connection is
// hijacked from fasthttp: echo runs in its own goroutine after the 101 is written.
func wsEcho(ctx *fasthttp.RequestCtx) {
	err := upgrader.Upgrade(ctx, echo)
	if err != nil {
		return // Upgrade has already answered with an HTTP error
	}
}

func echo(conn *websocket.Conn) {
	defer conn.Close()
	conn.SetReadLimit(wsMaxMessage)
	for {
		kind, data, err := conn.ReadMessage()
		if err != nil {
			return // a close (answered by the library), a protocol error (closed with 1002) or EOF
		}
		if err := conn.WriteMessage(kind, data); err != nil {
			return
		}
	}
}
