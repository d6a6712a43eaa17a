//! `--help` is generated from the lists it describes, so it cannot leave one out.

use serverbench_model::suite::Scenario;
use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn run_help_lists_every_built_in_scenario() {
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let words: BTreeSet<&str> = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| c == ',' || c == '(' || c == ')' || c == ':'))
        .collect();
    let missing: Vec<&str> = Scenario::BUILTIN
        .into_iter()
        .filter(|name| !words.contains(name))
        .collect();
    assert!(missing.is_empty(), "missing {missing:?} in:\n{text}");
    for name in ["ws-echo", "db", "queries-N", "fortunes", "updates-N"] {
        assert!(Scenario::BUILTIN.contains(&name), "{name}");
    }
}
