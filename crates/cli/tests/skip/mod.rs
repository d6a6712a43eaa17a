//! How a test says a switch skipped it: one `SKIP: <binary>::<test>: <why>` line written straight
//! to stderr, past the test harness's capture, so that `make test` counts and names it (the
//! harness itself counts such a test as passed).

use std::io::Write;

/// Prints the `SKIP:` line of the running test; `why` names the switch.
pub fn say_skipped(why: &str) {
    let test = std::thread::current().name().unwrap_or("main").to_owned();
    let line = format!("SKIP: {}::{test}: {why}\n", env!("CARGO_CRATE_NAME"));
    let _ = std::io::stderr().write_all(line.as_bytes());
}
