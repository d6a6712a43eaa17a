// Command go-caddy is serverbench's go/caddy server: Caddy v2 built as a Go module with its
// standard modules (what the release binary has), configured by a Caddyfile that run.sh writes
// from the contract's environment at start.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func main() {
	caddycmd.Main()
}
