module serverbench/servers/go/net-http

go 1.24
