#!/bin/sh
# Regenerates serverbench_pb2.py and serverbench_pb2_grpc.py from spec/serverbench.proto (the
# generated files are committed; nothing runs this at setup) with grpcio-tools 1.85.1:
#   python3 -m venv /tmp/tools && /tmp/tools/bin/pip install grpcio-tools==1.85.1
#   PYTHON=/tmp/tools/bin/python ./gen.sh
set -eu
cd "$(dirname "$0")"
${PYTHON:-python3} -m grpc_tools.protoc -I ../../../spec --python_out=. --grpc_python_out=. serverbench.proto
