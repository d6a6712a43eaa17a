#!/bin/sh
# serverbench go/caddy: write Caddy's JSON config for this run from the contract's environment
# (PORT, TLS_PORT, H3_PORT, TLS_CERT, TLS_KEY, HOST, WORKERS) into a fresh folder with the 1 MiB
# payload beside it, then exec the caddy binary built from main.go in the foreground.
#
# JSON, not a Caddyfile: a Caddyfile site takes its port from its address and `bind` sets hosts
# only, so HTTP/3 can only share the HTTPS port there. Caddy's own config gives one server two
# listeners with their protocols (`listen_protocols`): TCP TLS_PORT with h1 and h2, UDP H3_PORT
# with h3, so the server's Alt-Svc header names H3_PORT.
set -eu

say() { echo "go/caddy: $*" >&2; exit 2; }
number() { case $2 in '' | *[!0-9]*) say "$1 must be a number, got '$2'" ;; esac; }

host=${HOST:-127.0.0.1}
port=${PORT:-8080}
workers=${WORKERS:-1}
tls_port=${TLS_PORT:-}
h3_port=${H3_PORT:-}
bin=${SERVERBENCH_CACHE:?go/caddy: SERVERBENCH_CACHE is not set}/bin/go-caddy
number PORT "$port"
number WORKERS "$workers"
[ "$workers" -ge 1 ] || say "WORKERS must be at least 1, got '$workers'"
case $host in *:*) at() { echo "[$host]:$1"; } ;; *) at() { echo "$host:$1"; } ;; esac

# The routes, the same on every server of the config.
text() { # path status content-type body
    printf '{"match":[{"path":["%s"]}],"handle":[{"handler":"static_response","status_code":%s,' "$1" "$2"
    printf '"headers":{"Content-Type":["%s"]},"body":"%s"}],"terminal":true}' "$3" "$4"
}
# static: STATIC_DIR under /static/ by file_server (ETag, Last-Modified, 304), text files
# gzip- or zstd-encoded when asked (encode; Caddy has no brotli encoder).
static=""
if [ -n "${STATIC_DIR:-}" ]; then
    [ -d "$STATIC_DIR" ] || say "STATIC_DIR ('$STATIC_DIR') is not a folder"
    static=$(printf '{"match":[{"path":["/static/*"]}],"handle":[%s,%s,%s],"terminal":true},' \
        '{"handler":"rewrite","strip_path_prefix":"/static"}' \
        '{"handler":"encode","encodings":{"gzip":{},"zstd":{}},"prefer":["gzip","zstd"]}' \
        "{\"handler\":\"file_server\",\"root\":\"$(realpath "$STATIC_DIR")\"}")
fi
routes=$(printf '[%s,%s,%s,%s,%s,%s,%s%s]' \
    "$(text /hello 200 text/plain 'Hello World!')" \
    "$(text /hey 200 text/plain 'Hey!')" \
    "$(text /hell 200 text/plain 'Hell!')" \
    "$(text /about 200 text/html '<html><body>About page</body></html>')" \
    "$(text /json 200 application/json '{\"message\":\"Hello, World!\"}')" \
    '{"match":[{"path":["/payload"]}],"handle":[{"handler":"headers","response":{"set":{"Content-Type":["application/octet-stream"]}}},{"handler":"rewrite","uri":"/payload.bin"},{"handler":"file_server","root":"__ROOT__"}],"terminal":true}' \
    "$static" \
    '{"handle":[{"handler":"static_response","status_code":404,"headers":{"Content-Type":["text/plain"]},"body":"Not Found"}]}')

servers=$(printf '"plain":{"listen":["%s"],"protocols":["h1"],"routes":%s,"automatic_https":{"disable":true}}' \
    "$(at "$port")" "$routes")
tls_app=""
if [ -n "$tls_port" ] || [ -n "$h3_port" ]; then
    [ -r "${TLS_CERT:-}" ] || say "TLS_PORT/H3_PORT are set but TLS_CERT ('${TLS_CERT:-}') is not a readable file"
    [ -r "${TLS_KEY:-}" ] || say "TLS_PORT/H3_PORT are set but TLS_KEY ('${TLS_KEY:-}') is not a readable file"
    listen="" protocols=""
    if [ -n "$tls_port" ]; then
        number TLS_PORT "$tls_port"
        listen="\"$(at "$tls_port")\"" protocols='["h1","h2"]'
    fi
    if [ -n "$h3_port" ]; then
        number H3_PORT "$h3_port"
        listen="$listen${listen:+,}\"udp/$(at "$h3_port")\"" protocols="$protocols${protocols:+,}[\"h3\"]"
    fi
    servers=$(printf '%s,"tls":{"listen":[%s],"listen_protocols":[%s],"routes":%s,%s}' "$servers" "$listen" \
        "$protocols" "$routes" '"tls_connection_policies":[{}],"automatic_https":{"disable":true}')
    tls_app=$(printf ',"tls":{"certificates":{"load_files":[{"certificate":"%s","key":"%s"}]}}' \
        "$(realpath "$TLS_CERT")" "$(realpath "$TLS_KEY")")
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/serverbench-caddy.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Byte i = 'a' + i mod 26, 1,048,576 bytes: 40,329 whole alphabets and the first 22 letters.
awk 'BEGIN { s = "abcdefghijklmnopqrstuvwxyz"; for (i = 0; i < 40329; i++) printf "%s", s;
             printf "%s", substr(s, 1, 22) }' >"$tmp/payload.bin"
printf '{"admin":{"disabled":true},"logging":{"logs":{"default":{"level":"WARN"}}},' >"$tmp/caddy.json"
printf '"storage":{"module":"file_system","root":"%s/data"},' "$tmp" >>"$tmp/caddy.json"
printf '"apps":{"http":{"http_port":%s,"grace_period":"1s","servers":{%s}}%s}}\n' "$port" "$servers" "$tls_app" |
    sed "s|__ROOT__|$tmp|g" >>"$tmp/caddy.json"

# Caddy's data and config folders (certificates it would manage, autosave.json): the run's own.
export XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" GOMAXPROCS="$workers"
"$bin" run --config "$tmp/caddy.json" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
wait "$pid" || true
wait "$pid" 2>/dev/null || true
