#!/usr/bin/env bash
# open-loop-ceiling: how fast one client thread sends open loop (-R) against closed loop.
#
# nginx (one worker, `return 200 "Hello World!"`) is pinned to CPU 0; `serverbench load -t 1`
# is pinned to CPU 1. Each round runs, interleaved:
#   closed   -t1 -c$CONNS closed loop: req/s and client CPU µs per request (the engine's own
#            figure: process user+system time over the measured span);
#   open R   -t1 -c$CONNS -R R for every R in RATES: the rate sent (rate_achieved), requests
#            started more than 1 ms late, whether the client was saturated (busy or waiting for
#            a CPU >= 90% of the span), p99 from the intended send time, client µs/request.
# The open loop's ceiling is the highest R sent at >= 95% with the client not saturated and
# p99 under 10 ms: the client's own only where the closed loop is well above it (else the server
# is the limit). With SYSCALLS=1 (default) a last run of each under `perf stat` counts the
# syscalls per request.
#
# Where the time goes (a 2-vCPU VM, nginx 1.22 on one core; medians of 3 rounds of 3 s):
#   closed loop    ~60,000 req/s (nginx's limit here), 6.6 us client CPU/request, 2.2 syscalls
#                  per request: sendto 1.0, recvfrom 1.0, epoll_wait 0.16 (bursts share a wake-up);
#   open 10,000/s  34.7 us/request, 5.5 syscalls: epoll_wait 1.6, timerfd read 0.9,
#                  timerfd_settime 0.9, sendto 1.0, recvfrom 1.0;
#   open 20,000/s  24.1 us/request, 3.5 syscalls;
#   open 30,000/s+ 8-11 us/request, 2.1-2.3 syscalls (timer syscalls under 0.06 per request).
# Below the server's pace each request is a wake-up of its own: the due request's timer wakes
# the thread (read, send, re-arm), then its answer wakes it again. The cost is the wake-ups
# (the thread sleeps and is woken twice per request), not the schedule's syscalls, which the
# loop already batches: every due request goes out per wake-up, the timer is re-armed only when
# the next due time changes. As the rate rises, wake-ups carry several events and the open
# loop's cost per request meets the closed loop's, so its ceiling is not set by the timer. On
# this machine nginx on one core answers fewer requests than one client thread sends (the
# open loop is late from ~30,000/s and its p99 climbs): the ceiling found here is the
# server's. Run it where the server has more cores than the client's one to see the client's.
#
# Usage: bench/open-loop-ceiling.sh   (env: DURATION=3s ROUNDS=3 CONNS=50
#        RATES="20000 40000 60000 80000 100000" SERVERBENCH=path/to/serverbench SYSCALLS=1)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-$ROOT/target/release/serverbench}
DURATION=${DURATION:-3s}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-50}
RATES=${RATES:-20000 40000 60000 80000 100000}
SYSCALLS=${SYSCALLS:-1}

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "installing nginx-light from apt (no service is started: policy-rc.d exits 101)" >&2
  policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
  fi
  apt-get update -qq && apt-get install -y -qq nginx-light >/dev/null
  if [ -n "$policy" ]; then rm -f "$policy"; fi
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$SB" ]; then
  (cd "$ROOT" && cargo build --release -p serverbench)
fi
if [ "$(nproc)" -lt 2 ]; then
  echo "open-loop-ceiling: needs 2 CPUs (server on 0, client on 1)" >&2
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
URL=http://127.0.0.1:$PORT/hello

# One run of `load` with extra flags; prints a row: mode, asked, sent/s, late, saturated, p99,
# client µs/req.
run() {
  local name=$1 asked=$2
  shift 2
  taskset -c 1 "$SB" load -t 1 -c "$CONNS" -d "$DURATION" --warmup 1s --json "$@" "$URL" \
    >"$TMP/out" 2>/dev/null || { echo "$name $asked failed" >&2; return; }
  python3 - "$TMP/out" "$name" "$asked" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
sent = v.get("rate_achieved") or v["rps"]
print(f'{sys.argv[2]:<7} {sys.argv[3]:>7} {sent:>10.0f} {v.get("late") or 0:>8} '
      f'{str(v["client_saturated"]).lower():>6} {v["latency_us"]["p99"]:>9.0f} '
      f'{v["client_cpu_us_per_request"] or 0:>7.2f}')
PY
}

echo "# open-loop-ceiling: nginx on CPU 0, serverbench -t1 -c$CONNS on CPU 1, $DURATION each, $ROUNDS rounds"
echo "# $("$SB" --version 2>/dev/null | head -1), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-7s %7s %10s %8s %6s %9s %7s\n' mode asked sent/s late satur p99_us us/req
for round in $(seq "$ROUNDS"); do
  run closed - 
  for r in $RATES; do run open "$r" -R "$r"; done
done | tee "$TMP/rows"

# Medians per mode and rate; the ceiling: the highest rate sent at >= 95%, not saturated, p99
# under 10 ms.
python3 - "$TMP/rows" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 7 or f[0] == "mode":
        continue
    rows.setdefault((f[0], f[1]), []).append(f)
print("# medians")
ceiling = None
for (mode, asked), fs in rows.items():
    med = lambda i: st.median(float(x[i]) for x in fs)
    sat = sum(x[4] == "true" for x in fs)
    print(f"{mode:<7} {asked:>7} sent {med(2):>9.0f}/s  p99 {med(5):>8.0f} us  "
          f"{med(6):>6.2f} us/req  saturated {sat}/{len(fs)}")
    if mode == "open" and med(2) >= 0.95 * float(asked) and sat * 2 < len(fs) and med(5) < 10000:
        ceiling = max(ceiling or 0, float(asked))
print(f"# open-loop ceiling of one thread: {ceiling:.0f} req/s" if ceiling else "# no rate held")
PY

# Syscalls per request, counted by perf's tracepoints (cheap, unlike strace, whose slowdown
# batches more requests per wake-up than a real run): closed loop, and open loop at each rate.
if [ "$SYSCALLS" = 1 ] && command -v perf >/dev/null 2>&1; then
  events=raw_syscalls:sys_enter
  for c in epoll_wait sendto recvfrom write read timerfd_settime clock_nanosleep; do
    events=$events,syscalls:sys_enter_$c
  done
  for rate in closed $RATES; do
    extra=()
    if [ "$rate" != closed ]; then extra=(-R "$rate"); fi
    taskset -c 1 perf stat -x, -e "$events" -o "$TMP/perf" -- "$SB" load -t 1 -c "$CONNS" \
      -d "$DURATION" --warmup 0s --json "${extra[@]}" "$URL" >"$TMP/out" 2>/dev/null || true
    n=$(jq '.requests' "$TMP/out")
    printf '# syscalls per request, %-6s (%s requests):' "$rate" "$n"
    awk -F, -v n="$n" '$3 ~ /sys_enter/ { name = $3; sub(/.*sys_enter_?/, "", name);
      if (name == "") name = "all"; if ($1 > 0) printf " %s %.2f", name, $1 / n }' "$TMP/perf"
    echo
  done
fi
