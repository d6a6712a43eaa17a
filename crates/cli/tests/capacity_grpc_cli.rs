//! `serverbench load --find-max` over gRPC: the knee search in calls/s, as for HTTP, against
//! the in-process gRPC server (the engine tests' `grpc_server.rs`) with a known capacity (2
//! workers of 5 ms: 400 calls/s), and a server failing calls with grpc-status 13 whose search
//! stops at the first rate on its errors.

#[path = "../../engine/tests/common/grpc_server.rs"]
#[allow(dead_code)]
mod grpc_server;

use grpc_server::{grpc_server, Fault};
use std::process::{Command, Output};
use std::time::Duration;

/// [`grpc_server`]'s queue: 2 workers of 5 ms, 400 calls/s (low, so a busy test machine's
/// share of a CPU still serves it).
const WORKERS: usize = 2;
const SERVICE: Duration = Duration::from_millis(5);
const CAPACITY: f64 = WORKERS as f64 / 0.005;

fn load(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

fn json_of(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

const SEARCH: [&str; 13] = [
    "--find-max",
    "--slo",
    "p99<=50ms,errors<=0.1%",
    "--start-rate",
    "100",
    "-c",
    "8",
    "-m",
    "4",
    "-t",
    "1",
    "-d",
    "1s",
];

#[test]
fn find_max_over_grpc_finds_a_queue_servers_capacity_in_calls_per_second() {
    let (addr, seen) = grpc_server(Fault::None, 1);
    seen.queue(WORKERS, SERVICE);
    let url = format!("grpc://{addr}/serverbench.Bench/Sum");
    let out = load(&[&SEARCH[..], &["--warmup", "300ms", "--json", &url]].concat());
    let v = json_of(&out);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    assert_eq!(v["mode"], "grpc", "{v:#}");
    let found = v["capacity_rps"].as_f64().expect("a capacity");
    assert!(
        (found - CAPACITY).abs() <= 0.1 * CAPACITY,
        "found {found}/s, true {CAPACITY}/s: {v:#}"
    );
    assert_eq!(v["ending"], "converged", "{v:#}");
    let steps = v["steps"].as_array().unwrap();
    assert!(steps.iter().all(|s| s["errors_pct"] == 0.0), "{v:#}");
    assert!(steps.iter().any(|s| s["met"] == false), "{v:#}");
    // The text counts calls (its answer line is the report's, tested with the report).
    let text = load(
        &[
            &SEARCH[..],
            &["--max-steps", "2", "--warmup", "100ms", &url],
        ]
        .concat(),
    );
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    let head = text.lines().nth(1).unwrap_or_default();
    assert!(
        head.contains(" calls ") && !head.contains("requests"),
        "{text}"
    );
}

#[test]
fn a_grpc_server_failing_calls_with_status_13_misses_the_goal_at_the_first_rate() {
    let (addr, _) = grpc_server(Fault::Status13, 2);
    let url = format!("grpc://{addr}/serverbench.Bench/Sum");
    let out = load(&[&SEARCH[..], &["--warmup", "100ms", "--json", &url]].concat());
    assert_eq!(out.status.code(), Some(10), "{out:?}");
    let v = json_of(&out);
    assert_eq!(v["capacity_rps"], serde_json::Value::Null, "{v:#}");
    let step = &v["steps"][0];
    let errors = step["errors_pct"].as_f64().unwrap();
    assert!(
        (45.0..=55.0).contains(&errors),
        "every 2nd call fails: {v:#}"
    );
    assert_eq!(step["met"], false, "{v:#}");
}
