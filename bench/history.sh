#!/usr/bin/env bash
# Times `serverbench history import` of 1,000 synthetic runs and `history check` over the
# resulting 1,000-run series (goal: the check under 1 s), and prints the history file's size.
# Usage: bench/history.sh [N]   (SERVERBENCH=path/to/serverbench to use a given binary;
# PROFILE=release builds the release binary, default: the dev build)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
profile=${PROFILE:-dev}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
flag=(); [ "$profile" = release ] && flag=(--release)
target=debug; [ "$profile" = release ] && target=release
cargo build -q "${flag[@]}" -p serverbench-history --example synth_runs
if [ -z "${SERVERBENCH:-}" ]; then
  cargo build -q "${flag[@]}" -p serverbench
  SERVERBENCH=target/$target/serverbench
fi
"target/$target/examples/synth_runs" "$dir/runs" "$n"
db="$dir/history.db"
start=$(date +%s.%N)
"$SERVERBENCH" history import --history "$db" "$dir"/runs/* 2>/dev/null
mid=$(date +%s.%N)
set +e
"$SERVERBENCH" history check --history "$db" > "$dir/check.txt"
code=$?
set -e
end=$(date +%s.%N)
checks=()
for i in 1 2 3 4 5; do
  s=$(date +%s.%N)
  "$SERVERBENCH" history check --history "$db" > /dev/null || true
  e=$(date +%s.%N)
  checks+=("$(echo "$e - $s" | bc)")
done
size=$(stat -c %s "$db")
wal=$( [ -f "$db-wal" ] && stat -c %s "$db-wal" || echo 0)
echo "runs: $n ($profile build: $SERVERBENCH)"
echo "import: $(echo "$mid - $start" | bc) s"
echo "check:  $(echo "$end - $mid" | bc) s (exit $code), then ${checks[*]} s"
echo "file:   $size bytes (+ $wal bytes of WAL)"
grep -m1 '^regression:' "$dir/check.txt" || true
