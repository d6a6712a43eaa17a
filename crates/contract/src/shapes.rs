//! The request shapes real clients send, beyond one tidy request per write: a request trickling
//! in a few bytes at a time (a slow client, a proxy, a mobile network), a head split inside a
//! CRLF, HTTP/1.0 with and without `Connection: keep-alive` (ab -k), an 8 KiB head (cookies),
//! a garbage request line (a TLS client on the plain port), and 200 connections at once.
//!
//! Each is a named [`Check`] whose diffs say which request of which connection differed.

use super::checks::{compare, Endpoint};
use super::diff::Diff;
use super::http::{get_request, Conn, Dial, Response};
use super::Check;
use std::net::SocketAddr;
use std::time::Duration;

/// Bytes per write when a request trickles in.
pub const TRICKLE_PIECE: usize = 3;
/// Pause between those writes.
const TRICKLE_PAUSE: Duration = Duration::from_millis(4);
/// Pause between the writes of a request split inside a CRLF.
const SPLIT_PAUSE: Duration = Duration::from_millis(40);
/// Size of the whole request head of the large-head check.
pub const BIG_HEAD: usize = 8 * 1024;
/// How long the garbage connection is given to answer or close before the next connection.
const GARBAGE_WAIT: Duration = Duration::from_millis(500);
/// The start of a TLS ClientHello and some junk: what a client speaking the wrong protocol sends.
const GARBAGE: &[u8] =
    b"\x16\x03\x01\x00\xc8\x01\x00\x00\xc4\x03\x03\xfe\x00 NOT HTTP AT ALL\r\n\r\n";

/// What failed: the diffs of a check, from any step.
type Steps = Result<(), Vec<Diff>>;

fn connect(addr: SocketAddr) -> Result<Conn, Vec<Diff>> {
    Conn::connect(addr).map_err(|err| vec![Diff::error("connect", "a connection", &err)])
}

/// A GET for `path` in `version` with extra header lines (no keep-alive header by default).
pub fn request(path: &str, host: &str, version: &str, extra: &[&str]) -> Vec<u8> {
    let mut r =
        format!("GET {path} {version}\r\nHost: {host}\r\nUser-Agent: serverbench-verify\r\n");
    for h in extra {
        r.push_str(h);
        r.push_str("\r\n");
    }
    r.push_str("\r\n");
    r.into_bytes()
}

/// Reads one response and compares it with `e`; diffs are prefixed with `at`.
fn expect(conn: &mut Conn, e: &Endpoint, at: &str) -> Result<Response, Vec<Diff>> {
    let r = conn.read_response().map_err(|err| {
        vec![Diff::error(
            format!("{at}: response"),
            format!("{} {}", e.status, e.path),
            &err,
        )]
    })?;
    let diffs = compare(e, &r, true);
    if diffs.is_empty() {
        Ok(r)
    } else {
        Err(prefixed(diffs, at))
    }
}

/// A failed write, with what the server answered before it cut the connection, if anything.
fn write_failed(conn: &mut Conn, at: &str, err: &std::io::Error) -> Vec<Diff> {
    let got = match conn.read_response() {
        Ok(r) => format!("error: {err}, after the server answered {} early", r.status),
        Err(_) => format!("error: {err}"),
    };
    vec![Diff::new(
        format!("{at}: write"),
        "the whole request accepted",
        got,
    )]
}

pub(crate) fn prefixed(diffs: Vec<Diff>, at: &str) -> Vec<Diff> {
    diffs
        .into_iter()
        .map(|mut d| {
            d.what = format!("{at}: {}", d.what);
            d
        })
        .collect()
}

fn check(name: String, steps: Steps) -> Check {
    Check::new(name, steps.err().unwrap_or_default())
}

/// Two requests on one connection, each written [`TRICKLE_PIECE`] bytes at a time.
pub fn check_trickle(addr: SocketAddr, e: &Endpoint) -> Check {
    let name = format!(
        "GET {} sent {TRICKLE_PIECE} bytes at a time, twice on one connection",
        e.path
    );
    let req = get_request(e.path, &addr.to_string(), false);
    let steps = || -> Steps {
        let mut conn = connect(addr)?;
        for i in 1..=2 {
            let at = format!("request {i} of 2");
            if let Err(err) = conn.send_pieces(&req, TRICKLE_PIECE, TRICKLE_PAUSE) {
                return Err(write_failed(&mut conn, &at, &err));
            }
            expect(&mut conn, e, &at)?;
        }
        Ok(())
    };
    check(name, steps())
}

/// One request in three writes: cut between the `\r` and `\n` ending the Host line and
/// between the `\r\n\r` and the `\n` ending the head.
pub fn check_split_crlf(addr: SocketAddr, e: &Endpoint) -> Check {
    let name = format!("GET {} split inside a CRLF (3 writes)", e.path);
    let req = get_request(e.path, &addr.to_string(), false);
    let host_end =
        find_from(&req, b"Host:").and_then(|h| find_from(&req[h..], b"\r\n").map(|i| h + i));
    let cuts = [host_end.map_or(req.len() / 2, |i| i + 1), req.len() - 1];
    let steps = || -> Steps {
        let mut conn = connect(addr)?;
        let pieces = [&req[..cuts[0]], &req[cuts[0]..cuts[1]], &req[cuts[1]..]];
        for (i, piece) in pieces.into_iter().enumerate() {
            if i > 0 {
                std::thread::sleep(SPLIT_PAUSE);
            }
            if let Err(err) = conn.send(piece) {
                return Err(write_failed(
                    &mut conn,
                    &format!("write {} of 3", i + 1),
                    &err,
                ));
            }
        }
        expect(&mut conn, e, "response").map(drop)
    };
    check(name, steps())
}

fn find_from(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// HTTP/1.0 with `Connection: keep-alive` (as ab -k sends): each response is
/// length-delimited and says `Connection: keep-alive`, and the connection answers again.
pub fn check_http10_keep_alive(to: Dial<'_>, e: &Endpoint) -> Check {
    let name = format!("HTTP/1.0 GET {} with Connection: keep-alive, twice", e.path);
    let req = request(e.path, &to.host(), "HTTP/1.0", &["Connection: keep-alive"]);
    let steps = || -> Steps {
        let mut conn =
            Conn::open(to).map_err(|err| vec![Diff::error("connect", "a connection", &err)])?;
        for i in 1..=2 {
            let at = format!("request {i} of 2");
            if let Err(err) = conn.send(&req) {
                return Err(write_failed(&mut conn, &at, &err));
            }
            let r = expect(&mut conn, e, &at)?;
            let diffs = keep_alive_diffs(&r);
            if !diffs.is_empty() {
                return Err(prefixed(diffs, &at));
            }
        }
        Ok(())
    };
    check(name, steps())
}

/// What an HTTP/1.0 keep-alive response needs for the client to reuse the connection.
fn keep_alive_diffs(r: &Response) -> Vec<Diff> {
    let mut diffs = Vec::new();
    if r.close_delimited {
        diffs.push(Diff::new(
            "framing",
            "Content-Length or chunked (the connection stays open)",
            "body delimited by closing the connection",
        ));
    }
    let connection = r.header("connection").unwrap_or("");
    if !connection.to_ascii_lowercase().contains("keep-alive") {
        let got = if connection.is_empty() {
            "no Connection header".to_string()
        } else {
            format!("Connection: {connection}")
        };
        diffs.push(Diff::new(
            "Connection header",
            "Connection: keep-alive (an HTTP/1.0 client closes otherwise)",
            got,
        ));
    }
    diffs
}

/// A request whose head is [`BIG_HEAD`] bytes (a large Cookie), answered; then a new connection.
pub fn check_big_head(addr: SocketAddr, e: &Endpoint) -> Check {
    let name = format!(
        "GET {} with an {} KiB request head, then still serving",
        e.path,
        BIG_HEAD / 1024
    );
    let host = addr.to_string();
    let bare = request(e.path, &host, "HTTP/1.1", &["Cookie: k="]).len();
    let cookie = format!("Cookie: k={}", "v".repeat(BIG_HEAD.saturating_sub(bare)));
    let req = request(e.path, &host, "HTTP/1.1", &[&cookie]);
    let steps = || -> Steps {
        let mut conn = connect(addr)?;
        if let Err(err) = conn.send(&req) {
            return Err(write_failed(&mut conn, "large request", &err));
        }
        expect(&mut conn, e, "large request")?;
        serve_fresh(addr, e)
    };
    check(name, steps())
}

/// One GET on a new connection, compared with `e`.
fn serve_fresh(addr: SocketAddr, e: &Endpoint) -> Steps {
    let mut conn = connect(addr).map_err(|d| prefixed(d, "next connection"))?;
    if let Err(err) = conn.send(&get_request(e.path, &addr.to_string(), false)) {
        return Err(write_failed(&mut conn, "next connection", &err));
    }
    expect(&mut conn, e, "next connection").map(drop)
}

/// A garbage request line (any answer or a close is fine), then, with that connection still
/// open, a normal request on a new connection.
pub fn check_garbage(addr: SocketAddr, e: &Endpoint) -> Check {
    let name = "a garbage request line, then a new connection served".to_string();
    let steps = || -> Steps {
        let mut bad = connect(addr)?;
        let _ = bad.send(GARBAGE);
        let _ = bad.closed_by_peer(GARBAGE_WAIT);
        serve_fresh(addr, e)
    };
    check(name, steps())
}

/// `n` connections opened at once, a request written on each, then every response read.
pub fn check_connections(addr: SocketAddr, e: &Endpoint, n: usize) -> Check {
    let name = format!("{n} connections at once, GET {} on each", e.path);
    let req = get_request(e.path, &addr.to_string(), false);
    let steps = || -> Steps {
        let mut conns = Vec::with_capacity(n);
        for i in 1..=n {
            let at = format!("connection {i} of {n}");
            conns.push(connect(addr).map_err(|d| prefixed(d, &at))?);
        }
        for (i, c) in conns.iter_mut().enumerate() {
            if let Err(err) = c.send(&req) {
                return Err(write_failed(
                    c,
                    &format!("connection {} of {n}", i + 1),
                    &err,
                ));
            }
        }
        for (i, c) in conns.iter_mut().enumerate() {
            expect(c, e, &format!("connection {} of {n}", i + 1))?;
        }
        Ok(())
    };
    check(name, steps())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_large_request_head_is_exactly_8_kib() {
        let host = "127.0.0.1:8080";
        let bare = request("/hello", host, "HTTP/1.1", &["Cookie: k="]).len();
        let cookie = format!("Cookie: k={}", "v".repeat(BIG_HEAD - bare));
        assert_eq!(
            request("/hello", host, "HTTP/1.1", &[&cookie]).len(),
            BIG_HEAD
        );
    }

    #[test]
    fn an_http10_keep_alive_response_needs_length_and_the_header() {
        let r = Response {
            version: "HTTP/1.0".into(),
            status: 200,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: b"Hello World!".to_vec(),
            close_delimited: true,
        };
        let whats: Vec<String> = keep_alive_diffs(&r).into_iter().map(|d| d.what).collect();
        assert_eq!(whats, vec!["framing", "Connection header"]);
    }
}
