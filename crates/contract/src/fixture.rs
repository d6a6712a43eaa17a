//! Tests of the real-world checks against a tiny in-process HTTP server: correct by default,
//! with each flaw a catalog server has had switchable on, so every check is shown to fail on
//! the flaw it is there for (and to pass on a correct server). [`serve_wrapped`] puts a
//! transport (TLS, in `tls_fixture`) between the socket and the same HTTP code.

use super::checks::{check_pipelining, declared, Endpoint, ENDPOINTS};
use super::http::Dial;
use super::pipeline::{check_deep, small, Shape};
use super::shapes::*;
use super::Check;
use serverbench_model::Feature;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the fixture gets wrong (nothing by default).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Flaws {
    /// Closes the connection when a read ends without a complete head.
    pub(crate) needs_whole_head: bool,
    /// Looks for the end of the head only in the bytes of the latest read.
    pub(crate) scans_only_new_bytes: bool,
    /// Drops a partial request that follows complete ones in the same read.
    pub(crate) drops_partial_tail: bool,
    /// Answers the requests of one read in reverse order.
    pub(crate) reverses_batches: bool,
    /// Closes after every HTTP/1.0 response, keep-alive asked or not.
    pub(crate) http10_always_closes: bool,
    /// Keeps every HTTP/1.0 connection open, keep-alive asked or not.
    pub(crate) http10_keeps_open: bool,
    /// Keeps HTTP/1.0 keep-alive connections open without saying `Connection: keep-alive`.
    pub(crate) http10_no_keep_alive_header: bool,
    /// Closes without answering when the head exceeds this many bytes.
    pub(crate) max_head: Option<usize>,
    /// Stops serving after a request line it cannot parse.
    pub(crate) dies_on_garbage: bool,
    /// Closes new connections beyond this many open ones.
    pub(crate) max_open: Option<usize>,
    /// Closes each connection after this many responses (puma does after 10 when busy)...
    pub(crate) closes_after: Option<usize>,
    /// ...saying `Connection: close` in the last one, as HTTP/1.1 asks.
    pub(crate) announces_close: bool,
}

struct State {
    flaws: Flaws,
    open: AtomicUsize,
    dead: AtomicBool,
}

/// A connection the fixture reads requests from and writes answers to.
pub(crate) trait Io: Read + Write + Send {}
impl<T: Read + Write + Send> Io for T {}

/// Turns an accepted socket into the connection served (`None`: drop it).
pub(crate) type Wrap = Arc<dyn Fn(TcpStream) -> Option<Box<dyn Io>> + Send + Sync>;

/// Starts the fixture on a free local port.
fn serve(flaws: Flaws) -> SocketAddr {
    serve_wrapped(flaws, Arc::new(|s| Some(Box::new(s) as Box<dyn Io>)))
}

/// Starts the fixture on a free local port, each accepted socket passed through `wrap` (in the
/// connection's own thread, so a slow handshake holds up no other connection).
pub(crate) fn serve_wrapped(flaws: Flaws, wrap: Wrap) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let state = Arc::new(State {
        flaws,
        open: AtomicUsize::new(0),
        dead: AtomicBool::new(false),
    });
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            if state.dead.load(Ordering::SeqCst) {
                return;
            }
            let open = state.open.fetch_add(1, Ordering::SeqCst) + 1;
            if flaws.max_open.is_some_and(|m| open > m) {
                state.open.fetch_sub(1, Ordering::SeqCst);
                continue;
            }
            let (state, wrap) = (Arc::clone(&state), Arc::clone(&wrap));
            std::thread::spawn(move || {
                if let Some(io) = wrap(stream) {
                    connection(io, &state);
                }
                state.open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    addr
}

fn connection(mut s: Box<dyn Io>, state: &State) {
    let f = state.flaws;
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let mut served = 0;
    loop {
        let n = match s.read(&mut tmp) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut from = if f.scans_only_new_bytes { buf.len() } else { 0 };
        buf.extend_from_slice(&tmp[..n]);
        let (mut out, mut close, mut answered) = (Vec::new(), false, 0);
        while let Some(end) = find(&buf[from..]).map(|i| from + i) {
            from = 0;
            if f.max_head.is_some_and(|m| end + 4 > m) {
                return;
            }
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end + 4);
            answered += 1;
            served += 1;
            let last = f.closes_after == Some(served);
            let (response, keep) = answer(&head, f, last);
            if response.is_empty() {
                state.dead.store(f.dies_on_garbage, Ordering::SeqCst);
            }
            out.push(response);
            if !keep {
                close = true;
                break;
            }
        }
        let partial_only = answered == 0 && !buf.is_empty();
        if (f.needs_whole_head && partial_only) || f.max_head.is_some_and(|m| buf.len() > m) {
            return;
        }
        if f.drops_partial_tail && answered > 0 {
            buf.clear();
        }
        if f.reverses_batches {
            out.reverse();
        }
        if s.write_all(&out.concat()).is_err() || close {
            return;
        }
    }
}

fn find(hay: &[u8]) -> Option<usize> {
    hay.windows(4).position(|w| w == b"\r\n\r\n")
}

/// The response to one head and whether the connection stays open (empty: garbage); `last`
/// closes the connection after it.
fn answer(head: &str, f: Flaws, last: bool) -> (Vec<u8>, bool) {
    let mut lines = head.split("\r\n");
    let parts: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
    let valid = parts.len() == 3
        && parts[0].bytes().all(|b| b.is_ascii_uppercase())
        && parts[2].starts_with("HTTP/1.");
    if !valid {
        return (Vec::new(), false);
    }
    let connection = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.eq_ignore_ascii_case("connection"))
        .map(|(_, v)| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let http10 = parts[2] == "HTTP/1.0";
    let keep = !last
        && if http10 {
            (connection == "keep-alive" || f.http10_keeps_open) && !f.http10_always_closes
        } else {
            connection != "close"
        };
    let (status, ctype, body): (&str, &str, &[u8]) = match parts[1] {
        "/hello" => ("200 OK", "text/plain", b"Hello World!"),
        "/hey" => ("200 OK", "text/plain", b"Hey!"),
        "/hell" => ("200 OK", "text/plain", b"Hell!"),
        "/about" => (
            "200 OK",
            "text/html",
            b"<html><body>About page</body></html>",
        ),
        "/json" => (
            "200 OK",
            "application/json",
            br#"{"message":"Hello, World!"}"#,
        ),
        _ => ("404 Not Found", "text/plain", b"Not Found"),
    };
    let connection = match (last && f.announces_close, http10 && keep) {
        (true, _) => "Connection: close\r\n",
        (false, true) if !f.http10_no_keep_alive_header => "Connection: keep-alive\r\n",
        _ => "",
    };
    let mut r = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{connection}\r\n",
        body.len(),
    )
    .into_bytes();
    r.extend_from_slice(body);
    (r, keep)
}

const HELLO: Endpoint = ENDPOINTS[0];
const QUICK: Shape = Shape {
    connections: 8,
    depth: 16,
    duration: Duration::from_millis(300),
};

fn mix() -> Vec<Endpoint> {
    small(&declared(&[Feature::Hello, Feature::Routes, Feature::Json]))
}

fn failed_whats(c: &Check) -> Vec<String> {
    assert!(!c.passed(), "{} passed", c.name);
    c.diffs.iter().map(|d| d.what.clone()).collect()
}

#[test]
fn a_correct_server_passes_every_real_world_check() {
    let addr = serve(Flaws::default());
    let checks = [
        check_trickle(addr, &HELLO),
        check_split_crlf(addr, &HELLO),
        check_http10_keep_alive(Dial::tcp(addr), &HELLO),
        check_deep(addr, &mix(), QUICK),
        check_big_head(addr, &HELLO),
        check_garbage(addr, &HELLO),
        check_connections(addr, &HELLO, 200),
    ];
    for c in checks {
        assert!(c.passed(), "{}: {:?}", c.name, c.diffs);
    }
}

#[test]
fn a_server_that_needs_the_whole_head_in_one_read_fails_the_trickle_check() {
    let addr = serve(Flaws {
        needs_whole_head: true,
        ..Flaws::default()
    });
    let whats = failed_whats(&check_trickle(addr, &HELLO));
    assert!(whats[0].starts_with("request 1 of 2"), "{whats:?}");
}

#[test]
fn a_server_that_scans_only_the_latest_read_fails_the_split_crlf_check() {
    let addr = serve(Flaws {
        scans_only_new_bytes: true,
        ..Flaws::default()
    });
    assert!(check_pipelining(Dial::tcp(addr), &mix(), 16).passed());
    let whats = failed_whats(&check_split_crlf(addr, &HELLO));
    assert_eq!(whats, vec!["response: response"]);
}

#[test]
fn a_server_that_drops_a_partial_tail_passes_one_batch_but_fails_deep_pipelining() {
    let addr = serve(Flaws {
        drops_partial_tail: true,
        ..Flaws::default()
    });
    assert!(check_pipelining(Dial::tcp(addr), &mix(), 16).passed());
    assert!(check_trickle(addr, &HELLO).passed());
    let whats = failed_whats(&check_deep(addr, &mix(), QUICK));
    assert!(whats[0].starts_with("connection "), "{whats:?}");
    assert_eq!(whats.last().unwrap(), "connections that failed");
}

#[test]
fn a_server_that_reorders_pipelined_responses_fails_deep_pipelining_with_a_body_diff() {
    let addr = serve(Flaws {
        reverses_batches: true,
        ..Flaws::default()
    });
    let c = check_deep(addr, &mix(), QUICK);
    let whats = failed_whats(&c);
    assert!(whats[0].contains(" (GET /"), "{whats:?}");
}

#[test]
fn an_http10_server_that_closes_despite_keep_alive_fails_on_the_second_request() {
    let addr = serve(Flaws {
        http10_always_closes: true,
        ..Flaws::default()
    });
    let whats = failed_whats(&check_http10_keep_alive(Dial::tcp(addr), &HELLO));
    assert!(
        whats[0].starts_with("request 1 of 2: Connection header"),
        "{whats:?}"
    );
}

#[test]
fn an_http10_keep_alive_answer_without_the_header_fails() {
    let addr = serve(Flaws {
        http10_no_keep_alive_header: true,
        ..Flaws::default()
    });
    let whats = failed_whats(&check_http10_keep_alive(Dial::tcp(addr), &HELLO));
    assert_eq!(whats, vec!["request 1 of 2: Connection header"]);
}

#[test]
fn a_server_with_a_4_kib_head_limit_fails_the_large_head_check() {
    let addr = serve(Flaws {
        max_head: Some(4096),
        ..Flaws::default()
    });
    assert!(check_trickle(addr, &HELLO).passed());
    let whats = failed_whats(&check_big_head(addr, &HELLO));
    assert!(whats[0].starts_with("large request"), "{whats:?}");
}

#[test]
fn a_server_that_stops_serving_after_garbage_fails_the_garbage_check() {
    let addr = serve(Flaws {
        dies_on_garbage: true,
        ..Flaws::default()
    });
    let whats = failed_whats(&check_garbage(addr, &HELLO));
    assert!(whats[0].starts_with("next connection"), "{whats:?}");
}

#[test]
fn a_server_capped_at_100_connections_fails_the_200_connections_check() {
    let addr = serve(Flaws {
        max_open: Some(100),
        ..Flaws::default()
    });
    let whats = failed_whats(&check_connections(addr, &HELLO, 200));
    assert!(whats[0].starts_with("connection 101 of 200"), "{whats:?}");
}

#[test]
fn a_server_that_closes_after_10_answers_saying_so_passes_deep_pipelining() {
    let addr = serve(Flaws {
        closes_after: Some(10),
        announces_close: true,
        ..Flaws::default()
    });
    let c = check_deep(addr, &mix(), QUICK);
    assert!(c.passed(), "{:?}", c.diffs);
}

#[test]
fn a_server_that_closes_after_10_answers_without_saying_so_fails_deep_pipelining() {
    let addr = serve(Flaws {
        closes_after: Some(10),
        ..Flaws::default()
    });
    let whats = failed_whats(&check_deep(addr, &mix(), QUICK));
    assert!(whats[0].contains("response 11 (GET /"), "{whats:?}");
}
