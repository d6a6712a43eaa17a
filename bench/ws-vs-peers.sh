#!/usr/bin/env bash
# ws-vs-peers: WebSocket echo messages/s and client CPU per message of `serverbench load ws://`
# against uWebSockets' own load generator (benchmarks/load_test.c, the fastest WebSocket client
# we can build here) and tcpkali --ws, interleaved in one run against the same server.
#
# Each server (SERVERS, default node/uws and rust/actix-web: set up with `serverbench setup`)
# runs alone on CPU 0 (`serverbench serve`, WORKERS=1); every client is pinned to CPU 1 with one
# thread and CONNS connections, one message in flight per connection, `hello world`-sized text
# messages, for DURATION, ROUNDS times in the order serverbench, load_test, tcpkali.
#   serverbench  `load -t 1 -c CONNS ws://…/ws`: messages echoed (each matched byte for byte).
#   load_test    uWebSockets' benchmarks/load_test.c (LOAD_TEST: the binary). It sends one
#                masked frame per connection and counts echoes, printing Msg/sec every 4 s (so
#                it runs for the first multiple of 4 s at or above DURATION, plus 1 s, and its
#                output is line-buffered: a SIGINT'd stdio buffer is lost). Its upgrade request
#                targets `/`: build a copy that asks for `/ws`, outside this repository, from
#                fetched snapshots of uNetworking/uWebSockets and uSockets (replace `GET / ` by
#                `GET /ws ` in load_test.c; cc -O3 -DLIBUS_NO_SSL -I uSockets/src with
#                uSockets/src/*.c, src/eventing/*.c, src/crypto/*.c and -lz). It checks no
#                accept key and no echo bytes.
#   tcpkali      `tcpkali --ws -c CONNS -m MESSAGE` (TCPKALI: the binary, built from a fetched
#                snapshot of satori-com/tcpkali): it streams frames as fast as the socket takes
#                them instead of waiting for each echo, so its figure is frames received per
#                second (bytes received / frame size), a different load; shown for reference.
# Client CPU is user+system from rusage of the child process, the same way for every tool.
# tcpkali leaves the server echoing its backlog for seconds after it exits, so every client
# starts only once the server's process tree has gone quiet (settle: <5% CPU over 0.5 s).
# Nothing fetched is built or kept by this script: the peers are binaries you give it.
# SERVERBENCH_BEFORE=path/to/an/older/serverbench: before and after in one interleaved run. That
# binary runs as well, with serverbench's flags, right after serverbench in each round (the
# client serverbench-before), and the summary at the end gives each client's medians and
# serverbench's after/before ratios per server (medians, and paired by round) beside each
# side's spread over the rounds ((max - min) / median).
# Usage: bench/ws-vs-peers.sh   (env: SERVERS="node/uws rust/actix-web" CONNS=16 DURATION=5
#        ROUNDS=3 LOAD_TEST=… TCPKALI=… SERVERBENCH=path/to/serverbench
#        SERVERBENCH_BEFORE=path/to/serverbench)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-$ROOT/target/release/serverbench}
SERVERS=${SERVERS:-node/uws rust/actix-web}
CONNS=${CONNS:-16}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
MESSAGE=${MESSAGE:-hello world}
BEFORE=${SERVERBENCH_BEFORE:-}
if [ -n "$BEFORE" ] && [ ! -x "$BEFORE" ]; then
  echo "ws-vs-peers: SERVERBENCH_BEFORE=$BEFORE is not an executable" >&2
  exit 1
fi

[ -x "$SB" ] || (cd "$ROOT" && cargo build --release --locked -p serverbench)
if [ "$(nproc)" -lt 2 ]; then
  echo "ws-vs-peers: needs 2 CPUs (server on 0, client on 1)" >&2
  exit 1
fi
TMP=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -- -"$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

LOAD_TEST=${LOAD_TEST:-}
[ -n "$LOAD_TEST" ] || echo "ws-vs-peers: LOAD_TEST not given: no load_test column" >&2
TCPKALI=${TCPKALI:-}
[ -n "$TCPKALI" ] || echo "ws-vs-peers: TCPKALI not given: no tcpkali column" >&2

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Runs a command pinned to CPU 1 for at most its own duration + 5 s; stdout to $1, prints the
# child's CPU seconds.
cpu_of() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    subprocess.run(["taskset", "-c", "1"] + sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.4f}")
PY
}

run_serverbench() { # url [binary] -> "msgs/s cpu_us_per_msg"
  local cpu
  cpu=$(cpu_of "$TMP/out" "${2:-$SB}" load -q -t 1 -c "$CONNS" -d "${DURATION}s" --message "$MESSAGE" --json "$1")
  python3 - "$TMP/out" "$cpu" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n, cpu = r["requests"], float(sys.argv[2])
assert r["errors"].get("protocol", r["errors"].get("ws")) == 0, r.get("protocol", r.get("ws"))  # schema 3, or 1 and 2 (before)
print(f"{r['rps']:.0f} {cpu * 1e6 / max(n, 1):.2f}")
PY
}

run_load_test() { # port -> "msgs/s cpu_us_per_msg": the mean of its 4 s Msg/sec lines
  local cpu
  local windows=$(((DURATION + 3) / 4))
  cpu=$(cpu_of "$TMP/out" timeout -s INT "$((windows * 4 + 1))" stdbuf -oL "$LOAD_TEST" "$CONNS" 127.0.0.1 "$1" 0 0 "${#MESSAGE}")
  python3 - "$TMP/out" "$cpu" "$windows" <<'PY'
import sys
rates = [float(l.split()[1]) for l in open(sys.argv[1]) if l.startswith("Msg/sec")]
assert rates, "load_test printed no Msg/sec line"
# The first window holds its ramp-up (it connects one socket after the other): left out of the
# rate when there are others; the CPU is divided by every message it counted.
steady = rates[1:] or rates
cpu = float(sys.argv[2])
print(f"{sum(steady) / len(steady):.0f} {cpu * 1e6 / max(sum(rates) * 4, 1):.2f}")
PY
}

run_tcpkali() { # port -> "frames/s cpu_us_per_frame"
  local cpu
  cpu=$(cpu_of "$TMP/out" "$TCPKALI" --ws -c "$CONNS" -m "$MESSAGE" -T "${DURATION}s" "127.0.0.1:$1/ws")
  python3 - "$TMP/out" "$cpu" "$DURATION" "${#MESSAGE}" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"Total data received:.*\((\d+) bytes\)", text)
assert m, "tcpkali printed no 'Total data received' line"
got = int(m.group(1))
frames = got / (int(sys.argv[4]) + 2)
cpu, secs = float(sys.argv[2]), float(sys.argv[3])
print(f"{frames / secs:.0f} {cpu * 1e6 / max(frames, 1):.2f}")
PY
}

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh" # settle

: >"$TMP/results"
row() { # server client round rate cpu: printed, and kept for the summary
  printf '%-16s %-18s %5s %12s %14s\n' "$@"
  echo "$*" >>"$TMP/results"
}
printf '%-16s %-18s %5s %12s %14s\n' server client round msg/s "client µs/msg"
for server in $SERVERS; do
  PORT=$(free_port)
  setsid taskset -c 0 env WORKERS=1 "$SB" serve "$server" --port "$PORT" >"$TMP/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.2
  done
  for round in $(seq "$ROUNDS"); do
    settle "$SERVER_PID"
    read -r rate cpu < <(run_serverbench "ws://127.0.0.1:$PORT/ws")
    row "$server" serverbench "$round" "$rate" "$cpu"
    if [ -n "$BEFORE" ]; then
      settle "$SERVER_PID"
      read -r rate cpu < <(run_serverbench "ws://127.0.0.1:$PORT/ws" "$BEFORE")
      row "$server" serverbench-before "$round" "$rate" "$cpu"
    fi
    if [ -n "$LOAD_TEST" ]; then
      settle "$SERVER_PID"
      read -r rate cpu < <(run_load_test "$PORT")
      row "$server" load_test "$round" "$rate" "$cpu"
    fi
    if [ -n "$TCPKALI" ]; then
      settle "$SERVER_PID"
      read -r rate cpu < <(run_tcpkali "$PORT")
      row "$server" tcpkali "$round" "$rate" "$cpu"
    fi
  done
  kill -- -"$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
done

python3 - "$TMP/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
keys = list(dict.fromkeys((r[0], r[1]) for r in rows))
print()
print("| server | client | msg/s (median) | client µs/msg (median) |")
print("|---|---|---:|---:|")
for server, client in keys:
    rs = [r for r in rows if (r[0], r[1]) == (server, client)]
    rate = statistics.median(float(r[3]) for r in rs)
    cpu = statistics.median(float(r[4]) for r in rs)
    print(f"| {server} | {client} | {rate:,.0f} | {cpu:.2f} |")
spread = lambda xs: (max(xs) - min(xs)) / statistics.median(xs)
for server in dict.fromkeys(r[0] for r in rows):
    a = [r for r in rows if r[0] == server and r[1] == "serverbench"]
    b = [r for r in rows if r[0] == server and r[1] == "serverbench-before"]
    if not a or not b:
        continue
    med = lambda rs, k: statistics.median(float(r[k]) for r in rs)
    rate_p = statistics.median(float(y[3]) / float(x[3]) for x, y in zip(b, a))
    cpu_p = statistics.median(float(y[4]) / float(x[4]) for x, y in zip(b, a))
    print(f"{server}: serverbench after/before rate {med(a, 3) / med(b, 3):.3f}x, CPU per "
          f"message {med(a, 4) / med(b, 4):.3f}x; paired by round: {rate_p:.3f}x rate, "
          f"{cpu_p:.3f}x CPU; spread over rounds rate {spread([float(r[3]) for r in a]):.1%} "
          f"after, {spread([float(r[3]) for r in b]):.1%} before; CPU "
          f"{spread([float(r[4]) for r in a]):.1%} after, {spread([float(r[4]) for r in b]):.1%} before")
PY
