#!/bin/sh
# Builds OCaml 5.3.0 once into "$SERVERBENCH_CACHE/ocaml-5.3.0".
# The compiler's source comes from the npm package `ocaml@5.3.0` (the esy packaging of the
# upstream release tarball); opam and GitHub are not reachable here. Takes several minutes.
set -eu
: "${SERVERBENCH_CACHE:?SERVERBENCH_CACHE must be set (the harness exports it)}"
VERSION=5.3.0
SHA256=c4108bac7b45c46325f0e15a988c308f7785cd6c4d29dac190df06f543f7c992
PREFIX="$SERVERBENCH_CACHE/ocaml-$VERSION"
mkdir -p "$SERVERBENCH_CACHE"

installed() {
    [ -f "$PREFIX/.serverbench-complete" ] && [ -x "$PREFIX/bin/ocamlopt" ] &&
        [ "$("$PREFIX/bin/ocamlopt" -version)" = "$VERSION" ]
}

# One build at a time, even if two setups race on the same cache.
exec 9>"$SERVERBENCH_CACHE/ocaml-$VERSION.lock"
flock 9
if installed; then
    echo "ocaml $VERSION already installed in $PREFIX"
    exit 0
fi

rm -rf "$PREFIX"
work=$(mktemp -d "$SERVERBENCH_CACHE/ocaml-$VERSION-build.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cd "$work"
echo "fetching ocaml@$VERSION from npm"
npm pack "ocaml@$VERSION" --silent >/dev/null
echo "$SHA256  ocaml-$VERSION.tgz" | sha256sum -c -
tar xzf "ocaml-$VERSION.tgz"
cd package
echo "configuring ocaml $VERSION for $PREFIX"
./configure --prefix="$PREFIX" --disable-ocamldoc --disable-ocamltest \
    --disable-ocamldebug --disable-stdlib-manpages >configure.log 2>&1 ||
    { tail -40 configure.log; exit 1; }
echo "building ocaml $VERSION (make -j2, several minutes)"
make -j2 >make.log 2>&1 || { tail -60 make.log; exit 1; }
make install >install.log 2>&1 || { tail -40 install.log; exit 1; }
touch "$PREFIX/.serverbench-complete"
echo "ocaml $VERSION installed in $PREFIX"
