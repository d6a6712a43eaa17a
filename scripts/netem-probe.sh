#!/usr/bin/env bash
# Whether the kernel has the netem qdisc (sch_netem) that the hosts tests' delay case needs.
# Prints "1" on stdout when it is absent (the value `make test` gives SERVERBENCH_SKIP_NETEM) and
# says on stderr what it found. Probes in a throwaway network namespace of its own, removed after.
# An explicit SERVERBENCH_SKIP_NETEM in the environment wins; without root (or ip/tc) there is
# nothing to probe: the netns tests then say why themselves.
set -uo pipefail
if [ -n "${SERVERBENCH_SKIP_NETEM:-}" ]; then
  echo "netem probe: SERVERBENCH_SKIP_NETEM=$SERVERBENCH_SKIP_NETEM given, not probed" >&2
  echo "$SERVERBENCH_SKIP_NETEM"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  exit 0
fi
probe=sb-netem-probe-$$
if ip netns add "$probe" 2>/dev/null \
  && ip -n "$probe" link add sbprobe0 type dummy 2>/dev/null \
  && ip netns exec "$probe" tc qdisc add dev sbprobe0 root netem delay 1ms 2>/dev/null; then
  echo "netem available: the hosts tests' delay case runs" >&2
else
  echo "netem is not available in this kernel (no sch_netem): skipping the hosts tests' delay case" \
    "(SERVERBENCH_SKIP_NETEM=1)" >&2
  echo 1
fi
ip netns del "$probe" 2>/dev/null || true
