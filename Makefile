# serverbench — the two commands a newcomer runs are `make bench` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
BIN   := target/release/serverbench
SUITE ?= suites/quick.toml
# `make install` puts PREFIX/bin/serverbench; ~/.local/bin is on PATH on most systems.
PREFIX ?= $(HOME)/.local

.PHONY: all build install bench test lint verify setup clean example-report

all: build

build:
	$(CARGO) build --release --locked -p serverbench

## Install the binary as PREFIX/bin/serverbench (default ~/.local/bin); it runs anywhere:
## your own servers need no checkout, the catalog's are found with --root or SERVERBENCH_ROOT.
install:
	$(CARGO) install --path crates/cli --locked --root "$(PREFIX)"

## Build, set up the servers the default suite runs (every server with `hello`), run it, print the table.
bench: build
	-$(BIN) setup --suite $(SUITE)
	$(BIN) run $(SUITE)

## Unit, snapshot and integration tests (drive the real binary against servers on loopback).
test:
	@bash scripts/test-prereqs.sh
	@mkdir -p target
	SERVERBENCH_SKIP_NETEM="$$(bash scripts/netem-probe.sh)" \
	SERVERBENCH_SKIP_URING="$$(bash scripts/uring-probe.sh)" \
		$(CARGO) test --workspace --locked --no-fail-fast 2>&1 | tee target/test.log
	@awk -f scripts/test-summary.awk target/test.log

## Formatting, lints and unused dependencies (cargo-machete, pinned in scripts/machete.sh), as CI checks them.
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings
	bash scripts/machete.sh

## Install and build every catalog server, then check each against spec/contract.md.
setup: build
	$(BIN) setup

verify: setup
	$(BIN) verify

## docs/example-report.html (and its screenshot, when Chromium is installed) from the report
## test fixture, with the current code: rerun after changing what a report shows.
EXAMPLE_RESULTS ?= crates/report/tests/fixtures/basic
example-report:
	$(CARGO) run --locked -q -p serverbench -- report $(EXAMPLE_RESULTS) -f html -o docs/example-report.html
	@if command -v chromium >/dev/null; then \
		chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--screenshot=docs/example-report.png --window-size=1200,1550 \
			"file://$$PWD/docs/example-report.html" 2>/dev/null; \
	else echo "no chromium: docs/example-report.png left as it was"; fi

clean:
	$(CARGO) clean
	rm -rf .cache
