#!/bin/sh
# Compiles src/ (the C stubs and the OCaml modules) with the OCaml 5.3.0 that
# ../domains/setup.sh built; outputs go to _build/.
set -eu
: "${SERVERBENCH_CACHE:?SERVERBENCH_CACHE must be set (the harness exports it)}"
OCAMLOPT="$SERVERBENCH_CACHE/ocaml-5.3.0/bin/ocamlopt"
rm -rf _build
mkdir -p _build
cp src/poll_stubs.c src/sched.ml src/sync.ml src/http.ml src/main.ml _build/
cd _build
"$OCAMLOPT" -w +a-4-9-40-41-42-44-45-70 -warn-error +a -ccopt "-O2 -Wall -Wextra -Werror" \
    -I +unix unix.cmxa poll_stubs.c sched.ml sync.ml http.ml main.ml -o server
