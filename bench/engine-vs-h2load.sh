#!/usr/bin/env bash
# engine-vs-h2load: client CPU per request and req/s of `serverbench load --http2` vs h2load
# (nghttp2) against nginx.
#
# nginx (one worker, Debian's) is pinned to CPU 0 and serves
# `location /hello { return 200 "Hello World!"; }` on two free loopback ports: h2 over TLS
# (`listen ... ssl http2`, a self-signed ECDSA P-256 certificate made here) and h2c with prior
# knowledge (`listen ... http2` without ssl: nginx 1.22 cannot serve h2c and HTTP/1.1 on one
# port, so h2c gets its own). Both clients are pinned to CPU 1, one thread, 50 connections, and
# run interleaved, ROUNDS times: h2 and h2c, with 10 and 100 streams per connection (-m).
# Client CPU is user+system time from rusage of the child process, measured the same way for
# both tools. serverbench runs with -k (h2load does not verify certificates either).
# serverbench runs twice per round: with its default `--idle auto` (naps when it has nothing to
# do) and as `serverbench-block` with `--idle block` (sleeps until the server's writes wake it),
# which shows what the naps change; TOOLS="h2load serverbench" leaves the second out.
# serverbench-uring is `--io uring` (the others run `--io epoll`): the io_uring backend in a
# column of its own, interleaved with the rest.
# SERVERBENCH_BEFORE=path/to/an/older/serverbench: before and after in one interleaved run. Each
# serverbench column X may be followed in TOOLS by X-before, the older binary with the same
# flags (default TOOLS then: h2load serverbench serverbench-before serverbench-uring
# serverbench-uring-before), and the summary ends with after/before ratios per mode (medians,
# and paired by round) beside each side's spread over the rounds ((max - min) / median).
# Usage: bench/engine-vs-h2load.sh   (env: DURATION=5 ROUNDS=3 SERVERBENCH=path/to/serverbench
#        PROTOS="h2 h2c" STREAMS="10 100" SERVERBENCH_BEFORE=path/to/serverbench
#        TOOLS="h2load serverbench serverbench-uring serverbench-block serverbench-uring-block")
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-$ROOT/target/release/serverbench}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
PROTOS=${PROTOS:-h2 h2c}
STREAMS=${STREAMS:-10 100}
BEFORE=${SERVERBENCH_BEFORE:-}
if [ -n "$BEFORE" ] && [ ! -x "$BEFORE" ]; then
  echo "engine-vs-h2load: SERVERBENCH_BEFORE=$BEFORE is not an executable" >&2
  exit 1
fi
if [ -n "$BEFORE" ]; then
  TOOLS=${TOOLS:-h2load serverbench serverbench-before serverbench-uring serverbench-uring-before}
else
  TOOLS=${TOOLS:-h2load serverbench serverbench-uring serverbench-block}
fi
if [[ " $TOOLS " == *"-before "* ]] && [ -z "$BEFORE" ]; then
  echo "engine-vs-h2load: a *-before tool in TOOLS needs SERVERBENCH_BEFORE" >&2
  exit 1
fi
CONNS=50

missing=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} from apt" >&2
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$SB" ]; then
  (cd "$ROOT" && cargo build --release -p serverbench)
fi
if [ "$(nproc)" -lt 2 ]; then
  echo "engine-vs-h2load: needs 2 CPUs (server on 0, client on 1)" >&2
  exit 1
fi

TMP=$(mktemp -d)
NGINX_PID=
cleanup() {
  if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
  -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
TLS_PORT=$(free_port)
H2C_PORT=$(free_port)
cat >"$TMP/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $TMP/nginx.pid;
error_log $TMP/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  # nginx closes a connection after 1000 requests by default (HTTP/2 included, with a GOAWAY);
  # both tools would reconnect every few milliseconds.
  keepalive_requests 1000000;
  # -m 100 fits the default of 128.
  http2_max_concurrent_streams 128;
  ssl_certificate $TMP/cert.pem;
  ssl_certificate_key $TMP/key.pem;
  server {
    listen 127.0.0.1:$TLS_PORT ssl http2;
    listen 127.0.0.1:$H2C_PORT http2;
    location /hello { return 200 "Hello World!"; }
  }
}
CONF
taskset -c 0 "$NGINX" -c "$TMP/nginx.conf" -p "$TMP" &
NGINX_PID=$!
for port in $TLS_PORT $H2C_PORT; do
  for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
done
url_of() {
  if [ "$1" = h2 ]; then echo "https://127.0.0.1:$TLS_PORT/hello"; else echo "http://127.0.0.1:$H2C_PORT/hello"; fi
}

# Runs a command pinned to CPU 1; prints its stdout to $1 and its CPU seconds.
cpu_of() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    subprocess.run(["taskset", "-c", "1"] + sys.argv[2:], stdout=out, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.4f}")
PY
}

run_h2load() { # proto streams -> "requests rps cpu errors"
  local cpu
  cpu=$(cpu_of "$TMP/out" h2load -t1 -c$CONNS -m"$2" -D"$DURATION" "$(url_of "$1")")
  python3 - "$TMP/out" "$cpu" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rps = float(re.search(r"finished in [\d.]+s, ([\d.]+) req/s", text).group(1))
m = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored", text)
print(m.group(1), rps, sys.argv[2], int(m.group(2)) + int(m.group(3)))
PY
}

run_sb() { # proto streams idle io [binary]
  local cpu tls=()
  [ "$1" = h2 ] && tls=(-k)
  cpu=$(cpu_of "$TMP/out" "${5:-$SB}" load -t1 -c$CONNS --http2 -m"$2" --idle "$3" --io "$4" "${tls[@]}" -d"${DURATION}s" --json "$(url_of "$1")")
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); e=r["errors"]; print(r["requests"], r["rps"], sys.argv[2], sum(e.values()))' "$TMP/out" "$cpu"
}

: >"$TMP/results"
for round in $(seq "$ROUNDS"); do
  for proto in $PROTOS; do
    for m in $STREAMS; do
      for tool in $TOOLS; do
        case $tool in
          h2load) line=$(run_h2load "$proto" "$m") ;;
          serverbench) line=$(run_sb "$proto" "$m" auto epoll) ;;
          serverbench-uring) line=$(run_sb "$proto" "$m" auto uring) ;;
          serverbench-block) line=$(run_sb "$proto" "$m" block epoll) ;;
          serverbench-uring-block) line=$(run_sb "$proto" "$m" block uring) ;;
          serverbench-before) line=$(run_sb "$proto" "$m" auto epoll "$BEFORE") ;;
          serverbench-uring-before) line=$(run_sb "$proto" "$m" auto uring "$BEFORE") ;;
          serverbench-block-before) line=$(run_sb "$proto" "$m" block epoll "$BEFORE") ;;
          serverbench-uring-block-before) line=$(run_sb "$proto" "$m" block uring "$BEFORE") ;;
          *) echo "engine-vs-h2load: unknown tool $tool in TOOLS" >&2; exit 2 ;;
        esac
        echo "$tool $proto-m$m $line" >>"$TMP/results"
        echo "round $round: $tool $proto -m $m: $line (requests req/s cpu_s errors)" >&2
      done
    done
  done
done

python3 - "$TMP/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
modes = list(dict.fromkeys(r[1] for r in rows))
tools = list(dict.fromkeys(r[0] for r in rows))
med = {}
for tool in tools:
    for mode in modes:
        rs = [r for r in rows if r[0] == tool and r[1] == mode]
        rps = statistics.median(float(r[3]) for r in rs)
        us = statistics.median(float(r[4]) * 1e6 / float(r[2]) for r in rs)
        med[tool, mode] = (rps, us)
print("| mode | tool | req/s (median) | client CPU µs/request (median) |")
print("|---|---|---:|---:|")
for mode in modes:
    for tool in tools:
        rps, us = med[tool, mode]
        print(f"| {mode} | {tool} | {rps:,.0f} | {us:.2f} |")
print()
# Round by round, serverbench ran right after h2load: the median of those paired ratios is less
# sensitive to a machine whose speed drifts between rounds than the ratio of the medians.
for mode, tool in [(m, t) for m in modes for t in tools if t != "h2load" and "h2load" in tools]:
    (hr, hu), (sr, su) = med["h2load", mode], med[tool, mode]
    ok = "met" if su <= 0.8 * hu and sr >= hr else "NOT met"
    h = [r for r in rows if r[0] == "h2load" and r[1] == mode]
    b = [r for r in rows if r[0] == tool and r[1] == mode]
    rps_pairs = statistics.median(float(y[3]) / float(x[3]) for x, y in zip(h, b))
    cpu_pairs = statistics.median(
        (float(y[4]) / float(y[2])) / (float(x[4]) / float(x[2])) for x, y in zip(h, b))
    print(f"{mode}: {tool}/h2load req/s {sr / hr:.2f}x, CPU/request {su / hu:.2f}x "
          f"(target <= 0.80x CPU and >= 1.00x req/s: {ok}); "
          f"paired by round: {rps_pairs:.2f}x req/s, {cpu_pairs:.2f}x CPU")
# SERVERBENCH_BEFORE: each serverbench column X against X-before, run right after it.
spread = lambda xs: (max(xs) - min(xs)) / statistics.median(xs)
cpu = lambda r: float(r[4]) / float(r[2])
for mode, tool in [(m, t) for m in modes for t in tools if t + "-before" in tools]:
    a = [r for r in rows if r[0] == tool and r[1] == mode]
    b = [r for r in rows if r[0] == tool + "-before" and r[1] == mode]
    (ar, au), (br, bu) = med[tool, mode], med[tool + "-before", mode]
    rate_p = statistics.median(float(y[3]) / float(x[3]) for x, y in zip(b, a))
    cpu_p = statistics.median(cpu(y) / cpu(x) for x, y in zip(b, a))
    print(f"{mode}: {tool} after/before req/s {ar / br:.3f}x, CPU/request {au / bu:.3f}x; "
          f"paired by round: {rate_p:.3f}x req/s, {cpu_p:.3f}x CPU\n  spread over rounds req/s "
          f"{spread([float(r[3]) for r in a]):.1%} after, {spread([float(r[3]) for r in b]):.1%} "
          f"before; CPU {spread([cpu(r) for r in a]):.1%} after, {spread([cpu(r) for r in b]):.1%} before")
PY
