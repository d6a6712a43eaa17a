//! `serverbench load --mix FILE` end to end: the real binary against an in-process loopback
//! server that answers by path and counts what it was sent.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// Requests seen per `METHOD path`, with the body length of the last one.
type Seen = Arc<Mutex<BTreeMap<String, (u64, usize)>>>;

/// A keep-alive HTTP/1.1 server (pipelining allowed) that reads Content-Length bodies and
/// answers 404 to `/missing`, 200 with the body's length to anything else.
fn path_server() -> (SocketAddr, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(s) = stream else { continue };
            let seen = s2.clone();
            std::thread::spawn(move || serve(s, &seen));
        }
    });
    (addr, seen)
}

fn serve(mut s: TcpStream, seen: &Seen) {
    let mut buf = [0u8; 65536];
    let mut pending = Vec::new();
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
        let mut out = Vec::new();
        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&pending[..end]).to_string();
            let len: usize = head
                .to_ascii_lowercase()
                .lines()
                .find_map(|l| Some(l.strip_prefix("content-length:")?.trim().parse().unwrap()))
                .unwrap_or(0);
            if pending.len() < end + 4 + len {
                break;
            }
            pending.drain(..end + 4 + len);
            let mut words = head.split(' ');
            let key = format!("{} {}", words.next().unwrap(), words.next().unwrap());
            let missing = key.ends_with(" /missing");
            let mut seen = seen.lock().unwrap();
            let entry = seen.entry(key).or_default();
            *entry = (entry.0 + 1, len);
            drop(seen);
            let body = len.to_string();
            let status = if missing { "404 Not Found" } else { "200 OK" };
            out.extend_from_slice(
                format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

fn mix_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

const WEIGHTED: &str = "[[request]]\npath = \"/a\"\nweight = 6\n\n\
                        [[request]]\nname = \"upload\"\nmethod = \"POST\"\npath = \"/up\"\n\
                        body_size = 1000\nweight = 3\n\n\
                        [[request]]\npath = \"/c?x=1\"\nheaders = [\"X-Entry: c\"]\nweight = 1\n";

/// Each entry's share of `total` against `want`, within `tol`.
fn assert_shares(v: &serde_json::Value, want: &[f64], tol: f64) {
    let mix = v["protocol"]["mix"]
        .as_array()
        .expect("a mix in the result");
    let total = v["requests"].as_u64().unwrap() as f64;
    let sum: u64 = mix.iter().map(|e| e["requests"].as_u64().unwrap()).sum();
    assert_eq!(sum as f64, total, "entries add up to the run");
    for (e, w) in mix.iter().zip(want) {
        let got = e["requests"].as_u64().unwrap() as f64 / total;
        assert!((got - w).abs() < tol, "{}: {got} vs {w}", e["name"]);
        assert!(e["latency_us"]["p50"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn each_entry_gets_its_weights_share_of_the_requests_with_its_method_and_body() {
    let dir = tempfile::tempdir().unwrap();
    let mix = mix_file(dir.path(), "w.toml", WEIGHTED);
    let (addr, seen) = path_server();
    let url = format!("http://{addr}");
    let out = serverbench(&[
        "--mix",
        mix.to_str().unwrap(),
        "-c",
        "4",
        "-t",
        "2",
        "-n",
        "5000",
        "--json",
        &url,
    ]);
    let v = json_of(&out);
    assert_shares(&v, &[0.6, 0.3, 0.1], 0.03);
    let names: Vec<&str> = v["protocol"]["mix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["/a", "upload", "/c?x=1"]);
    let seen = seen.lock().unwrap();
    assert_eq!(seen["POST /up"].1, 1000, "the upload entry's body was sent");
    assert_eq!(seen["GET /c?x=1"].1, 0);
    let served: u64 = seen.values().map(|(n, _)| n).sum();
    assert!(served >= 5000, "{seen:?}");
}

#[test]
fn a_pipelined_mix_keeps_the_shares() {
    let dir = tempfile::tempdir().unwrap();
    let mix = mix_file(dir.path(), "w.toml", WEIGHTED);
    let (addr, _) = path_server();
    let url = format!("http://{addr}/");
    let out = serverbench(&[
        "--mix",
        mix.to_str().unwrap(),
        "-c",
        "2",
        "-t",
        "1",
        "-p",
        "8",
        "-n",
        "4000",
        "--json",
        &url,
    ]);
    assert_shares(&json_of(&out), &[0.6, 0.3, 0.1], 0.03);
}

#[test]
fn errors_are_counted_on_the_entry_that_got_them_and_the_summary_has_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[[request]]\npath = \"/ok\"\n\n[[request]]\npath = \"/missing\"\n";
    let mix = mix_file(dir.path(), "e.toml", text);
    let (addr, _) = path_server();
    let url = format!("http://{addr}");
    let json_path = dir.path().join("r.json");
    let out = serverbench(&[
        "--mix",
        mix.to_str().unwrap(),
        "-c",
        "2",
        "-t",
        "1",
        "-n",
        "1000",
        "-o",
        json_path.to_str().unwrap(),
        &url,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("  Mix          entry"), "{text}");
    assert!(
        text.contains("/missing") && text.contains("50.0%"),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let mix = v["protocol"]["mix"].as_array().unwrap();
    assert_eq!(mix[0]["errors"]["status"], 0);
    assert_eq!(mix[1]["errors"]["status"], mix[1]["requests"]);
    assert_eq!(v["errors"]["status"], mix[1]["requests"]);
}

/// Bad input: exit 1 and exactly one line on stderr that mentions `needle`.
fn assert_bad_mix(dir: &Path, text: Option<&str>, needle: &str) {
    let path = match text {
        Some(t) => mix_file(dir, "bad.toml", t),
        None => dir.join("absent.toml"),
    };
    let out = serverbench(&[
        "--mix",
        path.to_str().unwrap(),
        "-n",
        "1",
        "http://127.0.0.1:1",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "expected `{needle}` in {err}");
}

#[test]
fn a_bad_mix_file_gives_one_line_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    assert_bad_mix(dir.path(), None, "--mix ");
    assert_bad_mix(dir.path(), None, "absent.toml: No such file");
    assert_bad_mix(
        dir.path(),
        Some("[[request]]\npath = \"/a\"\nweight = \n"),
        "bad.toml:3: ",
    );
    assert_bad_mix(
        dir.path(),
        Some("[[request]]\npath = \"/a\"\nweight = 0\n"),
        "bad.toml:1: the weights add up to 0",
    );
    assert_bad_mix(
        dir.path(),
        Some("[[request]]\npath = \"/a\"\nmethod = \"GRAB\"\n"),
        "bad.toml:3: unknown method `GRAB`",
    );
    assert_bad_mix(
        dir.path(),
        Some("[[request]]\n\npath = \"a\"\n"),
        "bad.toml:3: path `a` must start with /",
    );
    assert_bad_mix(
        dir.path(),
        Some("[[request]]\npath = \"/a\"\nbody_file = \"nope.bin\"\n"),
        "bad.toml:3: nope.bin",
    );
}

#[test]
fn a_mix_with_a_url_path_or_a_body_flag_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mix = mix_file(dir.path(), "m.toml", "[[request]]\npath = \"/a\"\n");
    let m = mix.to_str().unwrap();
    let out = serverbench(&["--mix", m, "-n", "1", "http://127.0.0.1:1/x"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--mix: give one URL without a path"), "{err}");
    let out = serverbench(&["--mix", m, "--body", "x", "-n", "1", "http://127.0.0.1:1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--body"), "{err}");
}
