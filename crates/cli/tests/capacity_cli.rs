//! `serverbench load --find-max` end to end: the real binary against an in-process server whose
//! capacity is known (a fixed service time behind a fixed number of workers).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Workers × service time of [`queue_server`]: 4 / 2 ms = 2000 requests/s.
const WORKERS: usize = 4;
const SERVICE: Duration = Duration::from_millis(2);
const CAPACITY: f64 = WORKERS as f64 / 0.002;

/// The server's workers, each busy until an instant: a request takes the worker free first,
/// starts when it is free (or now) and ends [`SERVICE`] later. The schedule is kept in these
/// instants, not in when a sleeping thread happens to wake, so a busy test machine adds latency
/// noise but does not lower the capacity.
struct Workers {
    free_at: Mutex<Vec<Instant>>,
}

impl Workers {
    fn serve(&self) {
        let done = {
            let mut free_at = self.free_at.lock().unwrap();
            let first = (0..free_at.len()).min_by_key(|&i| free_at[i]).unwrap();
            let done = free_at[first].max(Instant::now()) + SERVICE;
            free_at[first] = done;
            done
        };
        std::thread::sleep(done.saturating_duration_since(Instant::now()));
    }
}

/// A keep-alive HTTP server where each request holds one of [`WORKERS`] workers for
/// [`SERVICE`]: below [`CAPACITY`] latency is the service time, above it the queue grows
/// without bound.
fn queue_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let workers = Arc::new(Workers {
        free_at: Mutex::new(vec![Instant::now(); WORKERS]),
    });
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let workers = Arc::clone(&workers);
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let mut pending = Vec::new();
                loop {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => pending.extend_from_slice(&buf[..n]),
                    }
                    while let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..i + 4);
                        workers.serve();
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!";
                        if s.write_all(ok).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

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

#[test]
fn find_max_finds_a_queue_servers_capacity_within_ten_percent() {
    let url = format!("http://{}/", queue_server());
    let out = load(&[
        "--find-max",
        "--slo",
        "p99<=50ms,errors<=0.1%",
        "--start-rate",
        "250",
        "-c",
        "32",
        "-t",
        "1",
        "-d",
        "1s",
        "--warmup",
        "300ms",
        "--json",
        &url,
    ]);
    let v = json_of(&out);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    let found = v["capacity_rps"].as_f64().expect("a capacity");
    assert!(
        (found - CAPACITY).abs() <= 0.1 * CAPACITY,
        "found {found}/s, true {CAPACITY}/s: {v:#}"
    );
    assert_eq!(v["ending"], "converged", "{v:#}");
    let missed = v["failed_at_rps"].as_f64().expect("a failing rate");
    assert!(missed > found && missed <= found * 1.05 + 1.0, "{v:#}");
    let steps = v["steps"].as_array().unwrap();
    assert!(steps.len() >= 5, "a ramp and a bisection: {v:#}");
    assert!(steps
        .iter()
        .any(|s| s["met"] == false && s["p99_us"].as_f64() > Some(50_000.0)));
}

#[test]
fn a_goal_failing_at_the_first_rate_exits_10_and_keeps_the_step() {
    let url = format!("http://{}/", queue_server());
    // The server runs in this process: its CPU per request is read from /proc.
    let pid = std::process::id().to_string();
    let out = load(&[
        "--find-max",
        "--slo",
        "p50<=500us",
        "--server-pid",
        &pid,
        "--start-rate",
        "200",
        "-c",
        "8",
        "-t",
        "1",
        "-d",
        "500ms",
        "--warmup",
        "100ms",
        "--json",
        &url,
    ]);
    let v = json_of(&out);
    assert_eq!(out.status.code(), Some(10), "{v:#}");
    assert_eq!(v["ending"], "goal-missed-at-start");
    assert!(v["capacity_rps"].is_null());
    assert_eq!(v["steps"].as_array().unwrap().len(), 1);
    let cpu = v["steps"][0]["server_cpu_us_per_request"].as_f64();
    assert!(cpu.is_some_and(|us| us > 0.0), "{v:#}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("p50") && err.contains("> 500us"), "{err}");
}

/// Bad input: exit 1 and one line on stderr naming `needle`, nothing measured.
fn assert_refused(args: &[&str], needle: &str) {
    let out = load(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected `{needle}` in {err}"
    );
}

#[test]
fn bad_slos_and_flags_the_search_cannot_take_give_one_line_each() {
    let url = "http://127.0.0.1:1/";
    let fm = |extra: &[&'static str]| {
        let mut a = vec!["--find-max", "--slo", "p99<=5ms"];
        a.extend_from_slice(extra);
        a
    };
    assert_refused(&["--find-max", "--slo", "p95<=5ms", url], "not a measure");
    assert_refused(&["--find-max", "--slo", "p99 5ms", url], "not a goal");
    assert_refused(&["--find-max", url], "needs --slo");
    assert_refused(&[&fm(&["-p", "4"])[..], &[url]].concat(), "--pipeline");
    assert_refused(&[&fm(&["-n", "100"])[..], &[url]].concat(), "--requests");
    assert_refused(&[&fm(&["-R", "100"])[..], &[url]].concat(), "--rate");
    assert_refused(
        &[&fm(&["--precision", "0"])[..], &[url]].concat(),
        "--precision",
    );
    assert_refused(
        &["--slo", "p99<=5ms", "-d", "1s", url],
        "only with --find-max",
    );
}
