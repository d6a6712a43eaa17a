#!/usr/bin/env bash
# engine-vs-wrk: client CPU per request and req/s of `serverbench load` vs wrk against nginx.
#
# nginx (one worker) is pinned to CPU 0 and serves `location /hello { return 200 "Hello World!"; }`
# on a free loopback port; both clients are pinned to CPU 1 and run interleaved, ROUNDS times:
# plain (-t1 -c50) and pipelined 16 deep (wrk with a Lua pipeline script). Client CPU is
# user+system time from rusage of the child process, measured the same way for both tools.
# Usage: bench/engine-vs-wrk.sh   (env: DURATION=5s ROUNDS=3 SERVERBENCH=path/to/serverbench)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-$ROOT/target/release/serverbench}
DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-3}
MODES=${MODES:-plain pipelined}
CONNS=50

missing=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} from apt" >&2
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$SB" ]; then
  (cd "$ROOT" && cargo build --release -p serverbench)
fi
if [ "$(nproc)" -lt 2 ]; then
  echo "engine-vs-wrk: needs 2 CPUs (server on 0, client on 1)" >&2
  exit 1
fi

TMP=$(mktemp -d)
NGINX_PID=
cleanup() {
  if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$TMP/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $TMP/nginx.pid;
error_log $TMP/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  # nginx closes a keep-alive connection after 1000 requests by default; both tools would
  # reconnect mid-window every few milliseconds.
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$PORT;
    location /hello { return 200 "Hello World!"; }
  }
}
CONF
taskset -c 0 "$NGINX" -c "$TMP/nginx.conf" -p "$TMP" &
NGINX_PID=$!
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.1
done
URL="http://127.0.0.1:$PORT/hello"

cat >"$TMP/pipeline.lua" <<'LUA'
init = function(args)
  local r = {}
  for i = 1, 16 do r[i] = wrk.format(nil, "/hello") end
  req = table.concat(r)
end
request = function() return req end
LUA

# Runs a command pinned to CPU 1; prints its stdout to $TMP/out and its CPU seconds.
cpu_of() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    subprocess.run(["taskset", "-c", "1"] + sys.argv[2:], stdout=out, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.4f}")
PY
}

run_wrk() { # mode -> "reqs rps cpu"
  local extra=()
  [ "$1" = pipelined ] && extra=(-s "$TMP/pipeline.lua")
  local cpu reqs rps
  cpu=$(cpu_of "$TMP/out" wrk -t1 -c$CONNS -d"$DURATION" "${extra[@]}" "$URL")
  reqs=$(awk '/requests in/ {print $1}' "$TMP/out")
  rps=$(awk '/Requests\/sec/ {print $2}' "$TMP/out")
  echo "$reqs $rps $cpu"
}

run_sb() {
  local extra=()
  [ "$1" = pipelined ] && extra=(-p 16)
  local cpu
  cpu=$(cpu_of "$TMP/out" "$SB" load -t1 -c$CONNS -d"$DURATION" "${extra[@]}" --json "$URL")
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["requests"], r["rps"], sys.argv[2])' "$TMP/out" "$cpu"
}

: >"$TMP/results"
for round in $(seq "$ROUNDS"); do
  for mode in $MODES; do
    for tool in wrk serverbench; do
      if [ $tool = wrk ]; then line=$(run_wrk $mode); else line=$(run_sb $mode); fi
      echo "$tool $mode $line" >>"$TMP/results"
      echo "round $round: $tool $mode: $line (requests req/s cpu_s)" >&2
    done
  done
done

python3 - "$TMP/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
modes = [m for m in ("plain", "pipelined") if any(r[1] == m for r in rows)]
for tool in ("wrk", "serverbench"):
    for mode in modes:
        rs = [r for r in rows if r[0] == tool and r[1] == mode]
        rps = statistics.median(float(r[3]) for r in rs)
        us = statistics.median(float(r[4]) * 1e6 / float(r[2]) for r in rs)
        med[tool, mode] = (rps, us)
print(f"| mode | tool | req/s (median) | client CPU µs/request (median) |")
print(f"|---|---|---:|---:|")
for mode in modes:
    for tool in ("wrk", "serverbench"):
        rps, us = med[tool, mode]
        print(f"| {mode} | {tool} | {rps:,.0f} | {us:.2f} |")
print()
for mode in modes:
    (wr, wu), (sr, su) = med["wrk", mode], med["serverbench", mode]
    ok = "met" if su <= 0.8 * wu and sr >= wr else "NOT met"
    print(f"{mode}: serverbench/wrk req/s {sr / wr:.2f}x, CPU/request {su / wu:.2f}x "
          f"(target <= 0.80x CPU and >= 1.00x req/s: {ok})")
PY
