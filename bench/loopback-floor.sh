#!/usr/bin/env bash
# loopback-floor: what a closed-loop HTTP/1.1 client costs per request on loopback against nginx,
# and how much of it is the kernel's TCP/loopback work that no client can avoid (issue 26).
#
# nginx (one worker) is pinned to CPU 0 and serves `location /hello { return 200 "Hello World!"; }`;
# every client runs pinned to CPU 1 with one thread and 50 keep-alive connections (wrk -t1 -c50,
# h2load --h1 -t1 -c50, oha --worker-threads 1 -c50, serverbench load -t1 -c50). Both run in a private network
# namespace (its own lo) so the TCP counters count this benchmark's segments only. Per tool and
# round, interleaved, three runs:
#   clean   DURATION seconds, nothing attached: req/s, client user and system CPU from rusage of
#           the child (tick-sampled split, 250 Hz here), nginx worker CPU from /proc/<pid>/stat,
#           TCP segments from `nstat -asz` in the namespace (client and server sockets are both
#           in it: every segment counts once in TcpOutSegs and once in TcpInSegs);
#   strace  `strace -f -c` over STRACE_REQUESTS requests (wrk has no -n: STRACE_SECONDS and its
#           own count): system calls per request and the top three. strace slows the client
#           several times over; this run only counts;
#   perf    (when `perf record` works) DURATION seconds under `perf record -F 2000 -g` (cpu-clock):
#           each sample of the client's threads is put in one bucket by its call chain: user;
#           kernel TCP/IP and loopback (any frame of tcp_*, ip_*, inet_*, skb_*, sk_*, net_rx_action,
#           netif_*, loopback_xmit, __dev_queue_xmit, lock_sock/release_sock, except tcp_poll and
#           sock_poll, which serve epoll); event wait (epoll, io_uring, poll, select); other kernel
#           (syscall entry/exit, VFS and socket layer above TCP, scheduler, faults, timers).
#           The shares are applied to the clean run's CPU per request.
# The floor is the smallest kernel TCP/IP+loopback CPU per request among the tools: that work
# (send path, the receiver's softirq processing of the request, which loopback runs in the
# sender's context, the copy out of the response, ACKs, waking the peer) is done for any client
# that sends one request and reads one response per round trip, whatever its event loop.
# Tools: wrk, h2load --h1 (nghttp2-client), oha (built once with `cargo install oha --locked`
# into $OHA_ROOT, never committed; skipped with the reason when it cannot be built), serverbench;
# when `serverbench load --help` offers --io, serverbench-epoll and serverbench-uring instead.
# Usage: bench/loopback-floor.sh   (env: DURATION=5 ROUNDS=3 STRACE_REQUESTS=20000
#        STRACE_SECONDS=2 TOOLS="wrk h2load oha serverbench" SERVERBENCH=path OHA=path PERF=0
#        SHOW_SYMBOLS=1: the six hottest leaf functions of each bucket, per perf run, on stderr)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-$ROOT/target/release/serverbench}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
STRACE_REQUESTS=${STRACE_REQUESTS:-20000}
STRACE_SECONDS=${STRACE_SECONDS:-2}
TOOLS=${TOOLS:-wrk h2load oha serverbench}
OHA_ROOT=${OHA_ROOT:-$HOME/.cache/serverbench-bench/oha}
CONNS=50

need=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v h2load >/dev/null 2>&1 || need+=(nghttp2-client)
command -v strace >/dev/null 2>&1 || need+=(strace)
command -v nstat >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v taskset >/dev/null 2>&1 || need+=(util-linux)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "loopback-floor: needs sudo apt-get install -y ${need[*]}" >&2
    exit 1
  fi
  echo "installing ${need[*]} from apt (no service is started: policy-rc.d exits 101)" >&2
  policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
  if [ -n "$policy" ]; then rm -f "$policy"; fi
fi
# perf counts only (optional): Debian's linux-perf, if missing and installable.
PERF=${PERF:-1}
if [ "$PERF" = 1 ] && ! command -v perf >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  apt-get install -y -qq --no-install-recommends linux-perf >/dev/null 2>&1 || true
fi
if [ "$PERF" = 1 ] && ! { command -v perf >/dev/null 2>&1 && perf record -q -o /dev/null -- true >/dev/null 2>&1; }; then
  echo "loopback-floor: perf record does not work here: no kernel share (PERF=0)" >&2
  PERF=0
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ "$(id -u)" != 0 ]; then
  echo "loopback-floor: needs root (a private network namespace, perf)" >&2
  exit 1
fi
if [ "$(nproc)" -lt 2 ]; then
  echo "loopback-floor: needs 2 CPUs (server on 0, client on 1)" >&2
  exit 1
fi
if [ ! -x "$SB" ]; then
  (cd "$ROOT" && cargo build --release -p serverbench)
fi

# oha: crates.io only; built once into $OHA_ROOT.
OHA=${OHA:-$OHA_ROOT/bin/oha}
expanded=()
for tool in $TOOLS; do
  case $tool in
    oha)
      if [ ! -x "$OHA" ]; then
        echo "building oha into $OHA_ROOT (cargo install oha --locked; once)" >&2
        mkdir -p "$OHA_ROOT"
        if ! cargo install oha --locked --root "$OHA_ROOT" >"$OHA_ROOT.log" 2>&1; then
          echo "oha: not installable here ($(grep -m1 -E '^error' "$OHA_ROOT.log" || echo "cargo install failed, see $OHA_ROOT.log"))" >&2
          continue
        fi
      fi
      expanded+=(oha) ;;
    serverbench)
      if "$SB" load --help | grep -q -- '--io'; then expanded+=(serverbench-epoll serverbench-uring)
      else expanded+=(serverbench); fi ;;
    *) expanded+=("$tool") ;;
  esac
done
TOOLS=${expanded[*]}

NS=sbfloor-$$
TMP=$(mktemp -d)
NGINX_PID=
cleanup() {
  if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
  if [ -s "$TMP/nginx.pid" ]; then kill "$(cat "$TMP/nginx.pid")" 2>/dev/null || true; fi
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up
# nsenter execs its command (`ip netns exec` forks and waits): $! below is nginx's master itself.
in_ns() { nsenter --net="/run/netns/$NS" "$@"; }

PORT=8080
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
in_ns taskset -c 0 "$NGINX" -c "$TMP/nginx.conf" -p "$TMP" &
NGINX_PID=$!
for _ in $(seq 50); do
  in_ns bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null && break
  sleep 0.1
done
WORKER=$(pgrep -P "$(cat "$TMP/nginx.pid")" | head -1)
URL="http://127.0.0.1:$PORT/hello"

cmd_of() { # tool kind(time|count) -> the command line, one word a line
  local t=$DURATION
  case $1 in
    wrk) [ "$2" = count ] && t=$STRACE_SECONDS; printf '%s\n' wrk -t1 -c$CONNS -d"${t}s" "$URL" ;;
    h2load)
      if [ "$2" = count ]; then printf '%s\n' h2load --h1 -t1 -c$CONNS -n "$STRACE_REQUESTS" "$URL"
      else printf '%s\n' h2load --h1 -t1 -c$CONNS -D "$t" "$URL"; fi ;;
    oha)
      if [ "$2" = count ]; then printf '%s\n' "$OHA" --no-tui --output-format json --worker-threads 1 -c $CONNS -n "$STRACE_REQUESTS" "$URL"
      else printf '%s\n' "$OHA" --no-tui --output-format json --worker-threads 1 -c $CONNS -z "${t}s" "$URL"; fi ;;
    serverbench*)
      local io=()
      case $1 in serverbench-epoll) io=(--io epoll) ;; serverbench-uring) io=(--io uring) ;; esac
      if [ "$2" = count ]; then printf '%s\n' "$SB" load -t1 -c$CONNS -n "$STRACE_REQUESTS" "${io[@]}" --json "$URL"
      else printf '%s\n' "$SB" load -t1 -c$CONNS -d"${t}s" "${io[@]}" --json "$URL"; fi ;;
  esac
}

cat >"$TMP/measure.py" <<'PY'
# measure.py KIND TOOL TMP WORKER -- CMD...: runs CMD pinned to CPU 1 (under strace or perf for
# those kinds) inside the namespace and prints one line of figures for that kind.
import json, os, re, resource, subprocess, sys

kind, tool, tmp, worker = sys.argv[1:5]
cmd = sys.argv[6:]
out_path = os.path.join(tmp, "out")

def nstat():
    text = subprocess.run(["nstat", "-asz"], capture_output=True, text=True, check=True).stdout
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)", text, re.M)}

def worker_ticks():
    fields = open(f"/proc/{worker}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])

def requests_of(tool, text):
    if tool == "wrk":
        return int(re.search(r"(\d+) requests in", text).group(1))
    if tool == "h2load":
        return int(re.search(r"requests: .* (\d+) succeeded", text).group(1))
    if tool == "oha":
        r = json.loads(text)
        return sum(v for k, v in r["statusCodeDistribution"].items() if k.startswith("2"))
    return json.loads(text)["requests"]

def run(prefix):
    with open(out_path, "w") as out:
        subprocess.run(prefix + ["taskset", "-c", "1"] + cmd, stdout=out, stderr=subprocess.DEVNULL, check=True)
    return requests_of(tool, open(out_path).read())

if kind == "clean":
    before, (wu0, ws0) = nstat(), worker_ticks()
    t0 = os.times().elapsed
    reqs = run([])
    wall = os.times().elapsed - t0
    after, (wu1, ws1) = nstat(), worker_ticks()
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    hz = os.sysconf("SC_CLK_TCK")
    d = {k: after.get(k, 0) - before.get(k, 0) for k in ("TcpOutSegs", "TcpInSegs", "TcpExtDelayedACKs")}
    print(reqs, f"{reqs / wall:.0f}", f"{r.ru_utime:.4f}", f"{r.ru_stime:.4f}",
          d["TcpOutSegs"], d["TcpInSegs"], d["TcpExtDelayedACKs"],
          f"{(wu1 - wu0) / hz:.3f}", f"{(ws1 - ws0) / hz:.3f}")
elif kind == "strace":
    trace = os.path.join(tmp, "strace.txt")
    reqs = run(["strace", "-f", "-c", "-o", trace])
    calls = {}
    for line in open(trace):
        f = line.split()
        if len(f) >= 5 and re.match(r"^[\d.]+$", f[0]) and f[-1] != "total":
            calls[f[-1]] = int(f[3])
    top = sorted(calls.items(), key=lambda kv: -kv[1])[:3]
    print(reqs, sum(calls.values()), ",".join(f"{k}={v}" for k, v in top))
else:  # perf
    data = os.path.join(tmp, "perf.data")
    reqs = run(["perf", "record", "-q", "-F", "2000", "-g", "-o", data, "--"])
    script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,ip,sym,dso"],
                            capture_output=True, text=True, check=True).stdout
    net = re.compile(r"^(__)?(tcp_|ip_|ip4_|inet_|skb_|sk_|sock_def_|net_rx_action|netif_|napi_|"
                     r"process_backlog|loopback_xmit|dev_hard_start_xmit|dev_queue_xmit|"
                     r"lock_sock|release_sock|kfree_skb|alloc_skb|neigh_|nf_hook)")
    event = re.compile(r"^(__)?(x64_sys_)?(do_epoll_|ep_|epoll_|io_uring|io_|do_sys_poll|do_select|"
                       r"tcp_poll|sock_poll)")
    buckets = {"user": 0, "net": 0, "event": 0, "other": 0}
    leaves = {k: {} for k in buckets}

    def count(bucket, leaf):
        buckets[bucket] += 1
        leaves[bucket][leaf] = leaves[bucket].get(leaf, 0) + 1

    for block in script.split("\n\n"):
        lines = [l.split() for l in block.strip().splitlines()]
        frames = [(f[1].split("+")[0], f[-1]) for f in lines[1:] if len(f) >= 3]
        if not frames:
            continue
        if "kernel" not in frames[0][1]:
            count("user", frames[0][0])
            continue
        kernel = [s for s, dso in frames if "kernel" in dso]
        if any(net.match(s) and s not in ("tcp_poll", "sock_poll") for s in kernel):
            count("net", frames[0][0])
        elif any(event.match(s) for s in kernel):
            count("event", frames[0][0])
        else:
            count("other", frames[0][0])
    total = sum(buckets.values()) or 1
    if os.environ.get("SHOW_SYMBOLS") == "1":
        for k, syms in leaves.items():
            top = sorted(syms.items(), key=lambda kv: -kv[1])[:6]
            print(f"  {tool} {k}: " + ", ".join(f"{s} {n / total:.1%}" for s, n in top), file=sys.stderr)
    print(reqs, total, *(f"{buckets[k] / total:.4f}" for k in ("user", "net", "event", "other")))
PY

measure() { # kind tool
  local cmd=()
  mapfile -t cmd < <(cmd_of "$2" "$([ "$1" = strace ] && echo count || echo time)")
  in_ns python3 "$TMP/measure.py" "$1" "$2" "$TMP" "$WORKER" -- "${cmd[@]}"
}

kinds="clean strace"
[ "$PERF" = 1 ] && kinds="$kinds perf"
: >"$TMP/results"
echo "loopback-floor: tools $TOOLS; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for round in $(seq "$ROUNDS"); do
  for tool in $TOOLS; do
    for kind in $kinds; do
      line=$(measure "$kind" "$tool")
      echo "$kind $tool $line" >>"$TMP/results"
      echo "round $round: $kind $tool: $line" >&2
    done
  done
done
echo "loopback-floor: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$TMP/results" "$PERF" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
perf = sys.argv[2] == "1"
tools = list(dict.fromkeys(r[1] for r in rows))
med = lambda xs: st.median(xs) if xs else float("nan")
res = {}
for t in tools:
    clean = [list(map(float, r[2:])) for r in rows if r[0] == "clean" and r[1] == t]
    tr = [r[2:] for r in rows if r[0] == "strace" and r[1] == t]
    pf = [list(map(float, r[2:])) for r in rows if r[0] == "perf" and r[1] == t]
    c = {
        "rps": med([x[1] for x in clean]),
        "user": med([x[2] * 1e6 / x[0] for x in clean]),
        "sys": med([x[3] * 1e6 / x[0] for x in clean]),
        "total": med([(x[2] + x[3]) * 1e6 / x[0] for x in clean]),
        "segs": med([x[4] / x[0] for x in clean]),
        "nginx": med([(x[7] + x[8]) * 1e6 / x[0] for x in clean]),
        "sc": med([int(x[1]) / int(x[0]) for x in tr]),
    }
    last = max(tr, key=lambda x: int(x[0]))  # the top three of the run with the most requests
    c["top"] = " ".join(f"{k} {int(v) / int(last[0]):.2f}" for k, v in
                        (kv.split("=") for kv in last[2].split(",")))
    for i, k in enumerate(("p_user", "p_net", "p_event", "p_other")):
        c[k] = med([x[2 + i] for x in pf])
    res[t] = c

print("| tool | req/s | user µs/req | sys µs/req | total µs/req | syscalls/req (top 3 per request) "
      "| TCP segs/req | nginx µs/req |")
print("|---|---:|---:|---:|---:|---|---:|---:|")
for t, c in res.items():
    print(f"| {t} | {c['rps']:,.0f} | {c['user']:.2f} | {c['sys']:.2f} | {c['total']:.2f} | "
          f"{c['sc']:.2f} ({c['top']}) | {c['segs']:.2f} | {c['nginx']:.2f} |")
if not perf:
    sys.exit(0)
print()
print("Where the client's CPU per request goes (perf cpu-clock shares x the clean run's total):")
print()
print("| tool | user µs/req | kernel TCP/IP+loopback µs/req | event wait (epoll/io_uring) µs/req "
      "| other kernel µs/req |")
print("|---|---:|---:|---:|---:|")
for t, c in res.items():
    print(f"| {t} | " + " | ".join(f"{c[k] * c['total']:.2f}" for k in ("p_user", "p_net", "p_event", "p_other"))
          + " |")
floor_tool = min(res, key=lambda t: res[t]["p_net"] * res[t]["total"])
floor = res[floor_tool]["p_net"] * res[floor_tool]["total"]
low_sys = min(res, key=lambda t: res[t]["sys"])
print()
print(f"floor: {floor:.2f} µs/request of kernel TCP/IP and loopback work in the client's context (the")
print(f"  lowest, {floor_tool}); any client sending one request and reading one response pays it.")
print(f"  Cross-check: the lowest system time is {res[low_sys]['sys']:.2f} µs/request ({low_sys}, "
      f"{res[low_sys]['sc']:.2f} system calls")
print("  per request): the floor plus what those calls cost on their own.")
for t, c in res.items():
    if t.startswith("serverbench"):
        print(f"{t}: {c['total']:.2f} µs/request, the floor is {floor / c['total']:.0%} of it; its own TCP/IP "
              f"work {c['p_net']:.0%},")
        print(f"  user {c['p_user']:.0%}, event wait {c['p_event']:.0%}, other kernel (syscall entry/exit, "
              f"socket layer, scheduler) {c['p_other']:.0%}")
PY
