//! `serverbench run` over gRPC: a small suite of `mode = "grpc"` scenarios (Sum over h2c and
//! over TLS, Echo of 1 KiB) against the catalog's go/grpc-go (set up by the binary first, once
//! per test binary: it needs Go and the Go module proxy), short laps; each lap's record carries the calls by
//! status code, the report heads the tables calls/s and adds the gRPC table, and the history
//! imports the laps. Then a find_max profile over gRPC: the lap is a capacity search in calls/s.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SUITE: &str = r#"name = "grpc-small"
description = "d"
reproduces = "none"
servers = ["go/grpc-go"]
laps = 1
warmup = "200ms"

[[scenario]]
name = "grpc-sum"
mode = "grpc"
paths = ["/serverbench.Bench/Sum"]
requires = "grpc"
streams = 4

[[scenario]]
name = "grpcs-sum"
mode = "grpc"
paths = ["/serverbench.Bench/Sum"]
requires = "grpc"
tls = true
streams = 4

[[scenario]]
name = "grpc-echo-1k"
mode = "grpc"
paths = ["/serverbench.Bench/Echo"]
requires = "grpc"
size = 1024
streams = 4

[[profile]]
connections = 4
duration = "1s"
"#;

/// What the tests need first.
const SETUP: &str = "go/grpc-go could not be set up: it needs Go and the Go module proxy";

fn serverbench(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(args)
        .env("SERVERBENCH_CACHE", cache)
        .output()
        .unwrap()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cache() -> PathBuf {
    std::env::var_os("SERVERBENCH_CACHE")
        .map_or_else(|| PathBuf::from("/var/cache/serverbench"), PathBuf::from)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `serverbench setup go/grpc-go`, once for the tests of this file (a fresh clone has it not).
fn set_up_grpc_go() {
    static SETUP_ONCE: std::sync::Once = std::sync::Once::new();
    SETUP_ONCE.call_once(|| {
        let root = root();
        let out = serverbench(
            &["setup", "go/grpc-go", "--root", root.to_str().unwrap()],
            &cache(),
        );
        assert!(out.status.success(), "({SETUP})\n{}", text(&out.stderr));
    });
}

/// Runs `suite` (its text) on go/grpc-go; returns the output and the results folder.
fn run_suite(suite: &str, results: &Path) -> (Output, PathBuf) {
    set_up_grpc_go();
    let file = results.join("suite.toml");
    std::fs::write(&file, suite).unwrap();
    let root = root();
    let args = [
        "run",
        file.to_str().unwrap(),
        "--root",
        root.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ];
    let out = serverbench(&args, &cache());
    let dir = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.jsonl").is_file())
        .unwrap_or_else(|| {
            let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
            panic!("no results folder:\n{stdout}{stderr}")
        });
    (out, dir)
}

fn records(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn go_grpc_go_runs_a_grpc_suite_over_h2c_and_tls_and_every_call_is_counted_by_status() {
    let results = tempfile::tempdir().unwrap();
    let (out, dir) = run_suite(SUITE, results.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let laps = records(&dir);
    assert_eq!(laps.len(), 3, "{laps:?}");
    for r in &laps {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["params"]["mode"], "grpc", "{r}");
        let ok = r["load"]["grpc"]["status_codes"]["OK"]
            .as_u64()
            .unwrap_or(0);
        assert!(
            ok > 0 && ok == r["load"]["requests"].as_u64().unwrap(),
            "{r}"
        );
    }
    let tls = laps.iter().find(|r| r["scenario"] == "grpcs-sum").unwrap();
    assert_eq!(tls["params"]["tls"], true);
    assert_eq!(tls["load"]["grpc"]["protocol"], "h2", "{tls}");
    assert_eq!(tls["load"]["tls"]["alpn"], "h2", "{tls}");
    let echo = laps
        .iter()
        .find(|r| r["scenario"] == "grpc-echo-1k")
        .unwrap();
    assert_eq!(echo["load"]["grpc"]["method"], "/serverbench.Bench/Echo");
    assert!(
        stdout.contains("grpc-sum / 4conn/1s (grpc m4, 4 connections)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("calls/s") && !stdout.contains("req/s  "),
        "{stdout}"
    );
    assert!(
        stdout.contains("gRPC calls by how they ended, 4conn/1s"),
        "{stdout}"
    );

    let csv = serverbench(
        &["report", dir.to_str().unwrap(), "--format", "csv"],
        &cache(),
    );
    assert!(
        text(&csv.stdout).contains("calls_ok"),
        "{}",
        text(&csv.stdout)
    );
    let history = results.path().join("history.db");
    let import = ["history", "import", "--history", history.to_str().unwrap()];
    let out = serverbench(&[&import[..], &[dir.to_str().unwrap()]].concat(), &cache());
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(said.contains("(3 cells, 3 laps)"), "{said}");
}

#[test]
fn a_find_max_profile_over_grpc_searches_in_calls_per_second() {
    let suite = SUITE.replace(
        "duration = \"1s\"",
        "duration = \"500ms\"\nfind_max = { slo = \"p99<=1s\", max_steps = 3, start_rate = 200 }",
    );
    let suite = suite.replace("tls = true\n", "");
    let one = suite
        .split("[[scenario]]")
        .take(2)
        .collect::<Vec<_>>()
        .join("[[scenario]]");
    let one = format!(
        "{one}[[profile]]{}",
        suite.split("[[profile]]").nth(1).unwrap()
    );
    let results = tempfile::tempdir().unwrap();
    let (out, dir) = run_suite(&one, results.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let laps = records(&dir);
    assert_eq!(laps.len(), 1, "{laps:?}");
    let capacity = &laps[0]["load"]["capacity"];
    assert_eq!(capacity["mode"], "grpc", "{capacity}");
    assert!(
        capacity["steps"].as_array().is_some_and(|s| !s.is_empty()),
        "{capacity}"
    );
    assert!(capacity["target"][0]
        .as_str()
        .is_some_and(|t| t.starts_with("grpc://")));
}
