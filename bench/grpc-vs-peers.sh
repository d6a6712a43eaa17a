#!/usr/bin/env bash
# grpc-vs-peers: unary gRPC calls/s and client CPU per call of `serverbench load grpc://` against
# h2load posting a pre-serialized request (HttpArena's method) and ghz (the gRPC-native load
# tool), interleaved in one run against the same servers; then a server failing every call.
#
# Part 1. Each server (SERVERS, default rust/tonic and go/grpc-go: set up with `serverbench setup
# rust/tonic go/grpc-go`) runs alone on CPU 0 (`serverbench serve`, WORKERS=1); every client is
# pinned to CPU 1 with one thread and calls serverbench.Bench/Sum(a = 20, b = 22) over h2c with
# CONNS connections and CONNS x STREAMS calls in flight, for DURATION seconds, ROUNDS times in the
# order serverbench, h2load, ghz. Matched concurrency, each tool in its own words:
#   serverbench  `load -t 1 -c CONNS -m STREAMS --verify`: CONNS HTTP/2 connections, STREAMS calls
#                in flight on each. Judges every call: :status 200, content-type
#                application/grpc, the length-prefixed framing, the grpc-status trailer (a
#                non-zero code fails the call, counted by code), and with --verify the reply
#                decoded and compared with 42.
#   h2load       `-t 1 -c CONNS -m STREAMS -d sum.bin -H 'content-type: application/grpc'
#                -H 'te: trailers'`: the same connections and streams, each stream POSTing the
#                9 bytes of a length-prefixed SumRequest written once (HttpArena's unary-grpc
#                method). Judges :status only (2xx or 3xx is "succeeded"): it reads no trailer
#                and no reply.
#   ghz          `--connections CONNS -c CONNS*STREAMS --cpus 1`: ghz's -c is the number of
#                workers in all, each with one call in flight, spread round-robin over the
#                connections, so CONNS*STREAMS workers over CONNS connections is STREAMS calls
#                in flight per connection. It calls through grpc-go's client, which judges the
#                status (counted in statusCodeDistribution) and decodes each reply (no compare).
#                The calls in flight when -z ends the run (ghz closes its connections under
#                them: Unavailable, "use of closed network connection", or Canceled) are not
#                counted as calls here.
# Client CPU is user+system from rusage of the child process, the same way for every tool; each
# client starts once the server's process tree has gone quiet (<5% CPU over 0.5 s). The summary
# gives medians, ratios of medians and ratios paired by round, each side's spread over the rounds
# ((max - min) / median), and the issue's goals: serverbench at >= 1x h2load's calls/s and
# <= 0.8x its client CPU per call; >= 10x ghz's calls per client CPU second. A goal missed is printed as NOT met (exit 0, as bench/engine-vs-wrk.sh does); a tool
# that fails or misjudges a call on a healthy server stops the script (exit 1).
#
# Part 2. bench/grpc-status13 (a bench-only Go program: HTTP 200 and grpc-status 13 INTERNAL,
# trailers-only, on every call) on CPU 0; h2load and serverbench run against it as above, once,
# for STATUS13_DURATION seconds: h2load counts every call as succeeded, serverbench every call as
# an error, by code (and ghz, as grpc-go's client does, every call as Internal).
#
# ghz is built with the Go module proxy into $SERVERBENCH_CACHE/ghz/GHZ_VERSION (default
# ~/.cache/serverbench), outside this repository, unless GHZ names a binary; h2load comes from
# Debian's nghttp2-client (installed from apt if missing; no service is started).
# Usage: bench/grpc-vs-peers.sh   (env: SERVERS="rust/tonic go/grpc-go" CONNS=16 STREAMS=16
#        DURATION=5 ROUNDS=3 TOOLS="serverbench h2load ghz" STATUS13_DURATION=3
#        SERVERBENCH=path/to/serverbench GHZ=path/to/ghz GHZ_VERSION=v0.121.0)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-$ROOT/target/release/serverbench}
SERVERS=${SERVERS:-rust/tonic go/grpc-go}
CONNS=${CONNS:-16}
STREAMS=${STREAMS:-16}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
TOOLS=${TOOLS:-serverbench h2load ghz}
STATUS13_DURATION=${STATUS13_DURATION:-3}
GHZ_VERSION=${GHZ_VERSION:-v0.121.0}
CACHE=${SERVERBENCH_CACHE:-$HOME/.cache/serverbench}
GHZ=${GHZ:-}
METHOD=serverbench.Bench/Sum

for tool in $TOOLS; do
  case $tool in
    serverbench | h2load | ghz) ;;
    *) echo "grpc-vs-peers: unknown tool $tool in TOOLS (serverbench, h2load, ghz)" >&2; exit 2 ;;
  esac
done
if [ "$(nproc)" -lt 2 ]; then
  echo "grpc-vs-peers: needs 2 CPUs (server on 0, client on 1)" >&2
  exit 1
fi
missing=()
command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
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
command -v go >/dev/null 2>&1 || { echo "grpc-vs-peers: needs go (ghz and bench/grpc-status13)" >&2; exit 1; }
[ -x "$SB" ] || (cd "$ROOT" && cargo build --release --locked -p serverbench)
if [[ " $TOOLS " == *" ghz "* ]]; then
  if [ -z "$GHZ" ]; then
    GHZ=$CACHE/ghz/$GHZ_VERSION/ghz
    if [ ! -x "$GHZ" ]; then
      echo "building ghz $GHZ_VERSION into $(dirname "$GHZ") (Go module proxy)" >&2
      GOBIN=$(dirname "$GHZ") go install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION" >&2
    fi
  fi
  [ -x "$GHZ" ] || { echo "grpc-vs-peers: GHZ=$GHZ is not an executable" >&2; exit 1; }
fi

TMP=$(mktemp -d)
SERVER_PID=
stop_server() {
  if [ -n "$SERVER_PID" ]; then kill -- -"$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  SERVER_PID=
}
cleanup() {
  stop_server
  rm -rf "$TMP"
}
trap cleanup EXIT

go build -C "$ROOT/bench/grpc-status13" -trimpath -o "$TMP/grpc-status13" . >&2
# SumRequest{a: 20, b: 22} with its 5-byte prefix (uncompressed, length 4): what h2load posts.
printf '\x00\x00\x00\x00\x04\x08\x14\x10\x16' >"$TMP/sum.bin"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { # port: up to 60 s for a server that may still be starting its runtime
  for _ in $(seq 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.2
  done
  echo "grpc-vs-peers: nothing listens on 127.0.0.1:$1 after 60 s (log: $TMP/server.log)" >&2
  cat "$TMP/server.log" >&2
  exit 1
}

# Runs a command pinned to CPU 1, ended by SIGINT if it outlives DURATION + 30 s; stdout to $1;
# prints the child's CPU seconds and exit code.
cpu_of() {
  python3 - "$((DURATION + 30))" "$@" <<'PY'
import resource, subprocess, sys
limit, out_path, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(out_path, "w") as out:
    p = subprocess.run(["timeout", "-s", "INT", "-k", "5", limit, "taskset", "-c", "1"] + cmd,
                       stdout=out, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.4f} {p.returncode}")
PY
}

# Each run_* prints one line: "calls calls/s cpu_s ok failed what_failed" (calls: answered).
run_serverbench() { # port duration
  local cpu code
  read -r cpu code < <(cpu_of "$TMP/out" "$SB" load -q -t 1 -c "$CONNS" -m "$STREAMS" --verify \
    -d "$2s" --json "grpc://127.0.0.1:$1/$METHOD")
  python3 - "$TMP/out" "$cpu" "$code" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit(f"serverbench printed no JSON (exit {sys.argv[3]})")
p = r["protocol"]
failed = sum(r["errors"].values())
codes = ",".join(f"{k}:{v}" for k, v in sorted(p["status_codes"].items()) if k != "OK") or "-"
print(r["requests"], f"{r['rps']:.0f}", sys.argv[2], r["requests"] - r["errors"].get("verdict", r["errors"].get("grpc", 0)), failed, codes)
PY
}

run_h2load() { # port duration
  local cpu code
  read -r cpu code < <(cpu_of "$TMP/out" h2load -t 1 -c "$CONNS" -m "$STREAMS" -D "$2" \
    -H 'content-type: application/grpc' -H 'te: trailers' -d "$TMP/sum.bin" \
    "http://127.0.0.1:$1/$METHOD")
  python3 - "$TMP/out" "$cpu" "$code" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"finished in [\d.]+\w*, ([\d.]+) req/s", text)
n = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored", text)
if not m or not n:
    sys.exit(f"h2load printed no summary (exit {sys.argv[3]})")
done, ok, failed, errored = map(int, n.groups())
print(done, f"{float(m.group(1)):.0f}", sys.argv[2], ok, failed + errored, "-")
PY
}

run_ghz() { # port duration
  local cpu code
  read -r cpu code < <(cpu_of "$TMP/out" "$GHZ" --insecure --proto "$ROOT/spec/serverbench.proto" \
    --call "$METHOD" -d '{"a":20,"b":22}' --connections "$CONNS" -c "$((CONNS * STREAMS))" \
    --cpus 1 -z "$2s" --format json "127.0.0.1:$1")
  python3 - "$TMP/out" "$cpu" "$code" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit(f"ghz printed no JSON (exit {sys.argv[3]})")
codes = dict(r.get("statusCodeDistribution") or {})
# In flight when -z ended the run, ghz closes its connections under them: not answered.
closed = sum(n for e, n in (r.get("errorDistribution") or {}).items()
             if "code = Unavailable" in e and "use of closed network connection" in e)
codes["Unavailable"] = codes.get("Unavailable", 0) - closed
calls = r["count"] - closed - codes.pop("Canceled", 0)
ok = codes.get("OK", 0)
others = ",".join(f"{k}:{v}" for k, v in sorted(codes.items()) if k != "OK" and v) or "-"
print(calls, f"{calls / (r['total'] / 1e9):.0f}", sys.argv[2], ok, calls - ok, others)
PY
}

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh" # settle

FORMAT='%-12s %-12s %5s %9s %9s %10s %9s %9s  %s\n'
: >"$TMP/results"
row() { # server tool round calls calls/s cpu ok failed what: printed, and kept for the summary
  local us
  us=$(python3 -c 'import sys; print(f"{float(sys.argv[2]) * 1e6 / max(int(sys.argv[1]), 1):.2f}")' "$4" "$6")
  # shellcheck disable=SC2059
  printf "$FORMAT" "$1" "$2" "$3" "$4" "$5" "$us" "$7" "$8" "$9"
  echo "$1 $2 $3 $4 $5 $us $7 $8 $9" >>"$TMP/results"
}
# shellcheck disable=SC2059
printf "$FORMAT" server client round calls calls/s "µs/call" ok failed "failed by code"
for server in $SERVERS; do
  PORT=$(free_port)
  setsid taskset -c 0 env WORKERS=1 "$SB" serve "$server" --port "$PORT" >"$TMP/server.log" 2>&1 &
  SERVER_PID=$!
  wait_port "$PORT"
  for round in $(seq "$ROUNDS"); do
    for tool in $TOOLS; do
      settle "$SERVER_PID"
      line=$("run_$tool" "$PORT" "$DURATION")
      read -r calls rate cpu ok failed what <<<"$line"
      row "$server" "$tool" "$round" "$calls" "$rate" "$cpu" "$ok" "$failed" "$what"
      if [ "$failed" != 0 ] || [ "$calls" = 0 ]; then
        echo "grpc-vs-peers: $tool failed $failed of $calls calls on $server: stopping" >&2
        exit 1
      fi
    done
  done
  stop_server
done

python3 - "$TMP/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = lambda rs, k: statistics.median(float(r[k]) for r in rs)
spread = lambda rs, k: (max(float(r[k]) for r in rs) - min(float(r[k]) for r in rs)) / med(rs, k)
print()
print("| server | client | calls/s (median) | client CPU µs/call (median) | calls per client CPU s |")
print("|---|---|---:|---:|---:|")
keys = list(dict.fromkeys((r[0], r[1]) for r in rows))
for server, tool in keys:
    rs = [r for r in rows if (r[0], r[1]) == (server, tool)]
    print(f"| {server} | {tool} | {med(rs, 4):,.0f} | {med(rs, 5):.2f} | {1e6 / med(rs, 5):,.0f} |")
print()
for server in dict.fromkeys(r[0] for r in rows):
    sb = [r for r in rows if r[0] == server and r[1] == "serverbench"]
    for peer in ("h2load", "ghz"):
        pr = [r for r in rows if r[0] == server and r[1] == peer]
        if not sb or not pr:
            continue
        rate, cpu = med(sb, 4) / med(pr, 4), med(sb, 5) / med(pr, 5)
        rate_p = statistics.median(float(s[4]) / float(p[4]) for s, p in zip(sb, pr))
        cpu_p = statistics.median(float(s[5]) / float(p[5]) for s, p in zip(sb, pr))
        if peer == "h2load":
            ok = "met" if rate >= 1.0 and cpu <= 0.8 else "NOT met"
            goal = ">= 1.00x calls/s at <= 0.80x CPU/call"
        else:
            ok = "met" if 1 / cpu >= 10 else "NOT met"
            goal = ">= 10x calls per CPU s"
        print(f"{server}: serverbench/{peer} calls/s {rate:.2f}x, CPU/call {cpu:.2f}x, calls per CPU s "
              f"{1 / cpu:.1f}x\n  goal {goal}: {ok}; paired by round: {rate_p:.2f}x calls/s, "
              f"{cpu_p:.2f}x CPU/call ({1 / cpu_p:.1f}x calls per CPU s)")
        print(f"  spread over rounds ((max - min) / median): CPU/call {spread(sb, 5):.0%} serverbench, "
              f"{spread(pr, 5):.0%} {peer}; calls/s {spread(sb, 4):.0%}, {spread(pr, 4):.0%}")
PY

echo
echo "A server answering every call with HTTP 200 and grpc-status 13 (bench/grpc-status13):"
PORT=$(free_port)
PORT=$PORT setsid taskset -c 0 "$TMP/grpc-status13" >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
wait_port "$PORT"
# shellcheck disable=SC2059
printf "$FORMAT" server client round calls calls/s "µs/call" ok failed "failed by code"
for tool in h2load serverbench ghz; do
  [[ " $TOOLS " == *" $tool "* ]] || continue
  settle "$SERVER_PID"
  read -r calls rate cpu ok failed what <<<"$("run_$tool" "$PORT" "$STATUS13_DURATION")"
  row status13 "$tool" 1 "$calls" "$rate" "$cpu" "$ok" "$failed" "$what"
done
stop_server
