//! `serverbench load` with request bodies, chunked uploads, `{rand:A-B}` paths and encoded
//! answers: the real binary against an in-process server that records what it receives.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// One request as the server received it.
#[derive(Debug, Clone)]
struct Seen {
    line: String,
    body_len: usize,
    /// Chunk sizes (empty: sent with Content-Length).
    chunks: Vec<usize>,
    /// The framing was well formed (each chunk ends in CRLF, a zero chunk ends the body).
    framing_ok: bool,
}

/// What the server answers.
#[derive(Debug, Clone, Copy)]
enum Answer {
    /// The body's byte count, as text.
    Count,
    /// A fixed text, encoded with this `Content-Encoding` (gzip or br).
    Encoded(&'static str),
    /// A Content-Length of 100 and 5 bytes, then a close.
    Truncated,
}

const TEXT: &str = "Hello, World! Hello, World! Hello, World! Hello, World!";

fn encode(coding: &str) -> Vec<u8> {
    match coding {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(TEXT.as_bytes()).unwrap();
            e.finish().unwrap()
        }
        _ => {
            let mut out = Vec::new();
            let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            w.write_all(TEXT.as_bytes()).unwrap();
            drop(w);
            out
        }
    }
}

/// Reads one request (head, then a Content-Length or chunked body); `None` at EOF.
fn read_request(r: &mut BufReader<TcpStream>) -> Option<Seen> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let (mut len, mut chunked) = (0usize, false);
    loop {
        let mut h = String::new();
        r.read_line(&mut h).ok()?;
        if h == "\r\n" || h.is_empty() {
            break;
        }
        let (name, value) = h.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => len = value.trim().parse().ok()?,
            "transfer-encoding" => chunked = value.trim().eq_ignore_ascii_case("chunked"),
            _ => {}
        }
    }
    let mut seen = Seen {
        line: line.trim_end().to_string(),
        body_len: 0,
        chunks: Vec::new(),
        framing_ok: true,
    };
    if !chunked {
        let mut body = vec![0; len];
        r.read_exact(&mut body).ok()?;
        seen.body_len = len;
        return Some(seen);
    }
    loop {
        let mut size = String::new();
        r.read_line(&mut size).ok()?;
        let n = usize::from_str_radix(size.trim_end(), 16).ok()?;
        let mut data = vec![0; n + 2];
        r.read_exact(&mut data).ok()?;
        seen.framing_ok &= data.ends_with(b"\r\n") && size.ends_with("\r\n");
        if n == 0 {
            return Some(seen);
        }
        seen.chunks.push(n);
        seen.body_len += n;
    }
}

/// A server answering every request with `answer`; returns its address and what it received.
fn server(answer: Answer) -> (SocketAddr, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(s) = stream else { continue };
            let log = log.clone();
            std::thread::spawn(move || {
                let mut w = s.try_clone().unwrap();
                let mut r = BufReader::new(s);
                while let Some(req) = read_request(&mut r) {
                    let out = respond(answer, &req);
                    log.lock().unwrap().push(req);
                    if w.write_all(&out).is_err() || matches!(answer, Answer::Truncated) {
                        return;
                    }
                }
            });
        }
    });
    (addr, seen)
}

fn respond(answer: Answer, req: &Seen) -> Vec<u8> {
    match answer {
        Answer::Count => {
            let body = req.body_len.to_string();
            format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()
        }
        Answer::Encoded(coding) => {
            let body = encode(coding);
            let mut out = format!(
                "HTTP/1.1 200 OK\r\nContent-Encoding: {coding}\r\nVary: Accept-Encoding\r\n\
                 Content-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes();
            out.extend_from_slice(&body);
            out
        }
        Answer::Truncated => b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello".to_vec(),
    }
}

fn load(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

/// Runs a load expected to succeed and returns its JSON result.
fn load_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["-t", "1", "--json", "-q"];
    all.extend_from_slice(args);
    let out = load(&all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"))
}

#[test]
fn drawn_body_sizes_stay_in_range_and_match_their_content_length_on_both_backends() {
    for io in ["epoll", "uring"] {
        let (addr, seen) = server(Answer::Count);
        let url = format!("http://{addr}/upload");
        let r = load_json(&[
            "-c",
            "4",
            "-n",
            "60",
            "--io",
            io,
            "-X",
            "POST",
            "--body-size",
            "1KB..300KB",
            &url,
        ]);
        assert_eq!(r["errors"]["read"], 0, "{io}: {r}");
        let seen = seen.lock().unwrap().clone();
        assert!(seen.len() >= 60, "{io}: {} requests", seen.len());
        let sizes: std::collections::BTreeSet<usize> = seen.iter().map(|s| s.body_len).collect();
        assert!(
            sizes.iter().all(|n| (1000..=300_000).contains(n)),
            "{io}: {sizes:?}"
        );
        assert!(
            sizes.len() > 30,
            "{io}: sizes are not drawn per request: {sizes:?}"
        );
        let b = &r["protocol"]["bodies"];
        assert!(
            b["request_body_bytes_mean"].as_f64().unwrap() > 1000.0,
            "{io}: {b}"
        );
    }
}

#[test]
fn a_chunked_body_arrives_in_chunks_of_the_size_asked_with_valid_framing() {
    for io in ["epoll", "uring"] {
        let (addr, seen) = server(Answer::Count);
        let url = format!("http://{addr}/upload");
        let r = load_json(&[
            "-c",
            "2",
            "-n",
            "10",
            "--io",
            io,
            "-X",
            "POST",
            "--body-size",
            "1MiB",
            "--chunked",
            "--chunk-size",
            "64KiB",
            &url,
        ]);
        assert_eq!(r["errors"]["parse"], 0, "{r}");
        for s in seen.lock().unwrap().iter() {
            assert!(s.framing_ok, "{io}: {s:?}");
            assert_eq!(s.body_len, 1 << 20, "{io}");
            assert_eq!(s.chunks, vec![65536; 16], "{io}");
        }
    }
}

#[test]
fn a_small_fixed_body_can_be_sent_chunked_too() {
    let (addr, seen) = server(Answer::Count);
    let url = format!("http://{addr}/baseline?a=1&b=2");
    load_json(&[
        "-c",
        "1",
        "-n",
        "3",
        "-X",
        "POST",
        "--body",
        "12345",
        "--chunked",
        "--chunk-size",
        "2",
        &url,
    ]);
    let s = seen.lock().unwrap()[0].clone();
    assert!(s.framing_ok);
    assert_eq!(s.chunks, [2, 2, 1]);
}

#[test]
fn rand_placeholders_send_fresh_values_in_range() {
    let (addr, seen) = server(Answer::Count);
    let url = format!("http://{addr}/baseline?a={{rand:1-100}}&b={{rand:1-100}}");
    load_json(&["-c", "2", "-n", "200", &url]);
    let lines: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.line.clone())
        .collect();
    let mut values = std::collections::BTreeSet::new();
    for l in &lines {
        let q = l
            .strip_prefix("GET /baseline?a=")
            .unwrap()
            .strip_suffix(" HTTP/1.1")
            .unwrap();
        let (a, b) = q.split_once("&b=").unwrap();
        for v in [a, b] {
            let v: u32 = v.parse().unwrap();
            assert!((1..=100).contains(&v), "{l}");
            values.insert(v);
        }
    }
    assert!(values.len() > 50, "only {} distinct values", values.len());
}

#[test]
fn gzip_and_br_answers_that_were_asked_for_verify_and_report_wire_and_decoded_sizes() {
    for coding in ["gzip", "br"] {
        let (addr, _) = server(Answer::Encoded(coding));
        let url = format!("http://{addr}/json");
        let r = load_json(&[
            "-c",
            "2",
            "-n",
            "50",
            "--verify",
            "-H",
            "Accept-Encoding: gzip, br",
            &url,
        ]);
        assert_eq!(r["errors"]["encoding"], 0, "{coding}: {r}");
        assert_eq!(r["errors"]["body"], 0, "{coding}: {r}");
        let b = &r["protocol"]["bodies"];
        assert_eq!(
            b["decoded_body_bytes_mean"].as_f64(),
            Some(TEXT.len() as f64),
            "{b}"
        );
        assert!(
            b["wire_body_bytes_mean"].as_f64().unwrap() < TEXT.len() as f64,
            "{b}"
        );
        assert_eq!(b["encodings"][coding], b["responses"], "{b}");
    }
}

#[test]
fn an_answer_in_a_coding_not_asked_for_is_an_encoding_error_by_cause() {
    let (addr, _) = server(Answer::Encoded("br"));
    let url = format!("http://{addr}/json");
    let r = load_json(&[
        "-c",
        "1",
        "-n",
        "20",
        "--verify",
        "-H",
        "Accept-Encoding: gzip",
        &url,
    ]);
    assert_eq!(r["errors"]["encoding"], 20, "{r}");
    assert_eq!(
        r["protocol"]["bodies"]["encoding_errors"]["unlisted br"], 20,
        "{r}"
    );
}

#[test]
fn a_body_cut_short_by_a_close_is_counted_as_truncated() {
    let (addr, _) = server(Answer::Truncated);
    let url = format!("http://{addr}/");
    // Every request fails, so the exit says so; the JSON result is printed all the same.
    let out = load(&["-t", "1", "--json", "-q", "-c", "1", "-d", "300ms", &url]);
    assert_ne!(out.status.code(), Some(0));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(r["errors"]["truncated"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["errors"]["read"], 0, "{r}");
}

#[test]
fn reconnect_every_opens_a_connection_per_n_responses_and_times_the_connects() {
    let (addr, seen) = server(Answer::Count);
    let url = format!("http://{addr}/");
    let r = load_json(&["-c", "2", "-n", "100", "--reconnect-every", "10", &url]);
    assert_eq!(seen.lock().unwrap().len(), 100);
    let connects = r["connects"].as_u64().unwrap();
    assert!((8..=12).contains(&connects), "{connects} connects: {r}");
    assert!(
        r["connect_latency_us"]["p50"].as_f64().unwrap() > 0.0,
        "{r}"
    );
}

/// Bad input: exit 1 and one line on stderr naming `needle`.
fn assert_bad_input(args: &[&str], needle: &str) {
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
fn bad_body_flags_each_give_one_line_naming_the_flag() {
    let url = "http://127.0.0.1:1/";
    assert_bad_input(
        &["--body-file", "/nonexistent/body", "-d", "1s", url],
        "--body-file",
    );
    assert_bad_input(
        &["--body-size", "20MB..500KB", "-d", "1s", url],
        "backwards",
    );
    assert_bad_input(
        &["--body-size", "20MB..500KB", "-d", "1s", url],
        "--body-size",
    );
    assert_bad_input(&["--chunked", "-d", "1s", url], "--chunked");
    assert_bad_input(
        &["--tcp", "127.0.0.1:1", "--body-size", "1KB", "-d", "1s"],
        "--body-size",
    );
    assert_bad_input(
        &["--body-size", "1KB", "-d", "1s", "ws://127.0.0.1:1/ws"],
        "--body-size",
    );
    assert_bad_input(
        &["-d", "1s", "http://127.0.0.1:1/a?x={rand:9-1}"],
        "{rand:9-1}",
    );
}
