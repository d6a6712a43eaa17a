#!/usr/bin/env bash
# disturbance: issue 25's demonstration. A small suite (c/epoll, c/nginx, go/net-http; GET /hello,
# 50 connections, LAPS laps of DURATION s, interleaved) runs while a busy loop pinned to the
# servers' CPU (CPU 0 under the default pinning) runs for part of the time, started and stopped by
# this script by PID. Then:
#   1. the laps the record flags as disturbed, with their causes (from results.jsonl);
#   2. `serverbench report DIR` (disturbed rows marked !) and `report DIR --drop-disturbed`;
#   3. the same suite with `--until-ci 5% --min-laps 3 --max-laps MAX_LAPS` and no disturbance:
#      how many laps each cell needed.
# Leaves nothing running. Usage: bench/disturbance.sh   (env: LAPS=6 DURATION=3 MAX_LAPS=8
# BUSY_FROM=25 BUSY_FOR=30 SERVERBENCH=path)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-}
if [ -z "$SB" ]; then
  if [ -x "$ROOT/target/release/serverbench" ]; then SB=$ROOT/target/release/serverbench
  else (cd "$ROOT" && cargo build -q -p serverbench) && SB=$ROOT/target/debug/serverbench; fi
fi
LAPS=${LAPS:-6}
DURATION=${DURATION:-3}
MAX_LAPS=${MAX_LAPS:-8}
BUSY_FROM=${BUSY_FROM:-25}
BUSY_FOR=${BUSY_FOR:-30}
SERVERS='"c/epoll", "c/nginx", "go/net-http"'

WORK=$(mktemp -d /tmp/serverbench-disturbance.XXXXXX)
BUSY=""
cleanup() {
  if [ -n "$BUSY" ]; then kill "$BUSY" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

cat >"$WORK/disturbance.toml" <<TOML
name = "disturbance"
description = "bench/disturbance.sh: three fast servers, a busy loop on the servers' CPU for part of the run"
reproduces = "none"
servers = [$SERVERS]
laps = $LAPS
warmup = "1s"

[[scenario]]
name = "hello"
paths = ["/hello"]
requires = "hello"

[[profile]]
name = "c50"
connections = 50
duration = "${DURATION}s"
TOML

"$SB" setup c/epoll c/nginx go/net-http >/dev/null

echo "== run: $LAPS laps of ${DURATION}s; a busy loop on CPU 0 from ${BUSY_FROM}s for ${BUSY_FOR}s"
"$SB" run "$WORK/disturbance.toml" --results "$WORK/runs" >"$WORK/run.out" 2>"$WORK/run.err" &
RUN=$!
sleep "$BUSY_FROM"
taskset -c 0 sh -c 'while :; do :; done' &
BUSY=$!
echo "busy loop started (pid $BUSY) at $(date +%T)"
sleep "$BUSY_FOR"
kill "$BUSY"
wait "$BUSY" 2>/dev/null || true
BUSY=""
echo "busy loop stopped at $(date +%T)"
wait "$RUN" || echo "(run exited $?)"
grep -E "^machine:" "$WORK/run.err" || true
DIR=$(ls -d "$WORK"/runs/*/ | head -1)

echo
echo "== laps flagged by their disturbance record (lap start time, req/s, causes)"
python3 - "$DIR/results.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    d = r.get("disturbance") or {}
    causes = ", ".join(f"{c['cause']} {c.get('pct', c.get('events'))}" for c in d.get("causes", []))
    rps = (r.get("load") or {}).get("rps") or 0
    print(f"{r['started_at'][11:19]}  {r['server']:<12} lap {r['lap']}  {rps:>9,.0f} req/s  "
          f"steal {d.get('steal_pct', 0):4.1f}%  others {d.get('other_processes_pct', 0):5.1f}%  "
          f"{'DISTURBED: ' + causes if causes else ''}")
PY

echo
echo "== serverbench report (every lap)"
"$SB" report "$DIR"
echo "== serverbench report --drop-disturbed"
"$SB" report "$DIR" --drop-disturbed

echo
echo "== run --until-ci 5% --min-laps 3 --max-laps $MAX_LAPS (no busy loop)"
"$SB" run "$WORK/disturbance.toml" --results "$WORK/ci" --until-ci 5% --min-laps 3 \
  --max-laps "$MAX_LAPS" 2>/dev/null | grep -E "^(until-ci|not clear)"
