#!/usr/bin/env bash
# grpc-proto: what a user's message costs the load generator. Unary Sum calls of go/grpc-go
# (`serverbench serve go/grpc-go --cpus 0`, WORKERS=1; set up with `serverbench setup`) from
# `serverbench load --cpus 1 -t 1 -c CONNS -m STREAMS` for DURATION, ROUNDS times in the order:
#   built-in   grpc://…/serverbench.Bench/Sum: the benchmark service's message, built in;
#   proto      --proto spec/serverbench.proto --call serverbench.Bench/Sum --data '{"a":20,"b":22}':
#              the same message from the user's .proto and JSON, encoded once;
#   rand       the same with --data '{"a":"{rand:1-1000}","b":"{rand:1-1000}"}': drawn per call.
# Each line: calls/s and the client's CPU µs per call (serverbench's own figure, from rusage);
# the summary gives the medians and each mode's ratio to built-in.
# Usage: bench/grpc-proto.sh   (env: CONNS=16 STREAMS=16 DURATION=5 ROUNDS=3
#        SERVERBENCH=path/to/serverbench PORT=50611)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-$ROOT/target/release/serverbench}
CONNS=${CONNS:-16}
STREAMS=${STREAMS:-16}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-50611}
[ -x "$SB" ] || (cd "$ROOT" && cargo build --release --locked -p serverbench)
if [ "$(nproc)" -lt 2 ]; then
  echo "grpc-proto: needs 2 CPUs (server on 0, client on 1)" >&2
  exit 1
fi
TMP=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -- -"$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

"$SB" setup go/grpc-go --root "$ROOT" >/dev/null
setsid "$SB" serve go/grpc-go --root "$ROOT" --cpus 0 --port "$PORT" >"$TMP/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do grep -q "is ready" "$TMP/serve.log" && break; sleep 0.1; done
grep -q "is ready" "$TMP/serve.log" || { cat "$TMP/serve.log" >&2; exit 1; }

URL=grpc://127.0.0.1:$PORT
PROTO=(--proto "$ROOT/spec/serverbench.proto" --call serverbench.Bench/Sum)
run() { # mode, then the load's own arguments
  local mode=$1; shift
  "$SB" load --cpus 1 -t 1 -c "$CONNS" -m "$STREAMS" -d "${DURATION}s" --json "$@" >"$TMP/out.json"
  python3 - "$mode" "$TMP/out.json" <<'PY' | tee -a "$TMP/lines"
import json, sys
v = json.load(open(sys.argv[2]))
ok = v["protocol"]["status_codes"].get("OK", 0)
bad = sum(v["protocol"]["failures"].values())
print(f'{sys.argv[1]:<9} {v["rps"]:>10.0f} calls/s {v["client_cpu_us_per_request"]:>6.2f} µs/call  OK {ok}, failed {bad}')
PY
}
for r in $(seq "$ROUNDS"); do
  echo "round $r"
  run built-in "$URL/serverbench.Bench/Sum"
  run proto "${PROTO[@]}" --data '{"a":20,"b":22}' "$URL"
  run rand "${PROTO[@]}" --data '{"a":"{rand:1-1000}","b":"{rand:1-1000}"}' "$URL"
done
python3 - "$TMP/lines" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault(f[0], []).append((float(f[1]), float(f[3])))
base = [statistics.median(x[i] for x in rows["built-in"]) for i in (0, 1)]
print("median     calls/s   µs/call   vs built-in (calls/s, µs/call)")
for mode, xs in rows.items():
    c, u = (statistics.median(x[i] for x in xs) for i in (0, 1))
    print(f"{mode:<9} {c:>9.0f} {u:>9.2f}   {c / base[0]:.3f}x, {u / base[1]:.3f}x")
PY
