//! `serverbench load grpc://…` end to end: the real binary against an in-process h2c gRPC
//! server (the engine tests' `grpc_server.rs`): a good server, one answering HTTP 200 with
//! grpc-status 13, one resetting streams, one sending no trailers (each counted by cause, the
//! run ending on time), and the bad input refused before any connection.

#[path = "../../engine/tests/common/grpc_server.rs"]
#[allow(dead_code)]
mod grpc_server;

use grpc_server::{grpc_server, Fault};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

fn json_of(out: &Output) -> serde_json::Value {
    json_exiting(out, 0)
}

/// The JSON result a load printed, having exited with `code` (6: no call succeeded).
fn json_exiting(out: &Output, code: i32) -> serde_json::Value {
    assert_eq!(out.status.code(), Some(code), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn sum_calls_over_h2c_are_verified_and_summarized_as_calls() {
    let (addr, _) = grpc_server(Fault::None, 1);
    let url = format!("grpc://{addr}/serverbench.Bench/Sum");
    let args = ["-c", "2", "-t", "1", "-m", "8", "-n", "2000", "--verify"];
    let v = json_of(&serverbench(&[&args[..], &["--json", &url]].concat()));
    assert_eq!(v["requests"], 2000);
    assert_eq!(v["protocol"]["workload"], "grpc");
    assert_eq!(v["protocol"]["status_codes"]["OK"], 2000);
    assert_eq!(v["protocol"]["streams"], 8);
    assert_eq!(v["errors"].get("grpc"), None, "{}", v["errors"]);
    let text = serverbench(&[&args[..], &["--deadline", "1s", &url]].concat());
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(text.contains("Calls        2000 calls"), "{text}");
    assert!(
        text.contains("gRPC         /serverbench.Bench/Sum over h2c, 8 calls per connection"),
        "{text}"
    );
    assert!(
        text.contains("deadline 1000 ms") && text.contains("grpc-status  OK 2000"),
        "{text}"
    );
}

#[test]
fn a_server_answering_200_with_grpc_status_13_gives_100_percent_errors_code_13() {
    let (addr, _) = grpc_server(Fault::Status13, 1);
    let url = format!("grpc://{addr}/serverbench.Bench/Sum");
    let v = json_exiting(
        &serverbench(&["-c", "2", "-m", "4", "-n", "500", "--json", &url]),
        6,
    );
    assert_eq!(v["requests"], 500);
    assert_eq!(v["errors"]["verdict"], 500);
    assert_eq!(v["status"]["200"], 500);
    assert_eq!(v["protocol"]["status_codes"]["INTERNAL"], 500);
    assert_eq!(v["protocol"]["failures"]["grpc-status"], 500);
    let out = serverbench(&["-c", "2", "-m", "4", "-n", "100", &url]);
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(text.contains("verdict 100 (grpc-status 100)"), "{text}");
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert!(
        err.contains("no call succeeded: every answered call failed (100 x INTERNAL)"),
        "{err}"
    );
}

#[test]
fn resets_and_missing_trailers_are_counted_by_cause_and_the_run_ends_on_time() {
    for (fault, key, path) in [
        (Fault::Reset, "RST_STREAM CANCEL", "protocol"),
        (Fault::NoTrailers, "no trailers", "verdict"),
    ] {
        let (addr, _) = grpc_server(fault, 2);
        let url = format!("grpc://{addr}/serverbench.Bench/Sum");
        let t = Instant::now();
        let v = json_of(&serverbench(&[
            "-c", "2", "-t", "1", "-m", "4", "-d", "1s", "--json", &url,
        ]));
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{fault:?}: {:?}",
            t.elapsed()
        );
        let n = v["protocol"]["failures"][key].as_u64().unwrap_or(0);
        assert!(n > 0, "{fault:?}: {}", v["protocol"]);
        assert_eq!(
            v["errors"][path].as_u64(),
            Some(n),
            "{fault:?}: {}",
            v["errors"]
        );
        assert!(v["protocol"]["status_codes"]["OK"].as_u64().unwrap_or(0) > 0);
    }
}

#[test]
fn bad_grpc_input_is_one_line_naming_the_flag_exit_1_before_any_connection() {
    // Port 1 on loopback: nothing listens; a connection attempt would be a connect error.
    for (args, flag) in [
        (
            vec!["grpc://127.0.0.1:1"],
            "grpc://HOST:PORT/package.Service/Method",
        ),
        (
            vec!["grpc://127.0.0.1:1/serverbench.Bench/Nope"],
            "grpc://HOST:PORT/package.Service/Method",
        ),
        (
            vec!["--http2", "grpc://127.0.0.1:1/serverbench.Bench/Sum"],
            "--http2",
        ),
        (
            vec!["-p", "4", "grpc://127.0.0.1:1/serverbench.Bench/Sum"],
            "-p/--pipeline",
        ),
        (
            vec![
                "--message-size",
                "8",
                "grpc://127.0.0.1:1/serverbench.Bench/Sum",
            ],
            "--message-size",
        ),
        (
            vec!["--deadline", "1s", "http://127.0.0.1:1/"],
            "--deadline",
        ),
    ] {
        let out = serverbench(&[&["-n", "1"][..], &args].concat());
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(!err.contains("connect"), "{args:?}: {err}");
    }
}
