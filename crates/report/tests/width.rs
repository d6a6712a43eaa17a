//! The house rule for the terminal: every line of every report fits 120 columns (counted in
//! characters, not bytes: `µs` is one column). One test renders every fixture in the terminal
//! format — the summary tables, the per-host tables, the scaling tables of a core sweep, the
//! TLS and HTTP/2 tables, a comparison, the legends and the diagnostics — once as recorded and
//! once with every server renamed to an id as long as the catalog's longest
//! (`java/jdk-httpserver-vthreads`, 28 characters), so a table that grows too wide fails here
//! whichever fixture shows it, and once more with every server's version as long as a real
//! one. `--wide` is exempt: it asks for every column.

use serverbench_analysis::compare::compare;
use serverbench_report::env::suite_baseline;
use serverbench_report::{full_summary, render_comparison, render_with, Format, Options};
use serverbench_results::env::Env;
use serverbench_results::record::LapRecord;
use std::collections::BTreeSet;
use std::path::Path;

const WIDTH: usize = 120;

/// The catalog's longest server id.
const LONGEST_ID: &str = "java/jdk-httpserver-vthreads";

/// A fixture's `results.jsonl` and `env.json` (empty when it has none), as text.
fn fixture(name: &str) -> (String, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap_or_default();
    (read("results.jsonl"), read("env.json"))
}

/// Every server id of the fixtures `names`, sorted.
fn servers(names: &[&str]) -> Vec<String> {
    let ids: BTreeSet<String> = names
        .iter()
        .flat_map(|n| laps(&fixture(n).0))
        .map(|r| r.server)
        .collect();
    ids.into_iter().collect()
}

/// `text` with every server id (a whole JSON string) renamed to an id as long as the longest
/// in the catalog: `java/jdk-httpserver-vthreada`, `...b`, one per server.
fn lengthen(text: &str, ids: &[String]) -> String {
    let stem = &LONGEST_ID[..LONGEST_ID.len() - 1];
    ids.iter()
        .zip('a'..='z')
        .fold(text.to_owned(), |t, (id, last)| {
            t.replace(&format!("\"{id}\""), &format!("\"{stem}{last}\""))
        })
}

fn laps(jsonl: &str) -> Vec<LapRecord> {
    jsonl
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a lap record"))
        .collect()
}

/// The default terminal report of a fixture's laps and env.
fn report(jsonl: &str, env_json: &str) -> String {
    let records = laps(jsonl);
    let env: Option<Env> = (!env_json.is_empty()).then(|| serde_json::from_str(env_json).unwrap());
    let summary = full_summary(
        &records,
        suite_baseline(env.as_ref()).as_deref(),
        env.as_ref(),
    );
    render_with(
        Format::Term,
        &summary,
        env.as_ref(),
        &records,
        Options::default(),
    )
}

/// A version string as long as a real one (node/uwebsockets-express's `version` command prints
/// the versions of node, the framework and three packages on one line).
const LONG_VERSION: &str = "node v20.20.2, uwebsockets-express 2.0.4, express 5.3.0, uwebsockets \
                            (uWebSockets.js republish) 20.52.0, ts-chan 0.5.0";

/// `env_json` with every server's version replaced by [`LONG_VERSION`].
fn long_versions(env_json: &str) -> String {
    if env_json.is_empty() {
        return String::new();
    }
    let mut env: serde_json::Value = serde_json::from_str(env_json).unwrap();
    if let Some(servers) = env["servers"].as_object_mut() {
        for s in servers.values_mut() {
            s["version"] = LONG_VERSION.into();
        }
    }
    env.to_string()
}

/// Every terminal output of the fixtures, named, with server ids renamed by `rename`.
fn outputs(rename: impl Fn(&str) -> String) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for name in [
        "basic",
        "hosts",
        "sweep",
        "protocols",
        "regressed",
        "database",
    ] {
        let (jsonl, env) = fixture(name);
        out.push((name.to_owned(), report(&rename(&jsonl), &rename(&env))));
        out.push((
            format!("{name} without env.json"),
            report(&rename(&jsonl), ""),
        ));
        out.push((
            format!("{name} with real-length versions"),
            report(&rename(&jsonl), &long_versions(&rename(&env))),
        ));
    }
    let (old, new) = (
        laps(&rename(&fixture("basic").0)),
        laps(&rename(&fixture("regressed").0)),
    );
    let c = compare(&old, &new);
    let comparison = render_comparison(Format::Term, &c, "basic", "regressed").unwrap();
    out.push(("basic vs regressed".to_owned(), comparison));
    out
}

#[test]
fn every_terminal_report_fits_120_columns_even_with_the_catalogs_longest_server_ids() {
    let ids = servers(&[
        "basic",
        "hosts",
        "sweep",
        "protocols",
        "regressed",
        "database",
    ]);
    let as_recorded = outputs(str::to_owned);
    let lengthened = outputs(|t| lengthen(t, &ids));
    let tables = [
        "95% CI",
        "per client host:",
        "req/s by server cores",
        "TLS: what the handshakes negotiated",
        "TLS handshakes, a new connection per request",
        "HTTP/2 against HTTP/1.1",
        "Database · c16",
        "Warnings:",
        "old: basic",
    ];
    let all: String = as_recorded.iter().map(|(_, o)| o.as_str()).collect();
    for table in tables {
        assert!(all.contains(table), "no fixture shows `{table}`");
    }
    assert!(
        all.contains("ts-chan 0.5.0"),
        "no fixture shows a long version"
    );
    let long: String = lengthened.iter().map(|(_, o)| o.as_str()).collect();
    assert!(long.contains(LONGEST_ID.trim_end_matches('s')) && !long.contains("c/nginx"));
    for (name, report) in as_recorded.iter().chain(&lengthened) {
        for line in report.lines() {
            let width = line.chars().count();
            assert!(
                width <= WIDTH,
                "{name}: {width} columns:\n{line}\n\n{report}"
            );
        }
    }
}
