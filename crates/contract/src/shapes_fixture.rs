//! Tests of the `baseline`, `upload`, `compression` and `static` checks against a tiny
//! in-process server: correct by default, with one flaw per rule switchable on, so each rule is
//! shown to fail on the flaw it is there for (naming the rule) and to pass on a correct server.

use super::encoding::encode;
use super::static_tree::{self, Kind};
use super::{baseline, compression, static_files, upload, Check};
use crate::http::Dial;
use serverbench_wire::coding::Coding;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What the fixture gets wrong (nothing by default).
#[derive(Debug, Clone, Copy, Default)]
struct Flaws {
    /// `POST /baseline` ignores the body.
    ignores_body: bool,
    /// A chunked body is taken as empty.
    no_chunked: bool,
    /// Closes when a read ends before the whole request is in.
    needs_whole_request: bool,
    /// Remembers the first body of a connection and answers with it after.
    caches_body: bool,
    /// `POST /upload` holds the whole body in memory before counting it.
    holds_body: bool,
    /// Ignores `Expect: 100-continue` (waits for the body without a word).
    no_continue: bool,
    /// Compresses `/json` even when no `Accept-Encoding` was sent.
    encodes_unasked: bool,
    /// Answers `br` whatever was asked.
    always_br: bool,
    /// No `Vary` on an encoded answer.
    no_vary: bool,
    /// Every static file as `application/octet-stream`.
    untyped: bool,
    /// No `ETag`, no `Last-Modified`.
    no_validator: bool,
    /// Never compresses a static file.
    no_static_compression: bool,
    /// Joins the decoded path to the folder as it comes (`..` included).
    traversal: bool,
    /// A missing file is a 500.
    missing_is_500: bool,
}

struct State {
    flaws: Flaws,
    dir: PathBuf,
    /// Bytes of request bodies held in memory now: the fixture's "resident memory".
    held: AtomicU64,
}

fn serve(flaws: Flaws, dir: PathBuf) -> (SocketAddr, Arc<State>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let state = Arc::new(State {
        flaws,
        dir,
        held: AtomicU64::new(0),
    });
    let s = Arc::clone(&state);
    std::thread::spawn(move || {
        for stream in l.incoming().flatten() {
            let s = Arc::clone(&s);
            std::thread::spawn(move || connection(stream, &s));
        }
    });
    (addr, state)
}

struct Req {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
}

impl Req {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

struct Io {
    s: TcpStream,
    buf: Vec<u8>,
    reads: usize,
}

impl Io {
    fn more(&mut self) -> Option<()> {
        let mut tmp = [0u8; 65536];
        let n = self.s.read(&mut tmp).ok().filter(|&n| n > 0)?;
        self.reads += 1;
        self.buf.extend_from_slice(&tmp[..n]);
        Some(())
    }

    fn head(&mut self) -> Option<Req> {
        let end = loop {
            if let Some(i) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            self.more()?;
        };
        let text = String::from_utf8_lossy(&self.buf[..end]).into_owned();
        self.buf.drain(..end + 4);
        let mut lines = text.split("\r\n");
        let mut first = lines.next()?.split(' ');
        let (method, target) = (first.next()?.to_string(), first.next()?.to_string());
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
            .collect();
        Some(Req {
            method,
            target,
            headers,
        })
    }

    /// Reads the body, handing each piece to `sink`; returns its length.
    fn body(&mut self, req: &Req, sink: &mut dyn FnMut(&[u8])) -> Option<usize> {
        if req.header("transfer-encoding").is_some() {
            return self.chunked(sink);
        }
        let mut left: usize = req
            .header("content-length")
            .map_or(Some(0), |v| v.parse().ok())?;
        let total = left;
        while left > 0 {
            if self.buf.is_empty() {
                self.more()?;
            }
            let n = left.min(self.buf.len());
            sink(&self.buf[..n]);
            self.buf.drain(..n);
            left -= n;
        }
        Some(total)
    }

    fn line(&mut self) -> Option<String> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let l = String::from_utf8_lossy(&self.buf[..i]).into_owned();
                self.buf.drain(..i + 2);
                return Some(l);
            }
            self.more()?;
        }
    }

    fn chunked(&mut self, sink: &mut dyn FnMut(&[u8])) -> Option<usize> {
        let mut total = 0;
        loop {
            let size = usize::from_str_radix(self.line()?.trim(), 16).ok()?;
            if size == 0 {
                while !self.line()?.is_empty() {}
                return Some(total);
            }
            while self.buf.len() < size {
                self.more()?;
            }
            sink(&self.buf[..size]);
            self.buf.drain(..size);
            total += size;
            self.line()?;
        }
    }
}

fn answer(status: u16, ctype: &str, extra: &[String], body: &[u8]) -> Vec<u8> {
    let mut h = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for e in extra {
        h.push_str(e);
        h.push_str("\r\n");
    }
    let mut out = format!("{h}\r\n").into_bytes();
    out.extend_from_slice(body);
    out
}

fn connection(s: TcpStream, st: &State) {
    let f = st.flaws;
    let mut io = Io {
        s,
        buf: Vec::new(),
        reads: 0,
    };
    let mut cached: Option<Vec<u8>> = None;
    let mut held_here = 0;
    while let Some(req) = io.head() {
        if f.needs_whole_request && io.reads > 1 && req.method == "POST" {
            break;
        }
        let path = req.target.split('?').next().unwrap_or("").to_string();
        let out = match (req.method.as_str(), path.as_str()) {
            (_, "/baseline") => baseline_answer(&mut io, &req, f, &mut cached),
            ("POST", "/upload") => {
                if req.header("expect").is_some() && !f.no_continue {
                    let _ = io.s.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
                }
                let mut kept = Vec::new();
                let n = io.body(&req, &mut |b| {
                    if f.holds_body {
                        kept.extend_from_slice(b);
                        st.held.fetch_add(b.len() as u64, Ordering::SeqCst);
                    }
                });
                held_here += kept.len() as u64;
                n.map(|n| answer(200, "text/plain", &[], n.to_string().as_bytes()))
            }
            ("GET", "/json") => Some(json_answer(&req, f)),
            ("GET", p) if p.starts_with("/static/") => Some(static_answer(&req, p, st)),
            _ => Some(answer(404, "text/plain", &[], b"Not Found")),
        };
        let Some(out) = out else { break };
        if io.s.write_all(&out).is_err() {
            break;
        }
        io.reads = 0;
    }
    st.held.fetch_sub(held_here, Ordering::SeqCst);
}

fn baseline_answer(
    io: &mut Io,
    req: &Req,
    f: Flaws,
    cached: &mut Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    let q = req.target.split_once('?').map_or("", |(_, q)| q);
    let mut sum: i64 = q
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| *k == "a" || *k == "b")
        .filter_map(|(_, v)| v.parse::<i64>().ok())
        .sum();
    if req.method == "POST" {
        let mut body = Vec::new();
        if f.no_chunked && req.header("transfer-encoding").is_some() {
            io.chunked(&mut |_| {})?;
        } else {
            io.body(req, &mut |b| body.extend_from_slice(b))?;
        }
        if f.caches_body {
            body = cached.get_or_insert(body).clone();
        }
        if !f.ignores_body {
            sum += String::from_utf8_lossy(&body)
                .trim()
                .parse::<i64>()
                .unwrap_or(0);
        }
    }
    Some(answer(200, "text/plain", &[], sum.to_string().as_bytes()))
}

/// The first coding of `accept` the fixture makes, among `offer`.
fn pick(accept: Option<&str>, offer: &[Coding]) -> Option<Coding> {
    accept?
        .split(',')
        .filter_map(|t| Coding::parse(t.split(';').next().unwrap_or("")))
        .find(|c| offer.contains(c))
}

fn json_answer(req: &Req, f: Flaws) -> Vec<u8> {
    let body = br#"{"message":"Hello, World!"}"#;
    let mut coding = pick(req.header("accept-encoding"), &Coding::ALL);
    if f.encodes_unasked && coding.is_none() {
        coding = Some(Coding::Gzip);
    }
    if f.always_br && req.header("accept-encoding").is_some() {
        coding = Some(Coding::Br);
    }
    match coding {
        None => answer(200, "application/json", &[], body),
        Some(c) => {
            let mut extra = vec![format!("Content-Encoding: {}", c.as_str())];
            if !f.no_vary {
                extra.push("Vary: Accept-Encoding".into());
            }
            answer(200, "application/json", &extra, &encode(c, body))
        }
    }
}

fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn static_answer(req: &Req, path: &str, st: &State) -> Vec<u8> {
    let f = st.flaws;
    let rel = percent_decoded(&path["/static/".len()..]);
    if !f.traversal && rel.split('/').any(|seg| seg == ".." || seg.is_empty()) {
        return answer(404, "text/plain", &[], b"Not Found");
    }
    let Ok(bytes) = std::fs::read(st.dir.join(&rel)) else {
        let status = if f.missing_is_500 { 500 } else { 404 };
        return answer(status, "text/plain", &[], b"no such file");
    };
    let kind = Kind::of(&rel);
    let ctype = match kind {
        Some(k) if !f.untyped => k.media_types()[0],
        _ => "application/octet-stream",
    };
    let etag = format!("\"{}\"", bytes.len());
    let mut extra = Vec::new();
    if !f.no_validator {
        if req.header("if-none-match") == Some(etag.as_str()) {
            return b"HTTP/1.1 304 Not Modified\r\nContent-Length: 0\r\n\r\n".to_vec();
        }
        extra.push(format!("ETag: {etag}"));
    }
    let text = kind.is_some_and(Kind::is_text) && !f.no_static_compression;
    match pick(req.header("accept-encoding"), &[Coding::Br, Coding::Gzip]).filter(|_| text) {
        Some(c) => {
            extra.push(format!("Content-Encoding: {}", c.as_str()));
            extra.push("Vary: Accept-Encoding".into());
            answer(200, ctype, &extra, &encode(c, &bytes))
        }
        None => answer(200, ctype, &extra, &bytes),
    }
}

/// The names of the failed checks.
fn failed(checks: &[Check]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| !c.passed())
        .map(|c| c.name.clone())
        .collect()
}

fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let www = static_tree::ensure(&static_tree::root_under(dir.path())).unwrap();
    (dir, www)
}

fn run(flaws: Flaws) -> Vec<Check> {
    let (_keep, www) = tree();
    let (addr, st) = serve(flaws, www);
    let to = Dial::tcp(addr);
    let held = || st.held.load(Ordering::SeqCst);
    let mut out = baseline::check_all(to);
    out.extend(upload::check_all(to, Some(&held)));
    out.extend(compression::check_all(to));
    out.extend(static_files::check_all(to));
    out
}

/// The one check a flaw fails, whose name contains `rule`.
fn fails_only(flaws: Flaws, rule: &str) {
    let checks = run(flaws);
    let names = failed(&checks);
    assert_eq!(names.len(), 1, "{rule}: {names:?}");
    assert!(names[0].contains(rule), "{rule}: {names:?}");
}

#[test]
fn a_correct_server_passes_every_check_of_the_four_features() {
    let checks = run(Flaws::default());
    let bad: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
    assert!(bad.is_empty(), "{bad:#?}");
    assert_eq!(checks.len(), 5 + 4 + 6 + 7);
}

#[test]
fn a_baseline_post_that_ignores_its_body_fails_every_post_check() {
    let names = failed(&run(Flaws {
        ignores_body: true,
        ..Flaws::default()
    }));
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names.iter().all(|n| n.contains("POST")), "{names:?}");
}

#[test]
fn a_baseline_without_chunked_bodies_fails_the_chunked_check() {
    fails_only(
        Flaws {
            no_chunked: true,
            ..Flaws::default()
        },
        "(chunked) -> 75",
    );
}

#[test]
fn a_server_that_needs_the_whole_request_in_one_read_fails_the_split_check() {
    fails_only(
        Flaws {
            needs_whole_request: true,
            ..Flaws::default()
        },
        "3 bytes at a time",
    );
}

#[test]
fn a_body_cached_per_connection_fails_the_two_posts_check() {
    fails_only(
        Flaws {
            caches_body: true,
            ..Flaws::default()
        },
        "two POSTs",
    );
}

#[test]
fn an_upload_held_in_memory_fails_the_memory_bound() {
    let checks = run(Flaws {
        holds_body: true,
        ..Flaws::default()
    });
    let bad: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
    assert_eq!(bad.len(), 1, "{bad:#?}");
    assert!(bad[0].name.contains("128 MiB"), "{bad:#?}");
    assert!(bad[0].diffs[0].what.contains("memory growth"), "{bad:#?}");
}

#[test]
fn an_upload_that_ignores_expect_continue_fails_that_check() {
    fails_only(
        Flaws {
            no_continue: true,
            ..Flaws::default()
        },
        "100-continue",
    );
}

#[test]
fn json_encoded_unasked_fails_the_check_without_accept_encoding() {
    fails_only(
        Flaws {
            encodes_unasked: true,
            ..Flaws::default()
        },
        "without Accept-Encoding",
    );
}

#[test]
fn an_encoding_the_client_did_not_list_fails_every_check_that_did_not_list_it() {
    let names = failed(&run(Flaws {
        always_br: true,
        ..Flaws::default()
    }));
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names.iter().all(|n| n.contains("GET /json with")),
        "{names:?}"
    );
}

#[test]
fn an_encoded_answer_without_vary_fails() {
    let names = failed(&run(Flaws {
        no_vary: true,
        ..Flaws::default()
    }));
    assert_eq!(names.len(), 5, "{names:?}");
}

#[test]
fn static_files_without_their_content_type_fail_the_files_check() {
    fails_only(
        Flaws {
            untyped: true,
            ..Flaws::default()
        },
        "the 20 files",
    );
}

#[test]
fn static_files_without_a_validator_fail_the_revalidation_check() {
    fails_only(
        Flaws {
            no_validator: true,
            ..Flaws::default()
        },
        "revalidated",
    );
}

#[test]
fn static_files_never_compressed_fail_the_compression_check() {
    fails_only(
        Flaws {
            no_static_compression: true,
            ..Flaws::default()
        },
        "compressed",
    );
}

#[test]
fn a_traversal_out_of_the_folder_fails_the_dot_dot_checks() {
    let names = failed(&run(Flaws {
        traversal: true,
        ..Flaws::default()
    }));
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names.iter().all(|n| n.contains("outside STATIC_DIR")),
        "{names:?}"
    );
}

#[test]
fn a_missing_static_file_answered_500_fails_the_404_check() {
    fails_only(
        Flaws {
            missing_is_500: true,
            ..Flaws::default()
        },
        "missing.css -> 404",
    );
}
