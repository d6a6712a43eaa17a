#!/bin/sh
# Regenerates pb/ from spec/serverbench.proto (the generated files are committed, as Go projects
# do; nothing runs this at setup). Needs protoc (grpcio-tools' `python -m grpc_tools.protoc`
# works) and, on PATH, protoc-gen-go v1.36.12 and protoc-gen-go-grpc v1.5.1:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
set -eu
cd "$(dirname "$0")"
PROTOC=${PROTOC:-protoc}
M=Mserverbench.proto=serverbench/servers/go/grpc-go/pb
$PROTOC -I ../../../spec \
  --go_out=pb --go_opt=paths=source_relative --go_opt=$M \
  --go-grpc_out=pb --go-grpc_opt=paths=source_relative --go-grpc_opt=$M \
  serverbench.proto
