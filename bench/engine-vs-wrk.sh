#!/usr/bin/env bash
# engine-vs-wrk: client CPU per request and req/s of `serverbench load` vs wrk against nginx.
#
# nginx (one worker) is pinned to CPU 0 and serves `location /hello { return 200 "Hello World!"; }`
# on a free loopback port; both clients are pinned to CPU 1 and run interleaved, ROUNDS times:
# plain (-t1 -c50) and pipelined 16 deep (wrk with a Lua pipeline script). Client CPU is
# user+system time from rusage of the child process, measured the same way for both tools.
#
# --https: the same over TLS (nginx `ssl`, TLS 1.2 and 1.3 offered, a self-signed ECDSA P-256
# certificate the script generates into its temp dir; no client verifies it: wrk and h2load
# never do, serverbench runs with -k, which still checks the handshake signatures):
#   tls          keep-alive, wrk vs serverbench (req/s, client CPU µs/request);
#   tls-new      a new connection per request, full handshakes (nginx keeps no session cache
#                and sends no tickets): h2load --h1 -H 'Connection: close' (h2load reconnects
#                when the server closes) vs serverbench --new-conn (handshakes/s, client CPU
#                µs/handshake). h2load 1.52 never exits from a timed run (-D) whose clients
#                reconnect, so serverbench runs first for DURATION and h2load then makes as
#                many requests (-n): the same handshakes for both;
#   tls-resumed  the same against a server block that sends session tickets, serverbench with
#                --tls-resume tickets (h2load resumes on its own). nginx logs every request with
#                $ssl_session_reused, so the resumed share is counted at the server for both.
# serverbench runs once per backend in IOS (`--io epoll` and `--io uring` by default), each a
# column of its own (serverbench-epoll, serverbench-uring), interleaved with the other tool.
#
# MODES="stream1 stream100": a TCP echo stream ('hello world' written continuously, as
# `tcpkali -m 'hello world'`) on 1 and 100 connections against the catalog's c/epoll echo
# (built into the temp dir, pinned to CPU 0); Mbps down+up and client CPU per MB. tcpkali is
# not packaged for Debian 12: without TCPKALI these modes compare the two backends only. With
# TCPKALI=path/to/tcpkali (a binary, or the top of a tcpkali source tree kept outside this
# repository, which the script configures and builds in place the first time; glibc >= 2.32 has
# no sys/sysctl.h, so its include is dropped), tcpkali runs first in each round as
# `tcpkali -w1 -m 'hello world' -cN -T DURATION` (one thread, as serverbench's -t1), pinned to
# CPU 1 like the others, and is the column the backends are compared with (goal: >= 1.5x Mbps).
#
# MODES="upload limited-conn" (issue 32, HttpArena's upload and limited-conn profiles):
#   upload        POST /upload with a 1 MiB body (-c8) to the catalog's go/net-http (it streams
#                 the body and answers the byte count; WORKERS=1, pinned to CPU 0; the binary
#                 from $SERVERBENCH_CACHE/bin, else built with go into the temp dir): wrk with a
#                 Lua body script (wrk.body: one 1 MiB string, copied into each request),
#                 serverbench --body-size 1MiB (random bytes made once, written from the shared
#                 buffer), and oha -D FILE where OHA names an executable (cargo install oha
#                 --locked, outside this repository; without it the mode says so and skips it);
#   limited-conn  GET /hello on nginx with a new connection every 10 requests: wrk with a Lua
#                 script that sends `Connection: close` on every 10th request of its thread
#                 (nginx closes, wrk reconnects: 10 requests per connection on average),
#                 serverbench --reconnect-every 10 (the client closes after 10 responses). oha
#                 has no such mode (only --disable-keepalive: one request per connection).
#
# SERVERBENCH_BEFORE=path/to/an/older/serverbench: before and after in one interleaved run. That
# binary runs as well, with the same flags, right after each serverbench column of each round
# (a column serverbench-before-epoll beside serverbench-epoll, and so on per backend), and the
# summary ends with after/before ratios per mode and backend (medians, and paired by round)
# and each side's spread over the rounds ((max - min) / median), so a change reads against
# the noise.
# Usage: bench/engine-vs-wrk.sh [--https]
#        (env: DURATION=5s ROUNDS=3 MODES="plain pipelined" IOS="epoll uring"
#         SERVERBENCH=path/to/serverbench SERVERBENCH_BEFORE=path/to/serverbench
#         TCPKALI=path/to/tcpkali OHA=path/to/oha)
set -euo pipefail

HTTPS=0
if [ "${1:-}" = --https ]; then HTTPS=1; fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-$ROOT/target/release/serverbench}
BEFORE=${SERVERBENCH_BEFORE:-}
if [ -n "$BEFORE" ] && [ ! -x "$BEFORE" ]; then
  echo "engine-vs-wrk: SERVERBENCH_BEFORE=$BEFORE is not an executable" >&2
  exit 1
fi
DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-3}
if [ $HTTPS = 1 ]; then MODES=${MODES:-tls tls-new tls-resumed}; else MODES=${MODES:-plain pipelined}; fi
CONNS=50
IOS=${IOS:-epoll uring}
TCPKALI=${TCPKALI:-}
OHA=${OHA:-}
CACHE=${SERVERBENCH_CACHE:-$HOME/.cache/serverbench}
UPLOAD_CONNS=8

missing=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
if [ $HTTPS = 1 ]; then
  command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} from apt (no service is started: policy-rc.d exits 101)" >&2
  policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
  fi
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
  if [ -n "$policy" ]; then rm -f "$policy"; fi
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$SB" ]; then
  (cd "$ROOT" && cargo build --release -p serverbench)
fi
# TCPKALI may name a source tree: build it there once (autotools from apt: autoconf automake
# libtool bison flex).
if [ -n "$TCPKALI" ] && [ -d "$TCPKALI" ]; then
  src=$TCPKALI
  TCPKALI=$src/src/tcpkali
  if [ ! -x "$TCPKALI" ]; then
    echo "building tcpkali in $src" >&2
    sed -i 's|^#include <sys/sysctl.h>|/* sys/sysctl.h: gone from glibc 2.32 */|' \
      "$src/src/tcpkali_syslimits.c"
    (cd "$src" && { [ -x configure ] || autoreconf -i; } && ./configure && make -j2) >"$src/build.log" 2>&1 \
      || { echo "engine-vs-wrk: tcpkali build failed, see $src/build.log" >&2; exit 1; }
  fi
fi
if [ -n "$TCPKALI" ] && [ ! -x "$TCPKALI" ]; then
  echo "engine-vs-wrk: TCPKALI=$TCPKALI is not an executable or a tcpkali source tree" >&2
  exit 1
fi
if [ "$(nproc)" -lt 2 ]; then
  echo "engine-vs-wrk: needs 2 CPUs (server on 0, client on 1)" >&2
  exit 1
fi

TMP=$(mktemp -d)
NGINX_PID=
cleanup() {
  if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
  if [ -n "${ECHO_PID:-}" ]; then kill "$ECHO_PID" 2>/dev/null || true; wait "$ECHO_PID" 2>/dev/null || true; fi
  if [ -n "${UPLOAD_PID:-}" ]; then kill "$UPLOAD_PID" 2>/dev/null || true; wait "$UPLOAD_PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
TLS_PORT=$(free_port)
FULL_PORT=$(free_port)
RESUME_PORT=$(free_port)
TLS_CONF=
if [ $HTTPS = 1 ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null
  # nginx 1.22 offers TLS 1.3 only when told to; every handshake is logged for the
  # new-connection blocks (the same cost for both clients) to count connections and resumptions.
  TLS_CONF="
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_certificate $TMP/cert.pem;
  ssl_certificate_key $TMP/key.pem;
  log_format tls '\$connection \$connection_requests \$ssl_session_reused \$ssl_protocol';
  server {
    listen 127.0.0.1:$TLS_PORT ssl;
    location /hello { return 200 \"Hello World!\"; }
  }
  server {
    listen 127.0.0.1:$FULL_PORT ssl;
    ssl_session_tickets off;
    ssl_session_cache off;
    access_log $TMP/full.log tls;
    location /hello { return 200 \"Hello World!\"; }
  }
  server {
    listen 127.0.0.1:$RESUME_PORT ssl;
    ssl_session_tickets on;
    access_log $TMP/resumed.log tls;
    location /hello { return 200 \"Hello World!\"; }
  }"
fi
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
  }$TLS_CONF
}
CONF
taskset -c 0 "$NGINX" -c "$TMP/nginx.conf" -p "$TMP" &
NGINX_PID=$!
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.1
done
ECHO_PORT=$(free_port)
ECHO_PID=
if [[ " $MODES " == *" stream"* ]]; then
  make -s -C "$ROOT/servers/c/epoll" OUT="$TMP/c-epoll" >&2
  PORT=$(free_port) ECHO_PORT=$ECHO_PORT WORKERS=1 taskset -c 0 "$TMP/c-epoll" >/dev/null 2>&1 &
  ECHO_PID=$!
  for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$ECHO_PORT") 2>/dev/null && break
    sleep 0.1
  done
fi
UPLOAD_PORT=$(free_port)
UPLOAD_PID=
if [[ " $MODES " == *" upload "* ]]; then
  upload_bin=$CACHE/bin/go-net-http
  if [ ! -x "$upload_bin" ]; then
    upload_bin=$TMP/go-net-http
    (cd "$ROOT/servers/go/net-http" && go build -trimpath -buildvcs=false -o "$upload_bin" .) >&2
  fi
  PORT=$UPLOAD_PORT ECHO_PORT=$(free_port) WORKERS=1 taskset -c 0 "$upload_bin" >/dev/null 2>&1 &
  UPLOAD_PID=$!
  for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$UPLOAD_PORT") 2>/dev/null && break
    sleep 0.1
  done
  head -c 1048576 /dev/urandom >"$TMP/body"
  if [ -n "$OHA" ] && [ ! -x "$OHA" ]; then
    echo "engine-vs-wrk: OHA=$OHA is not an executable" >&2
    exit 1
  fi
  if [ -z "$OHA" ]; then
    echo "engine-vs-wrk: upload without oha (set OHA=path/to/oha, from cargo install oha --locked)" >&2
  fi
fi
URL="http://127.0.0.1:$PORT/hello"
url_of() { # mode -> URL
  case $1 in
    upload) echo "http://127.0.0.1:$UPLOAD_PORT/upload" ;;
    tls) echo "https://127.0.0.1:$TLS_PORT/hello" ;;
    tls-new) echo "https://127.0.0.1:$FULL_PORT/hello" ;;
    tls-resumed) echo "https://127.0.0.1:$RESUME_PORT/hello" ;;
    *) echo "$URL" ;;
  esac
}
log_of() { # mode -> nginx access log of its server block (new-connection modes)
  case $1 in
    tls-new) echo "$TMP/full.log" ;;
    tls-resumed) echo "$TMP/resumed.log" ;;
  esac
}

cat >"$TMP/pipeline.lua" <<'LUA'
init = function(args)
  local r = {}
  for i = 1, 16 do r[i] = wrk.format(nil, "/hello") end
  req = table.concat(r)
end
request = function() return req end
LUA

cat >"$TMP/upload.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/octet-stream"
local f = io.open(os.getenv("BODY_FILE"), "rb")
wrk.body = f:read("*a")
f:close()
LUA

# Every 10th request of the thread asks the server to close: 10 requests per connection on
# average (wrk reconnects when the server closes).
cat >"$TMP/limited.lua" <<'LUA'
local n = 0
local keep, close
init = function(args)
  keep = wrk.format(nil, "/hello")
  close = wrk.format(nil, "/hello", {["Connection"] = "close"})
end
request = function()
  n = n + 1
  if n % 10 == 0 then return close end
  return keep
end
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

# The resumed share of the handshakes nginx logged since the log was emptied (- if not logged).
resumed_of() { # mode
  local log
  log=$(log_of "$1")
  if [ -z "$log" ]; then echo -; return; fi
  awk '{n++; if ($3 == "r") r++} END {printf "%.3f", n ? r / n : 0}' "$log"
}

conns_of() { # mode -> connections
  if [ "$1" = upload ]; then echo $UPLOAD_CONNS; else echo $CONNS; fi
}

run_wrk() { # mode -> "reqs rps cpu resumed"
  local extra=()
  case $1 in
    pipelined) extra=(-s "$TMP/pipeline.lua") ;;
    upload) extra=(-s "$TMP/upload.lua") ;;
    limited-conn) extra=(-s "$TMP/limited.lua") ;;
  esac
  local cpu reqs rps
  cpu=$(BODY_FILE=$TMP/body cpu_of "$TMP/out" wrk -t1 -c"$(conns_of "$1")" -d"$DURATION" \
    "${extra[@]}" "$(url_of "$1")")
  reqs=$(awk '/requests in/ {print $1}' "$TMP/out")
  rps=$(awk '/Requests\/sec/ {print $2}' "$TMP/out")
  echo "$reqs $rps $cpu -"
}

run_oha() { # mode -> "reqs rps cpu -" (upload only)
  local cpu
  cpu=$(cpu_of "$TMP/out" "$OHA" --no-tui -j -c"$(conns_of "$1")" -z"$DURATION" -m POST \
    -T application/octet-stream -D "$TMP/body" "$(url_of "$1")")
  python3 - "$TMP/out" "$cpu" <<'PY'
import json, sys
v = json.loads(open(sys.argv[1]).read())
ok = sum(n for k, n in v["statusCodeDistribution"].items() if k.startswith("2"))
print(ok, v["summary"]["requestsPerSec"], sys.argv[2], "-")
PY
}

run_h2load() { # mode requests; h2load reconnects after each `Connection: close`
  local log cpu
  log=$(log_of "$1")
  : >"$log"
  cpu=$(cpu_of "$TMP/out" h2load --h1 -t1 -c$CONNS -n "$2" -H 'Connection: close' "$(url_of "$1")")
  python3 - "$TMP/out" "$cpu" "$(resumed_of "$1")" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
ok = int(re.search(r"requests: .* (\d+) succeeded", out).group(1))
rps = float(re.search(r"finished in [^,]+, ([\d.]+) req/s", out).group(1))
print(ok, rps, sys.argv[2], sys.argv[3])
PY
}

run_sb() { # mode io
  local extra=(--io "$2") log=
  case $1 in
    pipelined) extra+=(-p 16) ;;
    upload) extra+=(-X POST -H 'Content-Type: application/octet-stream' --body-size 1MiB) ;;
    limited-conn) extra+=(--reconnect-every 10) ;;
    tls) extra+=(-k) ;;
    tls-new) extra+=(-k --new-conn) ;;
    tls-resumed) extra+=(-k --new-conn --tls-resume tickets) ;;
    stream*) run_stream "$@"; return ;;
  esac
  log=$(log_of "$1")
  if [ -n "$log" ]; then : >"$log"; fi
  local cpu
  cpu=$(cpu_of "$TMP/out" "$SB" load -t1 -c"$(conns_of "$1")" -d"$DURATION" "${extra[@]}" --json \
    "$(url_of "$1")")
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["requests"], r["rps"], sys.argv[2], sys.argv[3])' \
    "$TMP/out" "$cpu" "$(resumed_of "$1")"
}

# TCP echo stream on ${1#stream} connections: "MB mbps cpu -" (MB down+up; mbps down+up).
run_stream() { # mode io
  local cpu
  cpu=$(cpu_of "$TMP/out" "$SB" load -t1 -c"${1#stream}" -d"$DURATION" --io "$2" --json \
    --tcp "127.0.0.1:$ECHO_PORT" --mode stream --message 'hello world')
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); p=r.get("protocol", r); mb=(r["bytes_read"]+r["bytes_written"])/1e6; print(f"{mb:.3f}", p["mbps_down"]+p["mbps_up"], sys.argv[2], "-")' \
    "$TMP/out" "$cpu"
}

# tcpkali's echo stream on ${1#stream} connections, the same fields as run_stream.
run_tcpkali() { # mode
  local cpu
  cpu=$(cpu_of "$TMP/out" "$TCPKALI" -w1 -m 'hello world' -c"${1#stream}" -T"$DURATION" \
    "127.0.0.1:$ECHO_PORT")
  python3 - "$TMP/out" "$cpu" <<'PY'
import re, sys
out = open(sys.argv[1], encoding="utf-8").read()
sent = int(re.search(r"Total data sent:.*\((\d+) bytes\)", out).group(1))
got = int(re.search(r"Total data received:.*\((\d+) bytes\)", out).group(1))
down, up = re.search(r"Aggregate bandwidth: ([\d.]+)\S*, ([\d.]+)\S* Mbps", out).groups()
print(f"{(sent + got) / 1e6:.3f}", float(down) + float(up), sys.argv[2], "-")
PY
}

SB_TOOLS=
for io in $IOS; do
  SB_TOOLS="$SB_TOOLS serverbench-$io"
  if [ -n "$BEFORE" ]; then SB_TOOLS="$SB_TOOLS serverbench-before-$io"; fi
done
tools_of() { # mode -> the tools in the order they run
  case $1 in
    tls-new | tls-resumed) echo "$SB_TOOLS" h2load ;;
    stream*) if [ -n "$TCPKALI" ]; then echo tcpkali "$SB_TOOLS"; else echo "$SB_TOOLS"; fi ;;
    upload) if [ -n "$OHA" ]; then echo wrk "$SB_TOOLS" oha; else echo wrk "$SB_TOOLS"; fi ;;
    *) echo wrk "$SB_TOOLS" ;;
  esac
}

: >"$TMP/results"
for round in $(seq "$ROUNDS"); do
  for mode in $MODES; do
    for tool in $(tools_of $mode); do
      case $tool in
        wrk) line=$(run_wrk $mode) ;;
        tcpkali) line=$(run_tcpkali $mode) ;;
        oha) line=$(run_oha $mode) ;;
        h2load) line=$(run_h2load $mode "$sb_requests") ;;
        serverbench-before-*) line=$(SB=$BEFORE run_sb $mode "${tool#serverbench-before-}") ;;
        serverbench-*) line=$(run_sb $mode "${tool#serverbench-}"); sb_requests=${line%% *} ;;
      esac
      echo "$tool $mode $line" >>"$TMP/results"
      echo "round $round: $tool $mode: $line (requests req/s cpu_s resumed)" >&2
    done
  done
done

python3 - "$TMP/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
order = ("plain", "pipelined", "upload", "limited-conn", "tls", "tls-new", "tls-resumed",
         "stream1", "stream100")
modes = [m for m in order if any(r[1] == m for r in rows)]
sbs = sorted({r[0] for r in rows if r[0].startswith("serverbench-")})
# Other tools shown beside the reference one (oha in upload), not compared against.
extra = sorted({r[0] for r in rows if r[0] == "oha"})
other = {m: ("h2load" if m in ("tls-new", "tls-resumed") else "wrk") for m in modes}
kali = any(r[0] == "tcpkali" for r in rows)
for m in modes:
    if m.startswith("stream"):
        other[m] = "tcpkali" if kali else "serverbench-epoll"
med = {}
tools_of = lambda mode: [t for t in dict.fromkeys([other[mode]] + extra + sbs)
                         if any(r[0] == t and r[1] == mode for r in rows)]
for mode in modes:
    for tool in tools_of(mode):
        rs = [r for r in rows if r[0] == tool and r[1] == mode]
        rps = statistics.median(float(r[3]) for r in rs)
        # per request; stream modes: per MB moved (down + up)
        us = statistics.median(float(r[4]) * 1e6 / float(r[2]) for r in rs)
        resumed = [float(r[5]) for r in rs if r[5] != "-"]
        med[tool, mode] = (rps, us, statistics.median(resumed) if resumed else None)
print("| mode | tool | req/s or Mbps (median) | client CPU µs/request or µs/MB (median) | resumed (nginx log) |")
print("|---|---|---:|---:|---:|")
for mode in modes:
    for tool in tools_of(mode):
        rps, us, resumed = med[tool, mode]
        shown = "" if resumed is None else f"{resumed:.0%}"
        print(f"| {mode} | {tool} | {rps:,.0f} | {us:.2f} | {shown} |")
print()
# Targets (issue 26): plain 0.75x CPU at >= 1x req/s; TLS keep-alive 0.7x; pipelined no worse
# than the epoll backend; new connections >= handshakes/s at lower CPU per handshake.
# Upload and limited-conn (issue 32): >= 1x req/s at <= 0.8x wrk's CPU per request.
target = {"plain": 0.75, "pipelined": 1.0, "tls": 0.7, "tls-new": 1.0, "tls-resumed": 1.0,
          "stream1": 1.0, "stream100": 1.0, "upload": 0.8, "limited-conn": 0.8}
# Against tcpkali (issue 30) the stream's goal is Mbps: >= 1.5x at every connection count.
floor = {m: (1.5 if m.startswith("stream") and kali else 1.0) for m in modes}
for mode in modes:
    orr, ou, _ = med[other[mode], mode]
    for tool in sbs:
        if tool == other[mode]:
            continue
        sr, su, _ = med[tool, mode]
        t = target[mode]
        ok = "met" if (su < ou if t == 1.0 else su <= t * ou) and sr >= orr else "NOT met"
        if floor[mode] != 1.0:
            ok = "met" if sr >= floor[mode] * orr else "NOT met"
        # Round by round (the tools ran back to back): less sensitive to a drifting machine.
        o = [r for r in rows if r[0] == other[mode] and r[1] == mode]
        b = [r for r in rows if r[0] == tool and r[1] == mode]
        rate_p = statistics.median(float(y[3]) / float(x[3]) for x, y in zip(o, b))
        cpu_p = statistics.median(
            (float(y[4]) / float(y[2])) / (float(x[4]) / float(x[2])) for x, y in zip(o, b))
        goal = (f">= {floor[mode]:.2f}x rate" if floor[mode] != 1.0
                else f"<= {t:.2f}x CPU at >= 1.00x")
        print(f"{mode}: {tool}/{other[mode]} rate {sr / orr:.2f}x, CPU per unit {su / ou:.2f}x "
              f"(target {goal}: {ok}); paired by round: {rate_p:.2f}x rate, {cpu_p:.2f}x CPU")
    for x in extra:
        if (x, mode) not in med:
            continue
        xr, xu, _ = med[x, mode]
        for tool in sbs:
            sr, su, _ = med[tool, mode]
            print(f"{mode}: {tool}/{x} rate {sr / xr:.2f}x, CPU per unit {su / xu:.2f}x")
# SERVERBENCH_BEFORE: each serverbench column against the older binary's, run beside it.
befores = [t for t in sbs if t.startswith("serverbench-before-")]
if befores:
    print()
    spread = lambda xs: (max(xs) - min(xs)) / statistics.median(xs)
for mode in modes:
    for before in befores:
        tool = "serverbench-" + before[len("serverbench-before-"):]
        if (before, mode) not in med or (tool, mode) not in med:
            continue
        a = [r for r in rows if r[0] == tool and r[1] == mode]
        b = [r for r in rows if r[0] == before and r[1] == mode]
        cpu = lambda r: float(r[4]) / float(r[2])
        (ar, au, _), (br, bu, _) = med[tool, mode], med[before, mode]
        rate_p = statistics.median(float(y[3]) / float(x[3]) for x, y in zip(b, a))
        cpu_p = statistics.median(cpu(y) / cpu(x) for x, y in zip(b, a))
        print(f"{mode}: {tool} after/before rate {ar / br:.3f}x, CPU per unit {au / bu:.3f}x; "
              f"paired by round: {rate_p:.3f}x rate, {cpu_p:.3f}x CPU; spread over rounds "
              f"rate {spread([float(r[3]) for r in a]):.1%} after, "
              f"{spread([float(r[3]) for r in b]):.1%} before; CPU "
              f"{spread([cpu(r) for r in a]):.1%} after, {spread([cpu(r) for r in b]):.1%} before")
PY
