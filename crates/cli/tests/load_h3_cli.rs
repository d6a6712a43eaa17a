//! `serverbench load --http3`: what the flags refuse, each in one line naming the flag, with exit
//! code 1 and before any datagram or connection (a UDP socket and a TCP listener on the URL's
//! port that are never read from or accepted on see nothing); then end to end, the real binary
//! against the catalog's rust/quinn-h3 (set up by the binary first, once per test binary: it
//! needs cargo and crates.io), started with `serverbench serve` and stopped with SIGTERM, and a
//! UDP port with nothing behind it, named in the TLS block's errors with the lap ending on time.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, UdpSocket};
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
    // serve's suggestion: `serverbench load --http3 --cacert CERT -d 5s https://HOST:H3_PORT/hello`
    let try_line = out
        .lines()
        .map(Result::unwrap)
        .find(|l| l.contains("serverbench load --http3"))
        .expect("serve announced its HTTP/3 port");
    let words: Vec<&str> = try_line.split_whitespace().collect();
    let cert = words
        .iter()
        .position(|w| *w == "--cacert")
        .map(|k| words[k + 1]);
    let url = words.last().expect("a URL");
    let port = url.rsplit(':').next().and_then(|p| p.split('/').next());
    let (h3_port, cert) = (port.and_then(|p| p.parse().ok()), cert.map(str::to_string));
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
    let port = UdpSocket::bind("127.0.0.1:0")
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

#[test]
fn http3_with_a_flag_it_cannot_take_is_refused_in_one_line_before_any_datagram() {
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let port = udp.local_addr().unwrap().port();
    let tcp = TcpListener::bind(("127.0.0.1", port)).unwrap();
    tcp.set_nonblocking(true).unwrap();
    let https = format!("https://127.0.0.1:{port}/hello");
    let http = format!("http://127.0.0.1:{port}/hello");
    let echo = format!("127.0.0.1:{port}");
    let cases: [(Vec<&str>, &str); 8] = [
        (
            vec!["--http3", &http],
            "--http3: needs https://: QUIC carries TLS 1.3",
        ),
        (
            vec!["--http3", "-p", "4", &https],
            "-p/--pipeline: does not apply to --http3",
        ),
        (
            vec!["--http3", "--http2", &https],
            "--http3: cannot be combined with --http2",
        ),
        (
            vec!["--http3", "--tcp", &echo],
            "--http3: does not apply to --tcp",
        ),
        (
            vec!["--http3", "--io", "uring", &https],
            "--http3: runs on epoll only",
        ),
        (vec!["--0rtt", "-k", &https], "--0rtt: needs --http3"),
        (
            vec!["--http3", "--0rtt", "--new-conn", &https],
            "--0rtt: needs --tls-resume tickets",
        ),
        (
            vec!["--http3", "--tls-version", "1.2", &https],
            "--tls-version: cannot be combined with --http3 (QUIC carries TLS 1.3 only)",
        ),
    ];
    for (args, want) in cases {
        let out = load(&[&["-n", "1", "-c", "1"][..], &args].concat());
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let mut buf = [0u8; 64];
    assert!(udp.recv_from(&mut buf).is_err(), "no datagram was sent");
    assert!(tcp.accept().is_err(), "no connection was made");
}

#[test]
fn the_help_names_http3_and_0rtt() {
    let out = load(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--http3"), "{help}");
    assert!(help.contains("--0rtt"), "{help}");
    assert!(help.contains("serverbench load --http3 -m 16"), "{help}");
}
