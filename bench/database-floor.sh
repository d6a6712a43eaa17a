#!/usr/bin/env bash
# database-floor: what serverbench's private PostgreSQL answers alone, with no framework in front
# (issue 22's floor: a reference rate, not a ceiling: a driver that pipelines can pass it; run
# measures pipeline mode too). pgbench (Debian's postgresql-15 ships it)
# against a fresh private cluster made by `serverbench db up` in a temporary cache, the database
# pinned to CPU 0 (--db-cpus 0), pgbench to CPU 1 (one thread), 16 clients over TCP on 127.0.0.1,
# prepared statements. Two workloads, interleaved, ROUNDS times DURATION seconds each:
#   select-only  `pgbench -S -M prepared` on pgbench's own tables (`pgbench -i -s 1`, made in the
#                same cluster's hello_world database: the cluster admits only that one);
#   world-by-id  a custom script: `SELECT id, randomnumber FROM world WHERE id = :id` with a
#                random id in 1..10,000, what a contract server's /db asks.
# Prints each run's selects/s and the median per workload. Leaves nothing running.
# Usage: bench/database-floor.sh   (env: DURATION=10 ROUNDS=3 CLIENTS=16 SERVERBENCH=path)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-}
if [ -z "$SB" ]; then
  if [ -x "$ROOT/target/release/serverbench" ]; then SB=$ROOT/target/release/serverbench
  else (cd "$ROOT" && cargo build -q -p serverbench) && SB=$ROOT/target/debug/serverbench; fi
fi
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-16}
PGBENCH=/usr/lib/postgresql/15/bin/pgbench

CACHE=$(mktemp -d /tmp/serverbench-dbfloor.XXXXXX)
chmod 755 "$CACHE" # mktemp's 0700 would keep the postgres user out (the data would go to /var/tmp)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export SERVERBENCH_CACHE=$CACHE SERVERBENCH_ROOT=$ROOT
cleanup() {
  "$SB" db down --db-port "$PORT" >/dev/null 2>&1 || true
  home=$(cat "$CACHE"/postgres/*/home 2>/dev/null || true)
  case "$home" in /var/tmp/serverbench-postgres/*) rm -rf "$home" ;; esac
  rm -rf "$CACHE"
}
trap cleanup EXIT INT TERM

"$SB" db up --db-port "$PORT" --db-cpus 0 >/dev/null
PGPASSWORD=$(cat "$CACHE"/postgres/*/password)
export PGPASSWORD
CONN=(-h 127.0.0.1 -p "$PORT" -U serverbench)
"$PGBENCH" -i -q -s 1 "${CONN[@]}" hello_world >/dev/null 2>&1
printf '\\set id random(1, 10000)\nSELECT id, randomnumber FROM world WHERE id = :id;\n' \
  >"$CACHE/world.sql"

run() { # $1: workload → selects/s
  local args=(-S)
  [ "$1" = world-by-id ] && args=(-f "$CACHE/world.sql")
  taskset -c 1 "$PGBENCH" -n "${args[@]}" -M prepared -c "$CLIENTS" -j 1 -T "$DURATION" \
    "${CONN[@]}" hello_world 2>/dev/null |
    awk '/^tps = / { printf "%.0f\n", $3 }'
}

declare -A results
echo "pgbench, $CLIENTS clients, ${DURATION}s runs, database on CPU 0, pgbench on CPU 1"
for round in $(seq 1 "$ROUNDS"); do
  for w in select-only world-by-id; do
    r=$(run "$w")
    results[$w]+="$r "
    printf '  round %d  %-12s %8s selects/s\n' "$round" "$w" "$r"
  done
done
for w in select-only world-by-id; do
  median=$(printf '%s\n' ${results[$w]} | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf 'median %-12s %8s selects/s  (runs: %s)\n' "$w" "$median" "${results[$w]% }"
done
