#!/usr/bin/env bash
# netns-hosts: four "hosts" on this machine for serverbench's multi-host mode and its tests.
#
#   bench/netns-hosts.sh up              namespaces, bridge, one sshd per namespace, hosts.toml
#   bench/netns-hosts.sh down            removes namespaces, processes and keys (safe to repeat)
#   bench/netns-hosts.sh delay HOST MS   tc netem: every packet leaving HOST waits MS ms, so a
#                                        round trip through HOST grows by MS (0 removes it)
#   bench/netns-hosts.sh kill-sshd HOST  SIGKILLs HOST's sshd and its sessions (a host dying)
#   bench/netns-hosts.sh start-sshd HOST starts HOST's sshd again (after kill-sshd)
#   bench/netns-hosts.sh status          what is up
#
# Network namespaces sb-server, sb-client1, sb-client2 and sb-db (a database host for
# `run --db-host`) each get one end of a veth pair whose other end is enslaved to the bridge
# sb-br0 in this namespace. Addresses come from 198.18.0.0/15 only (RFC 2544's benchmark range):
# the bridge is 198.18.0.1, the hosts .10, .11, .12 and .40. Loopback is up in every namespace.
#
# Each namespace runs Debian's sshd with its own config, host key and PID file from the state
# directory ($SB_NETNS_STATE, default /run/serverbench-netns); root may log in with the generated
# client key only. The machine's own sshd is never started (openssh-server is installed behind a
# policy-rc.d that exits 101) and ~/.ssh is never read or written: the ssh client gets its key,
# known_hosts and options from the ssh_config file written here, which hosts.toml names. The
# path of that hosts.toml is the last line `up` prints.
set -euo pipefail

STATE=${SB_NETNS_STATE:-/run/serverbench-netns}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BRIDGE=sb-br0
BRIDGE_ADDR=198.18.0.1
PREFIX=24
HOSTS=(sb-server sb-client1 sb-client2 sb-db)
declare -A ADDR=([sb-server]=198.18.0.10 [sb-client1]=198.18.0.11 [sb-client2]=198.18.0.12
  [sb-db]=198.18.0.40)

die() { echo "netns-hosts: $*" >&2; exit 1; }

# The root-side end of a host's veth pair (interface names are at most 15 bytes).
veth_of() { echo "sbv-${1#sb-}"; }

need_root() {
  [ "$(id -u)" -eq 0 ] || die "must run as root (network namespaces and sshd)"
  command -v ip >/dev/null || die "ip (iproute2) is missing"
  ip netns list >/dev/null 2>&1 || die "\`ip netns\` does not work here"
}

known_host() {
  local h
  for h in "${HOSTS[@]}"; do [ "$h" = "$1" ] && return 0; done
  die "unknown host \`$1\` (known: ${HOSTS[*]})"
}

# Installs openssh-server without ever starting the machine's sshd.
install_sshd() {
  [ -x /usr/sbin/sshd ] && return 0
  local rc=/usr/sbin/policy-rc.d placed=
  if [ ! -e "$rc" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$rc" && chmod 755 "$rc" && placed=1
  elif ! grep -q 'exit 101' "$rc"; then
    die "$rc exists and does not exit 101: refusing to install openssh-server"
  fi
  echo "installing openssh-server from apt (policy-rc.d keeps the machine's sshd stopped)" >&2
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null
  fi
  [ -n "$placed" ] && rm -f "$rc"
  [ -x /usr/sbin/sshd ] || die "openssh-server did not install /usr/sbin/sshd"
}

write_sshd_config() {
  local h=$1 dir=$STATE/$1
  cat >"$dir/sshd_config" <<EOF
# sshd of the serverbench test host $h (bench/netns-hosts.sh); nothing else uses it.
ListenAddress ${ADDR[$h]}:22
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $STATE/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PrintMotd no
PrintLastLog no
MaxSessions 64
MaxStartups 64
ClientAliveInterval 2
ClientAliveCountMax 3
LogLevel INFO
EOF
}

write_client_files() {
  local h
  : >"$STATE/known_hosts"
  {
    echo "# ssh client options for the serverbench netns hosts (bench/netns-hosts.sh)."
    for h in "${HOSTS[@]}"; do
      echo "$h $(cut -d' ' -f1,2 "$STATE/$h/ssh_host_ed25519_key.pub")" >>"$STATE/known_hosts"
      printf 'Host %s\n  HostName %s\n' "$h" "${ADDR[$h]}"
      printf '  HostKeyAlias %s\n' "$h"
    done
    cat <<EOF
Host *
  User root
  IdentityFile $STATE/client_key
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile $STATE/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
  ServerAliveInterval 2
  ServerAliveCountMax 3
EOF
  } >"$STATE/ssh_config"
  {
    echo "# serverbench hosts (spec/hosts.md), written by bench/netns-hosts.sh up; removed by down."
    echo "[defaults]"
    echo "ssh_config = \"$STATE/ssh_config\""
    for h in "${HOSTS[@]}"; do
      printf '\n[hosts.%s]\nssh = "%s"\naddress = "%s"\ncheckout = "%s"\n' "$h" "$h" "${ADDR[$h]}" "$ROOT"
    done
  } >"$STATE/hosts.toml"
}

start_host() {
  local h=$1 veth dir=$STATE/$1
  veth=$(veth_of "$h")
  ip netns add "$h"
  ip link add "$veth" type veth peer name eth0 netns "$h"
  ip link set "$veth" master "$BRIDGE" up
  ip -n "$h" link set lo up
  ip -n "$h" addr add "${ADDR[$h]}/$PREFIX" dev eth0
  ip -n "$h" link set eth0 up
  mkdir -p "$dir" && chmod 700 "$dir"
  ssh-keygen -q -t ed25519 -N '' -C "serverbench-netns-$h" -f "$dir/ssh_host_ed25519_key"
  write_sshd_config "$h"
  ip netns exec "$h" /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log"
}

wait_ssh() {
  local h=$1 i
  for i in $(seq 50); do
    ssh -F "$STATE/ssh_config" "$h" true 2>/dev/null && return 0
    sleep 0.1
  done
  die "sshd in $h does not answer (log: $STATE/$h/sshd.log)"
}

cmd_up() {
  need_root
  install_sshd
  command -v ssh >/dev/null || die "the OpenSSH client (ssh) is missing"
  cmd_down >/dev/null
  mkdir -p "$STATE" && chmod 700 "$STATE"
  # sshd's privilege-separation directory; Debian's unit creates it, we start sshd by hand.
  if [ ! -d /run/sshd ]; then mkdir -m 755 /run/sshd && touch "$STATE/created-run-sshd"; fi
  ssh-keygen -q -t ed25519 -N '' -C serverbench-netns-client -f "$STATE/client_key"
  echo "restrict $(cat "$STATE/client_key.pub")" >"$STATE/authorized_keys"
  chmod 600 "$STATE/authorized_keys"
  # Bridged frames skip iptables (a machine with br_netfilter would otherwise run conntrack on
  # each one): the "network" costs what a switch costs, not a firewall.
  ip link add "$BRIDGE" type bridge nf_call_iptables 0 nf_call_ip6tables 0 nf_call_arptables 0 \
    2>/dev/null || ip link add "$BRIDGE" type bridge
  ip addr add "$BRIDGE_ADDR/$PREFIX" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  local h
  for h in "${HOSTS[@]}"; do start_host "$h"; done
  write_client_files
  for h in "${HOSTS[@]}"; do
    wait_ssh "$h"
    echo "$h: ${ADDR[$h]}, sshd pid $(cat "$STATE/$h/sshd.pid")"
  done
  echo "$STATE/hosts.toml"
}

# Sends `sig` to every process living in namespace `h` (all of them were started by us).
signal_namespace() {
  local h=$1 sig=$2 pids
  pids=$(ip netns pids "$h" 2>/dev/null || true)
  [ -n "$pids" ] && kill "-$sig" $pids 2>/dev/null || true
}

stop_host() {
  local h=$1 pidfile=$STATE/$1/sshd.pid i
  if [ -f "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; fi
  if ip netns list | grep -qw "^$h"; then
    signal_namespace "$h" TERM
    for i in $(seq 20); do
      [ -z "$(ip netns pids "$h" 2>/dev/null)" ] && break
      sleep 0.1
    done
    signal_namespace "$h" KILL
    ip netns del "$h"
  fi
  ip link del "$(veth_of "$h")" 2>/dev/null || true
}

cmd_down() {
  need_root
  local h
  for h in "${HOSTS[@]}"; do stop_host "$h"; done
  ip link del "$BRIDGE" 2>/dev/null || true
  if [ -f "$STATE/created-run-sshd" ]; then rmdir /run/sshd 2>/dev/null || true; fi
  rm -rf "$STATE"
  echo "netns hosts down"
}

cmd_delay() {
  need_root
  local h=${1:?usage: delay HOST MS} ms=${2:?usage: delay HOST MS}
  known_host "$h"
  [[ "$ms" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "delay: \`$ms\` is not a number of milliseconds"
  if [ "$ms" = 0 ]; then
    ip netns exec "$h" tc qdisc del dev eth0 root 2>/dev/null || true
    return 0
  fi
  ip netns exec "$h" tc qdisc replace dev eth0 root netem delay "${ms}ms" ||
    die "tc netem failed: this kernel may lack sch_netem (CONFIG_NET_SCH_NETEM)"
}

cmd_kill_sshd() {
  need_root
  local h=${1:?usage: kill-sshd HOST} pid
  known_host "$h"
  for pid in $(ip netns pids "$h"); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sshd ] && kill -KILL "$pid" 2>/dev/null || true
  done
}

cmd_start_sshd() {
  need_root
  local h=${1:?usage: start-sshd HOST}
  known_host "$h"
  [ -f "$STATE/$h/sshd_config" ] || die "$h is not up (run \`$0 up\` first)"
  ip netns exec "$h" /usr/sbin/sshd -f "$STATE/$h/sshd_config" -E "$STATE/$h/sshd.log"
  wait_ssh "$h"
}

cmd_status() {
  local h
  for h in "${HOSTS[@]}"; do
    if ip netns list 2>/dev/null | grep -qw "^$h"; then
      echo "$h: up, processes: $(ip netns pids "$h" | wc -l)"
    else
      echo "$h: down"
    fi
  done
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  delay) shift; cmd_delay "$@" ;;
  kill-sshd) shift; cmd_kill_sshd "$@" ;;
  start-sshd) shift; cmd_start_sshd "$@" ;;
  status) cmd_status ;;
  *) die "usage: $0 up|down|delay HOST MS|kill-sshd HOST|start-sshd HOST|status" ;;
esac
