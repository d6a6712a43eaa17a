//! Benchmarking your own server: a command (`run --server NAME=COMMAND`) ranked beside a catalog
//! server in one run, a server already running (`run --url NAME=URL --pid PID`), and
//! `verify --url`. The servers here are written by the tests themselves.

mod common;
#[path = "common/contract.rs"]
mod contract;

use common::records;
use contract::in_process_server;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/run-catalog")
}

fn serverbench(args: &[&str], tmp: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(args)
        .env("SERVERBENCH_CACHE", tmp.join("cache"))
        .current_dir(tmp)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn your_own_command_is_ranked_beside_a_catalog_server_in_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("my_server.py"), common::HELLO_PY).unwrap();
    let root = fixture_root();
    let results = tmp.path().join("results");
    let out = serverbench(
        &[
            "run",
            "--root",
            root.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
            "--servers",
            "python/fast",
            "--server",
            "mine=exec python3 my_server.py",
            "-c",
            "2",
            "-d",
            "1s",
            "--laps",
            "1",
            "--warmup",
            "0s",
        ],
        tmp.path(),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("mine") && stdout.contains("python/fast"),
        "{stdout}"
    );
    let recs = records(&results);
    let mine = recs
        .iter()
        .find(|r| r["server"] == "mine")
        .expect("a lap of mine");
    assert_eq!(mine["status"], "ok", "{mine}");
    assert!(mine["load"]["requests"].as_u64().unwrap() > 0, "{mine}");
    assert!(
        mine["server_stats"]["rss_peak_mb"].as_f64().unwrap() > 1.0,
        "your server's process tree is sampled: {mine}"
    );
}

#[test]
fn a_server_already_running_is_measured_by_url_and_sampled_by_pid() {
    let tmp = tempfile::tempdir().unwrap();
    let port = in_process_server();
    let url = format!("running=http://127.0.0.1:{port}/");
    let pid = std::process::id().to_string();
    let root = fixture_root();
    let results = tmp.path().join("results");
    let out = serverbench(
        &[
            "run",
            "--root",
            root.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
            "--url",
            &url,
            "--pid",
            &pid,
            "-c",
            "2",
            "-d",
            "1s",
            "--laps",
            "1",
            "--warmup",
            "0s",
        ],
        tmp.path(),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let recs = records(&results);
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0]["status"], "ok", "{}", recs[0]);
    assert!(recs[0]["load"]["requests"].as_u64().unwrap() > 0);
    assert!(
        recs[0]["server_stats"]["cpu_s"].as_f64().is_some(),
        "{}",
        recs[0]
    );
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
        "a server serverbench did not start is left running"
    );
}

#[test]
fn without_a_pid_a_running_server_is_measured_by_load_alone_and_the_run_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let port = in_process_server();
    let url = format!("running=http://127.0.0.1:{port}/");
    let root = fixture_root();
    let results = tmp.path().join("results");
    let args = ["run", "--root", root.to_str().unwrap(), "--results"];
    let rest = [
        "--url", &url, "-c", "1", "-d", "500ms", "--laps", "1", "--warmup", "0s",
    ];
    let out = serverbench(
        &[&args[..], &[results.to_str().unwrap()], &rest[..]].concat(),
        tmp.path(),
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("not measured"), "{stderr}");
    assert!(records(&results)[0]["server_stats"].is_null());
}

#[test]
fn verify_checks_a_running_server_by_url_and_reports_what_it_lacks() {
    let tmp = tempfile::tempdir().unwrap();
    let port = in_process_server();
    let url = format!("http://127.0.0.1:{port}");
    let ok = serverbench(
        &["verify", "--url", &url, "--implements", "hello"],
        tmp.path(),
    );
    assert!(ok.status.success(), "{}", text(&ok.stdout));
    let json = serverbench(
        &["verify", "--url", &url, "--implements", "hello,json"],
        tmp.path(),
    );
    assert_eq!(json.status.code(), Some(7), "{}", text(&json.stdout));
    assert!(
        text(&json.stdout).contains("json"),
        "{}",
        text(&json.stdout)
    );
}

#[test]
fn a_name_of_yours_that_is_a_catalog_server_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fixture_root();
    let out = serverbench(
        &[
            "run",
            "--root",
            root.to_str().unwrap(),
            "--server",
            "python/fast=exec true",
        ],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("catalog server"),
        "{}",
        text(&out.stderr)
    );
}
