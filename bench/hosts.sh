#!/usr/bin/env bash
# hosts: the same server and load, single-host and over the network-namespace hosts of
# bench/netns-hosts.sh (server in sb-server, load from sb-client1 + sb-client2).
#
# Prints, per lap, the start skew between the client hosts (goal: under 1 ms), the controller's
# own CPU (this serverbench and its ssh clients), and the merged req/s next to the single-host
# req/s of the same server (expected close: in both runs server and load share all of this
# machine's CPUs).
#
# Usage: sudo bench/hosts.sh
#   env: SERVER=python/hello ROOT=crates/hosts/tests/fixtures/catalog LAPS=3 DURATION=3s
#        CONNECTIONS=8 WARMUP=1s SERVERBENCH=target/release/serverbench
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
SB=${SERVERBENCH:-$HERE/target/release/serverbench}
SERVER=${SERVER:-python/hello}
ROOT=${ROOT:-$HERE/crates/hosts/tests/fixtures/catalog}
LAPS=${LAPS:-3}
DURATION=${DURATION:-3s}
CONNECTIONS=${CONNECTIONS:-8}
WARMUP=${WARMUP:-1s}

[ "$(id -u)" -eq 0 ] || { echo "hosts.sh: needs root (network namespaces)" >&2; exit 1; }
if [ ! -x "$SB" ]; then
  (cd "$HERE" && cargo build --release -p serverbench)
fi
TMP=$(mktemp -d)
cleanup() {
  "$HERE/bench/netns-hosts.sh" down >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT

HOSTS=$("$HERE/bench/netns-hosts.sh" up | tail -1)
export SERVERBENCH_CACHE=${SERVERBENCH_CACHE:-$TMP/cache}
common=(run --root "$ROOT" --servers "$SERVER" --scenario hello -c "$CONNECTIONS"
  -d "$DURATION" --laps "$LAPS" --warmup "$WARMUP" --no-verify)

# Over the hosts every process may use every CPU of this machine: the single-host run is given
# the same, so that the two differ only by the network path, the barrier and the merge.
all="0-$(( $(nproc) - 1 ))"
echo "single host: $SERVER and the load on this machine, both on CPUs $all" >&2
# The same number of load threads in total: one per CPU, split between the two client hosts.
threads=$(nproc)
half=$(( threads / 2 > 0 ? threads / 2 : 1 ))
"$SB" "${common[@]}" --results "$TMP/single" --server-cpus "$all" --client-cpus "$all" \
  -t "$threads" >/dev/null
echo "netns hosts: $SERVER in sb-server, load from sb-client1 + sb-client2 ($half threads each)" >&2
"$SB" "${common[@]}" --results "$TMP/hosts" --hosts "$HOSTS" -t "$half" \
  --server-host sb-server --client-hosts sb-client1,sb-client2 >/dev/null

python3 - "$TMP/single" "$TMP/hosts" <<'EOF'
import glob, json, statistics, sys

def laps(parent):
    path = glob.glob(f"{parent}/*/results.jsonl")[0]
    return [json.loads(l) for l in open(path) if l.strip()]

single, hosts = laps(sys.argv[1]), laps(sys.argv[2])
print(f"{'lap':>3}  {'single req/s':>12}  {'hosts req/s':>11}  {'sb-client1':>10}  {'sb-client2':>10}  "
      f"{'skew ms':>7}  {'ctl CPU s':>9}")
for s, h in zip(single, hosts):
    per = {c["host"]: c["load"]["rps"] for c in h["hosts"]["clients"]}
    print(f"{s['lap']:>3}  {s['load']['rps']:>12,.0f}  {h['load']['rps']:>11,.0f}  "
          f"{per.get('sb-client1', 0):>10,.0f}  {per.get('sb-client2', 0):>10,.0f}  "
          f"{h['hosts']['start_skew_ms']:>7.3f}  {h['hosts']['controller_cpu_s']:>9.3f}")
skews = [h["hosts"]["start_skew_ms"] for h in hosts]
ratio = statistics.median(h["load"]["rps"] for h in hosts) / statistics.median(
    s["load"]["rps"] for s in single)
print(f"start skew: median {statistics.median(skews):.3f} ms, max {max(skews):.3f} ms (goal < 1 ms); "
      f"merged / single-host req/s (medians): {ratio:.2f}")
EOF
