//! `serverbench load --http3` end to end: the real binary against the catalog's rust/quinn-h3
//! (set up by the binary first, once per test binary: it needs cargo and crates.io), started
//! with `serverbench serve` and stopped with SIGTERM; then a UDP port with nothing behind it,
//! named in the TLS block's errors with the lap ending on time.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_serverbench"));
    if let Some(cache) = std::env::var_os("SERVERBENCH_CACHE") {
        c.env("SERVERBENCH_CACHE", cache);
    }
    c
}

fn load(args: &[&str]) -> Output {
    bin()
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

/// `serverbench setup rust/quinn-h3`, once for the tests of this file.
fn set_up_quinn_h3() {
    static SETUP_ONCE: std::sync::Once = std::sync::Once::new();
    SETUP_ONCE.call_once(|| {
        let root = root();
        let out = bin()
            .args(["setup", "rust/quinn-h3", "--root", root.to_str().unwrap()])
            .output()
            .unwrap();
        let why = "rust/quinn-h3 could not be set up: it needs cargo and crates.io";
        assert!(out.status.success(), "{why}\n{out:?}");
    });
}

/// A catalog server run by `serverbench serve`, stopped (SIGTERM) when dropped.
struct Served {
    child: Child,
    h3_port: u16,
    cert: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        // serve stops its server's process group on SIGTERM, then exits.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// Starts rust/quinn-h3 and reads its HTTP/3 port and certificate from what serve prints.
fn serve_quinn_h3() -> Served {
    set_up_quinn_h3();
    let root = root();
    let mut child = bin()
        .args(["serve", "rust/quinn-h3", "--root", root.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let (mut h3_port, mut cert) = (None, None);
    for line in out.lines() {
        let line = line.unwrap();
        if let Some(addr) = line.split("http/3 on udp ").nth(1) {
            h3_port = addr.rsplit(':').next().and_then(|p| p.trim().parse().ok());
        }
        if let Some(rest) = line.split("--cacert ").nth(1) {
            cert = rest.split_whitespace().next().map(str::to_string);
        }
        if h3_port.is_some() && cert.is_some() {
            break;
        }
    }
    Served {
        child,
        h3_port: h3_port.expect("serve printed the HTTP/3 port"),
        cert: cert.expect("serve printed the certificate"),
    }
}

fn json_of(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

#[test]
fn quinn_h3_answers_every_stream_verified_over_http3() {
    let s = serve_quinn_h3();
    let url = format!("https://127.0.0.1:{}/hello", s.h3_port);
    let args = [
        "--http3", "--cacert", &s.cert, "-c", "2", "-m", "8", "-t", "1",
    ];
    let out = load(&[&args[..], &["-d", "1s", "--verify", "--json", &url]].concat());
    assert!(out.status.success(), "{out:?}");
    let v = json_of(&out);
    let requests = v["requests"].as_u64().unwrap();
    assert!(requests > 100, "{v}");
    assert_eq!(v["status"]["200"].as_u64(), Some(requests), "{v}");
    assert_eq!(v["protocol"]["workload"], "http3");
    assert_eq!(v["protocol"]["streams"], 8);
    assert_eq!(v["tls"]["alpn"], "h3");
    assert_eq!(v["tls"]["handshakes"], 2);
    let errors = v["errors"].as_object().unwrap();
    assert!(errors.values().all(|n| n == 0), "{v}");
}

#[test]
fn a_udp_port_with_nothing_behind_it_is_named_and_the_lap_ends_on_time() {
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("https://127.0.0.1:{port}/");
    let t = Instant::now();
    let out = load(&[
        "--http3",
        "-k",
        "-d",
        "1s",
        "--timeout",
        "200ms",
        "--json",
        &url,
    ]);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(!out.status.success(), "no request answered: {out:?}");
    let v = json_of(&out);
    assert_eq!(v["requests"], 0);
    assert!(
        v["tls"]["errors"]["no answer on UDP"].as_u64() >= Some(1),
        "{v}"
    );
}
