#!/usr/bin/env bash
# `make lint`'s check for unused dependencies: cargo-machete, at a pinned version, installed
# with cargo the first time (a minute of compiling), then run over the workspace. It reads each
# crate's sources for the names of its dependencies; a false positive is silenced in that
# crate's Cargo.toml with [package.metadata.cargo-machete] ignored = ["name"] and a reason.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.9.1
if ! cargo machete --version 2>/dev/null | grep -q "$version\$"; then
  cargo install cargo-machete --locked --version "$version"
fi
cargo machete
