#!/bin/sh
# serverbench c/nginx: render nginx.conf.in into a fresh per-run folder, write the 1 MiB payload
# there, then exec nginx in the foreground (master + WORKERS worker processes). Nothing is read
# from or written to /etc/nginx or /var.
set -eu

host=${HOST:-127.0.0.1}
port=${PORT:-8080}
workers=${WORKERS:-1}
here=$(cd "$(dirname "$0")" && pwd)
base=${TMPDIR:-/tmp}

case $workers in '' | *[!0-9]* | 0) echo "c/nginx: WORKERS must be a positive integer, got '$workers'" >&2; exit 2 ;; esac
case $port in '' | *[!0-9]*) echo "c/nginx: PORT must be a number, got '$port'" >&2; exit 2 ;; esac
# File descriptors: the hard limit (nginx raises the soft one up to it), at most 65536; each
# worker takes half of it as connections, at most 16384.
nofile=$(ulimit -Hn)
case $nofile in unlimited | *[!0-9]*) nofile=65536 ;; esac
[ "$nofile" -le 65536 ] || nofile=65536
conns=$((nofile / 2))
[ "$conns" -le 16384 ] || conns=16384

case $host in *:*) listen="[$host]:$port" ;; *) listen="$host:$port" ;; esac

# Remove the folders of earlier runs that are over: a pid file whose process is gone (killed),
# or no pid file (nginx removes it on a clean exit) and untouched for a minute.
for d in "$base"/serverbench-nginx.*; do
    [ -d "$d" ] || continue
    if [ -f "$d/nginx.pid" ]; then
        pid=$(cat "$d/nginx.pid" 2>/dev/null || true)
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then continue; fi
        rm -rf "$d"
    elif [ -n "$(find "$d" -maxdepth 0 -mmin +1)" ]; then
        rm -rf "$d"
    fi
done

tmp=$(mktemp -d "$base/serverbench-nginx.XXXXXX")
# When started as root, the workers run as `nobody`: they must be able to read the payload.
chmod 755 "$tmp"

# Byte i = 'a' + i mod 26, 1,048,576 bytes: 40,329 whole alphabets and the first 22 letters.
awk 'BEGIN { s = "abcdefghijklmnopqrstuvwxyz"; for (i = 0; i < 40329; i++) printf "%s", s;
             printf "%s", substr(s, 1, 22) }' >"$tmp/payload.bin"
chmod 644 "$tmp/payload.bin"

sed -e "s|@TMP@|$tmp|g" -e "s|@LISTEN@|$listen|g" -e "s|@WORKERS@|$workers|g" \
    -e "s|@NOFILE@|$nofile|g" -e "s|@CONNS@|$conns|g" \
    "$here/nginx.conf.in" >"$tmp/nginx.conf"

exec nginx -p "$tmp/" -c "$tmp/nginx.conf" -e stderr
