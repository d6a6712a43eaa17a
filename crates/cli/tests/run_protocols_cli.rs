//! `serverbench run` over TLS and HTTP/2: the fixture catalog's Python TLS server with
//! `https-hello`, and the catalog's c/nginx (Debian's nginx-light, which `make test` installs
//! through scripts/test-prereqs.sh; nothing else to set up) with `h2-hello`. Each lap goes to the server's TLS_PORT trusting the run's own certificate.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(root: &Path, cache: &Path, results: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("run")
        .args(["--root", root.to_str().unwrap()])
        .args(["--results", results.to_str().unwrap()])
        .args(["-c", "4", "-d", "1s", "--laps", "1", "--warmup", "0s"])
        .args(args)
        .env("SERVERBENCH_CACHE", cache)
        .output()
        .unwrap()
}

/// The one lap record of the run in `results`.
fn only_record(results: &Path) -> serde_json::Value {
    let dir = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.jsonl").is_file())
        .expect("a results folder");
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    serde_json::from_str(lines[0]).unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_tls_server_runs_https_hello_over_its_tls_port_and_the_report_labels_it() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/catalog");
    let (cache, results) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args = ["--servers", "python/good-tls", "--scenario", "https-hello"];
    let out = run(&root, cache.path(), results.path(), &args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("https-hello / 4conn/1s (https, 4 connections)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("TLS: what the handshakes negotiated"),
        "{stdout}"
    );
    let rec = only_record(results.path());
    assert_eq!(
        (rec["status"].as_str(), rec["params"]["tls"].as_bool()),
        (Some("ok"), Some(true))
    );
    assert!(rec["load"]["requests"].as_u64().unwrap() > 0, "{rec}");
    assert!(
        rec["load"]["tls"]["version"]
            .as_str()
            .unwrap()
            .starts_with("TLS"),
        "{rec}"
    );
    assert_eq!(rec["load"]["errors"]["tls"].as_u64(), Some(0), "{rec}");
}

#[test]
fn a_server_without_tls_is_skipped_from_an_https_scenario_with_the_reason() {
    let root =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/run-catalog");
    let (cache, results) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args = ["--servers", "python/fast", "--scenario", "https-hello"];
    let out = run(&root, cache.path(), results.path(), &args);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("python/fast") && all.contains("tls"), "{all}");
}

#[test]
fn c_nginx_runs_h2_hello_over_alpn_and_records_the_protocol() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cache = std::env::var_os("SERVERBENCH_CACHE")
        .map_or_else(|| PathBuf::from("/var/cache/serverbench"), PathBuf::from);
    let results = tempfile::tempdir().unwrap();
    let args = ["--servers", "c/nginx", "--scenario", "h2-hello"];
    let out = run(&root, &cache, results.path(), &args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "(c/nginx needs Debian's nginx-light: bash scripts/test-prereqs.sh)\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("HTTP/2 against HTTP/1.1"), "{stdout}");
    let rec = only_record(results.path());
    assert_eq!(rec["params"]["protocol"].as_str(), Some("h2"), "{rec}");
    assert_eq!(
        rec["load"]["http2"]["protocol"].as_str(),
        Some("h2"),
        "{rec}"
    );
    assert_eq!(rec["load"]["tls"]["alpn"].as_str(), Some("h2"), "{rec}");
    assert!(rec["load"]["requests"].as_u64().unwrap() > 0, "{rec}");
}
