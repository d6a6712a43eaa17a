//! Every lap accounts for every request: requests still in flight when the measured window
//! ends are counted, answers that stop part-way are seen, and a lap whose server answered
//! nothing fails with its cause instead of reading `0 req/s` as ok. The real binary against
//! loopback servers written here.

mod common;

use common::records;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn serverbench(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(args)
        .env("SERVERBENCH_CACHE", dir.join("cache"))
        .current_dir(dir)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A keep-alive HTTP/1.1 server in this test process: it answers at once for `answering` after
/// its first request, then takes `delay` over every answer. Its threads end with the test.
fn slowing_server(answering: Duration, delay: Duration) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let first = std::sync::Arc::new(std::sync::OnceLock::<Instant>::new());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let first = first.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut out = stream;
                loop {
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    if first.get_or_init(Instant::now).elapsed() >= answering {
                        std::thread::sleep(delay);
                    }
                    let reply = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!";
                    if out.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)))
}

#[test]
fn sixty_four_requests_unanswered_at_the_end_of_a_one_second_load_are_counted_and_exit_6() {
    let tmp = tempfile::tempdir().unwrap();
    let addr = slowing_server(Duration::ZERO, Duration::from_secs(5));
    let url = format!("http://{addr}/hello");
    let out = serverbench(
        &["load", "-c", "64", "-d", "1s", "--json", "-q", &url],
        tmp.path(),
    );
    let (v, err) = (json(&out), text(&out.stderr));
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert_eq!(v["requests"], 0, "{v}");
    assert_eq!(v["in_flight_at_end"], 64, "{v}");
    assert!(
        err.contains("no answer in the 1.0 s run: 64 requests in flight"),
        "{err}"
    );
}

#[test]
fn answers_that_stop_part_way_leave_a_silence_up_to_the_end_in_the_result_and_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let addr = slowing_server(Duration::from_millis(300), Duration::from_secs(30));
    let url = format!("http://{addr}/hello");
    let out = serverbench(&["load", "-c", "2", "-d", "3s", "-q", &url], tmp.path());
    let (stdout, err) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "some were answered: {err}");
    assert!(stdout.contains("2 in flight at the end"), "{stdout}");
    let silence = stdout.lines().find(|l| l.contains("Silence")).unwrap_or("");
    assert!(silence.contains("to 3.0 s"), "{stdout}");
    let out = serverbench(
        &["load", "-c", "2", "-d", "2s", "--json", "-q", &url],
        tmp.path(),
    );
    let v = json(&out);
    assert_eq!(out.status.code(), Some(6), "hung from the start: {v}");
    let silences = v["silences"].as_array().unwrap();
    assert_eq!(silences.len(), 1, "{v}");
    assert!(silences[0]["from_s"].as_f64().unwrap() < 0.1, "{v}");
}

/// A server of the test's own: it answers `/hello` for half a second after its first request
/// (the warm-up's), then never again.
const HANGS: &str = r#"
import os, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
FIRST = []
LOCK = threading.Lock()
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        with LOCK:
            if not FIRST:
                FIRST.append(time.monotonic())
        if time.monotonic() - FIRST[0] > 0.5:
            time.sleep(3600)
        body = b"Hello World!"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
ThreadingHTTPServer.daemon_threads = True
print("listening", flush=True)
ThreadingHTTPServer((os.environ["HOST"], int(os.environ["PORT"])), H).serve_forever()
"#;

/// `run` of [`HANGS`] as a server of the test's own, with `laps` of `lap` after `warmup`.
fn run_hangs(tmp: &Path, lap: &str, laps: &str, warmup: &str) -> Output {
    std::fs::write(tmp.join("hangs.py"), HANGS).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/run-catalog");
    let results = tmp.join("results");
    serverbench(
        &[
            "run",
            "--root",
            root.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
            "--server",
            "hangs=exec python3 hangs.py",
            "--no-verify",
            "-c",
            "2",
            "-d",
            lap,
            "--laps",
            laps,
            "--warmup",
            warmup,
        ],
        tmp,
    )
}

#[test]
fn a_server_that_hangs_after_the_warm_up_has_no_lap_ok_and_the_run_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_hangs(tmp.path(), "1s", "2", "1s");
    let results = tmp.path().join("results");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    let recs = records(&results);
    assert_eq!(recs.len(), 2, "{recs:?}");
    for r in &recs {
        assert_eq!(r["status"], "failed", "{r}");
        assert_eq!(r["failure"]["kind"], "no-answer", "{r}");
        assert_eq!(r["load"]["requests"], 0, "what it measured is kept: {r}");
        assert_eq!(r["load"]["in_flight_at_end"], 2, "{r}");
    }
    assert!(
        stdout.contains("no answer in the 1.0 s lap: 2 requests in flight"),
        "{stdout}"
    );
    let row = stdout.lines().find(|l| l.contains("hangs")).unwrap_or("");
    assert!(row.contains("failed"), "the table's row: {stdout}");
}

#[test]
fn a_server_that_stops_answering_part_way_through_a_lap_fails_it_as_a_stall() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_hangs(tmp.path(), "3s", "1", "0s");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    let recs = records(&tmp.path().join("results"));
    let lap = &recs[0];
    assert_eq!(lap["failure"]["kind"], "stall", "{lap}");
    let why = lap["failure"]["detail"].as_str().unwrap();
    assert!(why.starts_with("stall: no answer for "), "{why}");
    assert!(why.contains(" s of the 3.0 s lap, from "), "{why}");
    assert!(lap["load"]["requests"].as_u64().unwrap() > 0, "{lap}");
    let silence = &lap["load"]["silences"][0];
    let to_s = silence["to_s"].as_f64().unwrap();
    assert!((to_s - 3.0).abs() < 0.01, "silent to the end: {lap}");
}
