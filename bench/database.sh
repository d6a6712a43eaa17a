#!/usr/bin/env bash
# database: issue 22's benchmark. `serverbench run suites/database.toml` with LAPS laps per point
# (default 5; release build), then the report: the medians and their spread (the summary
# tables' intervals), and the database table: each /db row's share of the database's floor (`of
# floor`: what pgbench got from the same database alone, /db's select at as many sessions as the
# pool lets a server use, the database on its lap CPUs and pgbench on the client CPUs, measured
# by the run itself at its end) and the database's share of the server-side CPU (`db CPU`).
# The goal (issue 22): the best server at 0.8 of the floor or more.
# The run starts its own PostgreSQL and stops it; nothing is left running (the run's Ctrl-C
# handling stops servers and database; this script only waits for it).
# Usage: bench/database.sh
#   env: LAPS=5  SERVERS=a,b (default: the suite's, every server with the features)
#        SUITE=suites/database.toml  RESULTS=folder (default: a temporary one, kept and printed)
#        SERVERBENCH=path (default: target/release/serverbench, built here)
#        EXTRA="--db-cpus 0 ..." (more `run` flags)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
LAPS=${LAPS:-5}
SUITE=${SUITE:-suites/database.toml}
SB=${SERVERBENCH:-}
if [ -z "$SB" ]; then
  cargo build -q --release -p serverbench
  SB=$ROOT/target/release/serverbench
fi
RESULTS=${RESULTS:-$(mktemp -d /tmp/serverbench-database.XXXXXX)}
args=(run "$SUITE" --laps "$LAPS" --results "$RESULTS")
[ -n "${SERVERS:-}" ] && args+=(--servers "$SERVERS")
# shellcheck disable=SC2206 # EXTRA is a list of flags on purpose
[ -n "${EXTRA:-}" ] && args+=($EXTRA)

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
echo "command: $SB ${args[*]}"
start=$(date +%s)
"$SB" "${args[@]}" >"$RESULTS/run.log" 2>&1 || {
  echo "the run failed (its log: $RESULTS/run.log):" >&2
  tail -20 "$RESULTS/run.log" >&2
  exit 1
}
dir=$(ls -d "$RESULTS"/*/ | tail -1)
echo "took $(($(date +%s) - start)) s; load average $(cut -d' ' -f1-3 /proc/loadavg) after"
grep -E '^database floor' "$RESULTS/run.log" || echo "no database floor in the run's log"
"$SB" report "$dir" | tee "$RESULTS/report.txt"
"$SB" report "$dir" --format markdown >"$RESULTS/report.md"
echo "results: $dir (report: $RESULTS/report.txt, $RESULTS/report.md)"
