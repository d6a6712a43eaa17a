//! `serverbench load --find-max` where the client's own open-loop ceiling matters: the real
//! binary against in-process servers whose answers cost the client more than the server. Each
//! answer is a gzip body of zeros that `--verify` decodes and checksums on the client (a
//! millisecond or more of one client thread), while the server only writes the few kilobytes
//! it compressed once: one client thread (`-t 1`) then has a ceiling of a few hundred
//! requests/s, known from a closed-loop run of the same client.

use flate2::write::GzEncoder;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A keep-alive HTTP server answering every request with `body` (gzip of `zeros` zero bytes),
/// each answer holding one of `workers` workers for `service` first (no workers: at once).
fn gzip_server(zeros: usize, workers: usize, service: Duration) -> SocketAddr {
    let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&vec![0u8; zeros]).unwrap();
    let body = gz.finish().unwrap();
    let mut answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    let answer: Arc<[u8]> = answer.into();
    // Each worker is busy until an instant; a request takes the first free one.
    let free_at = Arc::new(Mutex::new(vec![Instant::now(); workers]));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let (answer, free_at) = (Arc::clone(&answer), Arc::clone(&free_at));
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
                        wait_for_a_worker(&free_at, service);
                        if s.write_all(&answer).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

/// Holds the first free worker of `free_at` for `service` (returns at once without workers).
fn wait_for_a_worker(free_at: &Mutex<Vec<Instant>>, service: Duration) {
    let done = {
        let mut free_at = free_at.lock().unwrap();
        let Some(first) = (0..free_at.len()).min_by_key(|&i| free_at[i]) else {
            return;
        };
        let done = free_at[first].max(Instant::now()) + service;
        free_at[first] = done;
        done
    };
    std::thread::sleep(done.saturating_duration_since(Instant::now()));
}

/// The client's flags: one thread, four connections, every answer decoded and checksummed.
const CLIENT: [&str; 9] = [
    "-t",
    "1",
    "-c",
    "4",
    "--verify",
    "-H",
    "Accept-Encoding: gzip",
    "--warmup",
    "300ms",
];

fn load(args: &[&str], url: &str) -> (Output, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(CLIENT)
        .args(args)
        .args(["--json", url])
        .output()
        .expect("run serverbench");
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, v)
}

fn find_max(url: &str, slo: &str, start: &str) -> (Output, serde_json::Value) {
    let search = [
        "--find-max",
        "--slo",
        slo,
        "--start-rate",
        start,
        "-d",
        "1s",
    ];
    load(&search, url)
}

#[test]
fn a_server_faster_than_the_client_gets_a_lower_bound_and_the_clients_ceiling() {
    // 2 MB of zeros per answer: milliseconds of decoding and checksumming per request.
    let url = format!("http://{}/", gzip_server(2 << 20, 0, Duration::ZERO));
    let (_, closed) = load(&["-d", "1s"], &url);
    let closed = closed["rps"].as_f64().unwrap();
    assert!(closed > 20.0 && closed < 5000.0, "closed loop {closed}/s");
    let start = format!("{:.0}", closed / 8.0);
    let (out, v) = find_max(&url, "p99<=200ms", &start);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    assert_eq!(v["ending"], "client-limit", "{v:#}");
    assert!(
        v["failed_at_rps"].is_null(),
        "the server missed nothing: {v:#}"
    );
    let capacity = v["capacity_rps"].as_f64().expect("a lower bound");
    let ceiling = v["client_ceiling_rps"]
        .as_f64()
        .expect("the client's ceiling");
    // The client sends open loop about what it answers closed loop at most (the two runs
    // differ with the machine's load), and the lower bound was bisected up to what it sends (a
    // kept schedule is 95% of the rate asked).
    assert!(
        ceiling <= closed * 1.5,
        "ceiling {ceiling}/s, closed loop {closed}/s: {v:#}"
    );
    assert!(capacity <= ceiling / 0.95 * 1.05, "{v:#}");
    assert!(
        capacity >= ceiling * 0.5,
        "bisected toward the ceiling: {v:#}"
    );
    let steps = v["steps"].as_array().unwrap();
    let limited = steps.iter().filter(|s| s["client_limit"].is_string());
    assert!(limited.count() >= 1, "{v:#}");
    let err = String::from_utf8_lossy(&out.stderr);
    let said = format!("capacity ≥ {capacity:.0}/s (client limit {ceiling:.0}/s)");
    assert!(err.contains(&said), "{said} in {err}");
    assert!(err.contains("-t") && err.contains("--hosts"), "{err}");
    for line in err.lines() {
        assert!(line.chars().count() <= 120, "{line}");
    }
}

#[test]
fn a_server_slower_than_the_client_is_found_within_the_precision() {
    // 4 workers x 10 ms: 400 requests/s; 64 KB answers leave the client far above that.
    let url = format!(
        "http://{}/",
        gzip_server(64 << 10, 4, Duration::from_millis(10))
    );
    let (out, v) = find_max(&url, "p99<=100ms", "100");
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    assert_eq!(v["ending"], "converged", "{v:#}");
    let capacity = v["capacity_rps"].as_f64().expect("a capacity");
    assert!(
        (capacity - 400.0).abs() <= 40.0,
        "found {capacity}/s, true 400/s: {v:#}"
    );
    let missed = v["failed_at_rps"].as_f64().unwrap();
    assert!(
        missed > capacity && missed <= capacity * 1.05 + 1.0,
        "{v:#}"
    );
    // Any step the client could not keep lies above the knee.
    if let Some(ceiling) = v["client_ceiling_rps"].as_f64() {
        assert!(ceiling > capacity, "{v:#}");
    }
}
