#!/usr/bin/env bash
# h3-vs-peers: HTTP/3 req/s and client CPU per request of `serverbench load --http3` against
# h2load built with HTTP/3 (HttpArena's h3 load generator) and oha with its `http3` feature,
# interleaved in one run against the same catalog servers.
#
# Each server (SERVERS, default go/quic-go-http3 and rust/quinn-h3: set up with `serverbench
# setup go/quic-go-http3 rust/quinn-h3`) runs alone on CPU 0 (`serverbench serve`, one worker);
# its HTTP/3 port is the one its TLS_PORT announces by `Alt-Svc: h3=":PORT"` (the contract's h3
# rule). Every client is pinned to CPU 1 with one thread and GETs PATH (default /hello) over
# QUIC with CONNS connections and STREAMS requests in flight on each, for DURATION seconds,
# ROUNDS times in the order serverbench, [serverbench-before], h2load, oha. Each in its own words:
#   serverbench  `load --http3 -k -t 1 -c CONNS -m STREAMS --verify`: judges every answer, its
#                status and, with --verify, its body against the contract's.
#   h2load       `--alpn-list=h3 -t 1 -c CONNS -m STREAMS -D DURATION` (HttpArena's flags, at
#                2-core sizes: it runs -c 64 -m 64 -t 64): counts status classes only (2xx or
#                3xx is "succeeded"); compares no body.
#   oha          `--http-version 3 --insecure -c CONNS -p STREAMS -z DURATION --no-tui
#                --output-format json`: counts status codes (statusCodeDistribution); reads
#                each body, compares none. After -z it waits out QUIC's 30 s idle timeout
#                before reporting: its rate here is the answers over DURATION.
# Client CPU is user+system from rusage of the child process, the same way for every tool; each
# client starts once the server's process tree has gone quiet (<5% CPU over 0.5 s). A column
# whose binary is not given (H2LOAD, OHA) is skipped with a printed reason; a serverbench that
# cannot run HTTP/3 yet (the driver of issue 42 not in the binary) prints its failure as one
# line and the peers still run. The summary gives medians, ratios of medians and paired by
# round, each side's spread over the rounds ((max - min) / median), and the goal: serverbench at
# >= 1x h2load's req/s and <= 0.7x its client CPU per request. A goal missed is printed as NOT
# met (exit 0); a peer that fails requests on a healthy server is printed with its failures.
# SERVERBENCH_BEFORE=path/to/an/older/serverbench runs that binary too, with serverbench's flags,
# right after serverbench in each round (after/before ratios in the summary).
#
# The peers are binaries you give; nothing here builds them, and none of their sources is kept
# in this repository. How they were built for docs/results/h3.md (outside the repository, from
# fetched snapshots, as HttpArena's docker/h2load-h3.Dockerfile does):
#   quictls openssl-3.3.0-quic1: ./config --libdir=lib enable-tls1_3 no-shared; make install_sw
#   nghttp3 v1.18.0 (lib/sfparse at ngtcp2/sfparse's newest snapshot): --enable-lib-only
#   ngtcp2 v1.25.0: --with-openssl --enable-lib-only (crypto backend libngtcp2_crypto_quictls),
#     PKG_CONFIG_PATH at quictls
#   nghttp2 v1.69.0 (HttpArena's pin): --enable-app --enable-http3 --disable-examples
#     --disable-python-bindings CXXFLAGS=-std=c++20, PKG_CONFIG_PATH at the three above,
#     -Wl,-rpath to their lib dirs; gcc 12 and libev-dev from Debian 12
#   oha 1.16.0 from crates.io: cargo install oha --version 1.16.0 --features http3 --locked
# Usage: bench/h3-vs-peers.sh   (env: H2LOAD=path/to/h2load OHA=path/to/oha
#        SERVERS="go/quic-go-http3 rust/quinn-h3" CONNS=16 STREAMS=16 DURATION=5 ROUNDS=3
#        PATH_=/hello SERVERBENCH=path/to/serverbench SERVERBENCH_BEFORE=path/to/serverbench)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-$ROOT/target/release/serverbench}
SERVERS=${SERVERS:-go/quic-go-http3 rust/quinn-h3}
CONNS=${CONNS:-16}
STREAMS=${STREAMS:-16}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
REQ_PATH=${PATH_:-/hello}
H2LOAD=${H2LOAD:-}
OHA=${OHA:-}
BEFORE=${SERVERBENCH_BEFORE:-}

for bin in "$H2LOAD" "$OHA" "$BEFORE"; do
  if [ -n "$bin" ] && [ ! -x "$bin" ]; then
    echo "h3-vs-peers: $bin (H2LOAD, OHA or SERVERBENCH_BEFORE) is not an executable" >&2
    exit 1
  fi
done
[ -n "$H2LOAD" ] || echo "h3-vs-peers: H2LOAD not given: no h2load column (an h2load built with --enable-http3)" >&2
[ -n "$OHA" ] || echo "h3-vs-peers: OHA not given: no oha column (cargo install oha --features http3)" >&2
if [ "$(nproc)" -lt 2 ]; then
  echo "h3-vs-peers: needs 2 CPUs (server on 0, client on 1)" >&2
  exit 1
fi
command -v taskset >/dev/null 2>&1 || { echo "h3-vs-peers: needs taskset (util-linux)" >&2; exit 1; }
[ -x "$SB" ] || (cd "$ROOT" && cargo build --release --locked -p serverbench)
TOOLS=serverbench
[ -z "$BEFORE" ] || TOOLS+=" serverbench-before"
[ -z "$H2LOAD" ] || TOOLS+=" h2load"
[ -z "$OHA" ] || TOOLS+=" oha"

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

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits (up to 120 s: a server may still be building its runtime) for `serve` to say the server
# is ready (it waits for TLS_PORT and the UDP socket on H3_PORT), then prints the HTTP/3 port
# that TLS_PORT's Alt-Svc names.
h3_port_of() { # server tls_port
  for _ in $(seq 600); do
    grep -q ' is ready' "$TMP/server.log" && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.2
  done
  if ! grep -q ' is ready' "$TMP/server.log"; then
    echo "h3-vs-peers: $1 is not ready after 120 s (serve's log follows)" >&2
    cat "$TMP/server.log" >&2
    exit 1
  fi
  python3 - "$1" "$2" <<'PY'
import http.client, re, ssl, sys
server, port = sys.argv[1], int(sys.argv[2])
conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=ssl._create_unverified_context())
conn.request("GET", "/hello")
alt = conn.getresponse().getheader("alt-svc") or ""
m = re.search(r'h3=":(\d+)"', alt)
if not m:
    sys.exit(f"h3-vs-peers: {server}'s TLS_PORT {port} announces no h3 port (Alt-Svc: {alt!r})")
print(m.group(1))
PY
}

# Runs a command pinned to CPU 1, ended by SIGINT if it outlives DURATION + LIMIT_EXTRA (default
# 30) s; stdout to $1, stderr to $1.err; prints the child's CPU seconds and exit code.
cpu_of() {
  python3 - "$((DURATION + ${LIMIT_EXTRA:-30}))" "$@" <<'PY'
import resource, subprocess, sys
limit, out_path, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(out_path, "w") as out, open(out_path + ".err", "w") as err:
    p = subprocess.run(["timeout", "-s", "INT", "-k", "5", limit, "taskset", "-c", "1"] + cmd,
                       stdout=out, stderr=err)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.4f} {p.returncode}")
PY
}

# Each run_* prints one line: "requests req/s cpu_s ok failed what_failed", or "FAILED reason"
# when the tool gave no figures.
run_serverbench() { # port [binary]
  local cpu code
  read -r cpu code < <(cpu_of "$TMP/out" "${2:-$SB}" load -q --http3 -k -t 1 -c "$CONNS" \
    -m "$STREAMS" --verify -d "${DURATION}s" --json "https://127.0.0.1:$1$REQ_PATH")
  python3 - "$TMP/out" "$cpu" "$code" <<'PY'
import json, sys
out, cpu, code = sys.argv[1:]
try:
    r = json.load(open(out))
except ValueError:
    err = [l.strip() for l in open(out + ".err") if l.strip()]
    print("FAILED", f"exit {code}:", (err[0] if err else "no output")[:90])
    sys.exit()
failed = sum(r["errors"].values())
what = ",".join(f"{k}:{v}" for k, v in sorted(r["errors"].items()) if v) or "-"
print(r["requests"], f"{r['rps']:.0f}", cpu, r["requests"] - failed, failed, what)
PY
}

run_h2load() { # port
  local cpu code
  read -r cpu code < <(cpu_of "$TMP/out" "$H2LOAD" --alpn-list=h3 -t 1 -c "$CONNS" -m "$STREAMS" \
    -D "$DURATION" "https://127.0.0.1:$1$REQ_PATH")
  python3 - "$TMP/out" "$cpu" "$code" <<'PY'
import re, sys
out, cpu, code = sys.argv[1:]
text = open(out).read()
m = re.search(r"finished in [\d.]+\w*, ([\d.]+) req/s", text)
n = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored", text)
if not m or not n:
    err = [l.strip() for l in open(out + ".err") if l.strip()]
    print("FAILED", f"exit {code}: printed no summary", (err[0] if err else "")[:60])
    sys.exit()
done, ok, failed, errored = map(int, n.groups())
s = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text)
what = "-"
if failed or errored:
    what = f"failed:{failed},errored:{errored}" + (f",4xx:{s.group(3)},5xx:{s.group(4)}" if s else "")
print(done, f"{float(m.group(1)):.0f}", cpu, ok, failed + errored, what)
PY
}

# oha 1.16's HTTP/3 client waits out QUIC's idle timeout (30 s) on its connections after -z ends
# before it reports, and its requestsPerSec divides by that wait too: the rate here is the
# answers over -z's duration, and the limit on its run is 60 s past it.
run_oha() { # port
  local cpu code
  read -r cpu code < <(LIMIT_EXTRA=60 cpu_of "$TMP/out" "$OHA" --http-version 3 --insecure --no-tui \
    --output-format json -c "$CONNS" -p "$STREAMS" -z "${DURATION}s" "https://127.0.0.1:$1$REQ_PATH")
  python3 - "$TMP/out" "$cpu" "$code" "$DURATION" <<'PY'
import json, sys
out, cpu, code = sys.argv[1:4]
try:
    r = json.load(open(out))
except ValueError:
    err = [l.strip() for l in open(out + ".err") if l.strip()]
    print("FAILED", f"exit {code}: printed no JSON", (err[0] if err else "")[:60])
    sys.exit()
codes = {str(k): v for k, v in (r.get("statusCodeDistribution") or {}).items()}
errors = r.get("errorDistribution") or {}
# -z ends the run under the requests in flight; oha names them "aborted due to deadline".
aborted = sum(v for k, v in errors.items() if "deadline" in k)
answered = sum(codes.values())
ok = sum(v for k, v in codes.items() if k.startswith("2"))
others = {**{k: v for k, v in codes.items() if not k.startswith("2")},
          **{k[:40].replace(" ", "_"): v for k, v in errors.items() if "deadline" not in k}}
failed = sum(others.values())
what = ",".join(f"{k}:{v}" for k, v in sorted(others.items())) or "-"
print(ok + failed, f"{answered / float(sys.argv[4]):.0f}", cpu, ok, failed, what)
PY
}

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh" # settle

FORMAT='%-18s %-18s %5s %9s %9s %9s %9s %7s  %s\n'
: >"$TMP/results"
row() { # server tool round requests req/s cpu ok failed what: printed, and kept for the summary
  local us
  us=$(python3 -c 'import sys; print(f"{float(sys.argv[2]) * 1e6 / max(int(sys.argv[1]), 1):.2f}")' "$4" "$6")
  # shellcheck disable=SC2059
  printf "$FORMAT" "$1" "$2" "$3" "$4" "$5" "$us" "$7" "$8" "$9"
  echo "$1 $2 $3 $4 $5 $us $7 $8 $9" >>"$TMP/results"
}
echo "h3-vs-peers: GET $REQ_PATH, $CONNS connections x $STREAMS streams, ${DURATION}s, $ROUNDS rounds;" \
  "server on CPU 0, clients on CPU 1 (one thread)"
# shellcheck disable=SC2059
printf "$FORMAT" server client round requests req/s "µs/req" ok failed "failed by cause"
for server in $SERVERS; do
  PORT=$(free_port)
  TLS_PORT=$(free_port)
  setsid taskset -c 0 "$SB" serve "$server" --root "$ROOT" --workers 1 --port "$PORT" \
    --tls-port "$TLS_PORT" >"$TMP/server.log" 2>&1 &
  SERVER_PID=$!
  H3=$(h3_port_of "$server" "$TLS_PORT")
  for round in $(seq "$ROUNDS"); do
    for tool in $TOOLS; do
      settle "$SERVER_PID"
      case $tool in
        serverbench-before) line=$(run_serverbench "$H3" "$BEFORE") ;;
        *) line=$("run_$tool" "$H3") ;;
      esac
      if [[ $line == FAILED* ]]; then
        printf '%-18s %-18s %5s  %s\n' "$server" "$tool" "$round" "${line#FAILED }"
        continue
      fi
      read -r reqs rate cpu ok failed what <<<"$line"
      row "$server" "$tool" "$round" "$reqs" "$rate" "$cpu" "$ok" "$failed" "$what"
    done
  done
  stop_server
done

python3 - "$TMP/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
if not rows:
    sys.exit("h3-vs-peers: no client gave figures")
med = lambda rs, k: statistics.median(float(r[k]) for r in rs)
spread = lambda rs, k: (max(float(r[k]) for r in rs) - min(float(r[k]) for r in rs)) / med(rs, k)
print()
print("| server | client | req/s (median) | client CPU µs/req (median) | req per client CPU s | checks |")
print("|---|---|---:|---:|---:|---|")
checks = {"serverbench": "status and body (--verify)", "serverbench-before": "status and body (--verify)",
          "h2load": "status class only", "oha": "status code only"}
keys = list(dict.fromkeys((r[0], r[1]) for r in rows))
for server, tool in keys:
    rs = [r for r in rows if (r[0], r[1]) == (server, tool)]
    print(f"| {server} | {tool} | {med(rs, 4):,.0f} | {med(rs, 5):.2f} | {1e6 / med(rs, 5):,.0f} | {checks[tool]} |")
print()
for server in dict.fromkeys(r[0] for r in rows):
    sb = [r for r in rows if r[0] == server and r[1] == "serverbench"]
    for peer in ("serverbench-before", "h2load", "oha"):
        pr = [r for r in rows if r[0] == server and r[1] == peer]
        if not sb or not pr:
            continue
        rate, cpu = med(sb, 4) / med(pr, 4), med(sb, 5) / med(pr, 5)
        pairs = [(s, p) for s, p in zip(sb, pr) if s[2] == p[2]]
        rate_p = statistics.median(float(s[4]) / float(p[4]) for s, p in pairs) if pairs else float("nan")
        cpu_p = statistics.median(float(s[5]) / float(p[5]) for s, p in pairs) if pairs else float("nan")
        label = "after/before" if peer == "serverbench-before" else f"serverbench/{peer}"
        print(f"{server}: {label} req/s {rate:.2f}x, CPU/req {cpu:.2f}x; paired by round: "
              f"{rate_p:.2f}x req/s, {cpu_p:.2f}x CPU/req")
        if peer == "h2load":
            ok = "met" if rate >= 1.0 and cpu <= 0.7 else "NOT met"
            print(f"  goal >= 1.00x req/s at <= 0.70x CPU/req: {ok}")
        print(f"  spread over rounds ((max - min) / median): CPU/req {spread(sb, 5):.0%} serverbench, "
              f"{spread(pr, 5):.0%} {peer}; req/s {spread(sb, 4):.0%}, {spread(pr, 4):.0%}")
PY
