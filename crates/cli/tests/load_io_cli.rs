//! `serverbench load --io`: the backend asked for is the one the JSON records; a kernel that
//! refuses io_uring (simulated with SERVERBENCH_IO_URING_REFUSE=1) runs on epoll, exits 0 and
//! says so in one line of the summary; a bad value names the flag.

mod common;

mod skip;

use common::hello_server;
use std::process::{Command, Output};

fn load(args: &[&str], refuse: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_serverbench"));
    cmd.arg("load").args(args);
    if refuse {
        cmd.env("SERVERBENCH_IO_URING_REFUSE", "1");
    }
    cmd.output().expect("run serverbench")
}

#[test]
fn each_backend_asked_for_is_the_one_the_json_records() {
    let url = format!("http://{}/hello", hello_server());
    for (io, recorded) in [("epoll", "epoll"), ("uring", "uring"), ("auto", "epoll")] {
        let out = load(
            &["-c", "2", "-d", "200ms", "--io", io, "--json", &url],
            false,
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let skip = std::env::var("SERVERBENCH_SKIP_URING").as_deref() == Ok("1");
        if io == "uring" && v["io"] == "epoll" && skip {
            skip::say_skipped(
                "io_uring refused here, --io uring ran on epoll (SERVERBENCH_SKIP_URING=1)",
            );
            continue;
        }
        assert_eq!(v["io"], recorded, "--io {io} (notes: {})", v["notes"]);
        assert!(v["requests"].as_u64().unwrap() > 0, "--io {io}");
    }
}

#[test]
fn a_refused_ring_runs_on_epoll_and_the_summary_says_so_in_one_line() {
    let url = format!("http://{}/hello", hello_server());
    let out = load(&["-c", "2", "-d", "200ms", "--io", "uring", &url], true);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let notes: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("io_uring refused"))
        .collect();
    assert_eq!(notes.len(), 1, "{text}");
    assert!(
        notes[0].contains("ran on epoll") && notes[0].len() <= 120,
        "{text}"
    );
}

#[test]
fn an_unknown_backend_names_the_flag() {
    let out = load(
        &["--io", "kqueue", "-d", "100ms", "http://127.0.0.1:1/"],
        false,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(err.contains("--io") && err.contains("kqueue"), "{err}");
}
