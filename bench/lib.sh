# shellcheck shell=bash
# Helpers the peer benchmarks (bench/*-vs-peers.sh) share; sourced, never run.

settle() { # waits (at most 30 s) until the server's session uses <5% of a CPU over 0.5 s
  python3 - "$1" <<'PY'
import os, sys, time
sid = int(sys.argv[1])
def ticks():
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(f[3]) == sid:
            total += int(f[11]) + int(f[12])
    return total
hz = os.sysconf("SC_CLK_TCK")
deadline = time.time() + 30
while time.time() < deadline:
    a = ticks(); time.sleep(0.5); b = ticks()
    if (b - a) / hz < 0.025:
        break
PY
}
