module serverbench/bench/grpc-status13

go 1.24
