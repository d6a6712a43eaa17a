#!/bin/sh
# Compiles src/main.ml with the OCaml 5.3.0 that setup.sh built; outputs go to _build/.
set -eu
: "${SERVERBENCH_CACHE:?SERVERBENCH_CACHE must be set (the harness exports it)}"
OCAMLOPT="$SERVERBENCH_CACHE/ocaml-5.3.0/bin/ocamlopt"
mkdir -p _build
cp src/main.ml _build/main.ml
cd _build
"$OCAMLOPT" -I +unix -I +threads unix.cmxa threads.cmxa main.ml -o server
