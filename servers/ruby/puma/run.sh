#!/bin/sh
# Starts Puma in cluster mode: WORKERS forked workers, 2 threads each, app preloaded
# (the original experiment ran `puma -w 8 -t 2 --preload`); puma.rb sets what flags cannot.
host="${HOST:-127.0.0.1}"
case "$host" in *:*) host="[$host]" ;; esac
exec puma --environment production --workers "${WORKERS:-1}" --threads 2:2 --preload \
    -C puma.rb --bind "tcp://$host:${PORT:-8080}" config.ru
