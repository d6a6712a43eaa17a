#!/bin/sh
# serverbench python/granian: Granian binds one address per process, so HTTPS on TLS_PORT (when
# it is set) is a second Granian process serving the same app (without the echo server), started
# first in the background; then this shell becomes the plain-HTTP Granian. Both are in the
# harness's process group, which is stopped (and sampled) as a whole.
set -eu

host=${HOST:-127.0.0.1}
workers=${WORKERS:-1}
common="--interface rsgi --host $host --workers $workers --no-ws --loop uvloop --log-level warning"

if [ -n "${TLS_PORT:-}" ]; then
    for v in TLS_CERT TLS_KEY; do
        eval "f=\${$v:-}"
        [ -r "$f" ] || { echo "python/granian: TLS_PORT is set but $v ('$f') is not a readable file" >&2; exit 2; }
    done
    # --http auto over TLS: ALPN offers h2 and http/1.1. Granian's own minimum is TLS 1.3.
    # shellcheck disable=SC2086 # $common is a list of options
    .venv/bin/granian $common --port "$TLS_PORT" --http auto \
        --ssl-certificate "$TLS_CERT" --ssl-keyfile "$TLS_KEY" --ssl-protocol-min tls1.2 \
        app:https_app &
fi

# shellcheck disable=SC2086
exec .venv/bin/granian $common --port "${PORT:-8080}" --http 1 app:app
