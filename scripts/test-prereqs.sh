#!/usr/bin/env bash
# Installs what `make test` needs beyond the base toolchains, the way `serverbench setup` does:
# Debian packages when root, otherwise one line naming the command to run. Idempotent and quick
# when everything is there already.
#   chromium, fonts-dejavu-core  the HTML report rendered in headless Chromium (html_render)
#   wrk                           `serverbench run --tool wrk` (run_cli)
#   python3                       the fixture servers
#   util-linux (script), procps   Ctrl-C through a pseudo-terminal (interrupt_cli), ps
#   iproute2, openssh-server/client  the network-namespace hosts (hosts tests)
#   nginx-light                   c/nginx over h2 through `serverbench run` (run_protocols_cli)
#   postgresql-15, -contrib       serverbench's private PostgreSQL (database, verify, run tests);
#                                 pg_stat_statements for the query audit
set -euo pipefail
packages=(chromium fonts-dejavu-core wrk python3 util-linux bsdutils procps iproute2 openssh-client openssh-server nginx-light postgresql-15 postgresql-contrib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q ' installed$' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "make test needs: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing test prerequisites: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# openssh-server, nginx-light and postgresql must never start the machine's own sshd, nginx or
# cluster: maintainer
# scripts ask policy-rc.d.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; created_policy=1
fi
cleanup() { if [ "$created_policy" = 1 ]; then rm -f "$policy"; fi; }
trap cleanup EXIT
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
  || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
