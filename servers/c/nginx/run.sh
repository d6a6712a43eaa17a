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

# tls + h2 on TLS_PORT, only when it is set (the certificate and key come from the harness).
tls_port=${TLS_PORT:-}
if [ -n "$tls_port" ]; then
    case $tls_port in *[!0-9]*) echo "c/nginx: TLS_PORT must be a number, got '$tls_port'" >&2; exit 2 ;; esac
    [ -r "${TLS_CERT:-}" ] || { echo "c/nginx: TLS_PORT is set but TLS_CERT ('${TLS_CERT:-}') is not a readable file" >&2; exit 2; }
    [ -r "${TLS_KEY:-}" ] || { echo "c/nginx: TLS_PORT is set but TLS_KEY ('${TLS_KEY:-}') is not a readable file" >&2; exit 2; }
    case $host in *:*) tls_listen="[$host]:$tls_port" ;; *) tls_listen="$host:$tls_port" ;; esac
    # nginx resolves relative paths against its prefix (the per-run folder): make them absolute.
    cert=$(cd "$(dirname "$TLS_CERT")" && pwd)/$(basename "$TLS_CERT")
    key=$(cd "$(dirname "$TLS_KEY")" && pwd)/$(basename "$TLS_KEY")
fi

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

# The HTTPS listener, included by the server block; an empty file when TLS_PORT is unset. The
# master reads the certificate and key once, before it forks the workers.
: >"$tmp/tls.conf"
if [ -n "$tls_port" ]; then
    printf 'listen %s ssl http2 reuseport backlog=4096;\nssl_certificate "%s";\nssl_certificate_key "%s";\n' \
        "$tls_listen" "$cert" "$key" >"$tmp/tls.conf"
fi

# static: STATIC_DIR under /static/ with nginx's own file serving (ETag, Last-Modified, 304,
# sendfile) and the gzip filter for text (nginx-light has no brotli); an empty file when unset.
: >"$tmp/static.conf"
if [ -n "${STATIC_DIR:-}" ]; then
    [ -d "$STATIC_DIR" ] || { echo "c/nginx: STATIC_DIR ('$STATIC_DIR') is not a folder" >&2; exit 2; }
    static=$(cd "$STATIC_DIR" && pwd)
    cat >"$tmp/static.conf" <<EOF
location /static/ {
    alias $static/;
    types {
        text/html html;
        text/css css;
        text/javascript js;
        application/json json;
        image/svg+xml svg;
        image/png png;
        font/woff2 woff2;
    }
    default_type application/octet-stream;
    gzip on;
    gzip_types text/css text/javascript application/json image/svg+xml;
    gzip_vary on;
}
EOF
fi

sed -e "s|@TMP@|$tmp|g" -e "s|@LISTEN@|$listen|g" -e "s|@WORKERS@|$workers|g" \
    -e "s|@NOFILE@|$nofile|g" -e "s|@CONNS@|$conns|g" \
    "$here/nginx.conf.in" >"$tmp/nginx.conf"

exec nginx -p "$tmp/" -c "$tmp/nginx.conf" -e stderr
