#!/bin/sh
# Starts Puma in cluster mode: WORKERS forked workers, 2 threads each (see below with a
# database), app preloaded
# (the original experiment ran `puma -w 8 -t 2 --preload`); puma.rb sets what flags cannot.
host="${HOST:-127.0.0.1}"
case "$host" in *:*) host="[$host]" ;; esac
# With DATABASE_URL (the database workloads), one connection per thread: the DATABASE_POOL
# connections are divided between the workers, at least one thread each.
threads=2
if [ -n "${DATABASE_URL:-}" ]; then
    threads=$(( ${DATABASE_POOL:-16} / ${WORKERS:-1} ))
    [ "$threads" -ge 1 ] || threads=1
fi
exec puma --environment production --workers "${WORKERS:-1}" --threads "$threads:$threads" --preload \
    -C puma.rb --bind "tcp://$host:${PORT:-8080}" config.ru
