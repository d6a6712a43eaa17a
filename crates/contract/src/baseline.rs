//! The `baseline` feature (issue 32, HttpArena's baseline profile): `GET /baseline?a=&b=`
//! answers the sum, `POST` adds the integer body, sent with `Content-Length` or chunked, split
//! across many segments, and two POSTs with different bodies on one connection (a server that
//! caches the body of the first answers the second wrongly).

use super::diff::Diff;
use super::http::{Conn, Dial, Response};
use super::shapes::prefixed;
use super::Check;
use std::time::Duration;

/// The query of the checks and its sum.
const QUERY: &str = "a=13&b=42";
const SUM: i64 = 55;

/// How a request body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length`.
    Length,
    /// `Transfer-Encoding: chunked`, in chunks of this many bytes.
    Chunked(usize),
}

/// A POST of `body` to `path`, framed as asked, with extra header lines.
pub fn post_request(
    path: &str,
    host: &str,
    extra: &[&str],
    body: &[u8],
    framing: Framing,
) -> Vec<u8> {
    let mut r =
        format!("POST {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: serverbench-verify\r\n");
    r.push_str("Content-Type: application/octet-stream\r\n");
    for h in extra {
        r.push_str(h);
        r.push_str("\r\n");
    }
    let mut out = match framing {
        Framing::Length => format!("{r}Content-Length: {}\r\n\r\n", body.len()).into_bytes(),
        Framing::Chunked(_) => format!("{r}Transfer-Encoding: chunked\r\n\r\n").into_bytes(),
    };
    match framing {
        Framing::Length => out.extend_from_slice(body),
        Framing::Chunked(size) => {
            for chunk in body.chunks(size.max(1)) {
                out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                out.extend_from_slice(chunk);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
        }
    }
    out
}

/// The diffs of a `200 text/plain` answer whose body, without surrounding whitespace, should be
/// `expected`.
pub fn text_answer(r: &Response, expected: &str) -> Vec<Diff> {
    let mut d = Vec::new();
    if r.status != 200 {
        d.push(Diff::new("status", "200", r.status.to_string()));
    }
    if r.media_type().as_deref() != Some("text/plain") {
        let got = r.header("content-type").unwrap_or("none");
        d.push(Diff::new("content-type", "text/plain", got));
    }
    let body = String::from_utf8_lossy(&r.body);
    if body.trim() != expected {
        d.extend(Diff::bytes(
            "body",
            expected.as_bytes(),
            r.body.trim_ascii(),
        ));
    }
    d
}

/// Sends `req` on `conn` (whole, or `piece` bytes at a time) and reads one response; a failure
/// is a diff named by `at`.
fn ask(conn: &mut Conn, req: &[u8], piece: Option<usize>, at: &str) -> Result<Response, Vec<Diff>> {
    let sent = match piece {
        None => conn.send(req),
        Some(p) => conn.send_pieces(req, p, Duration::from_millis(2)),
    };
    sent.and_then(|()| conn.read_response())
        .map_err(|e| vec![Diff::error(format!("{at}: response"), "an answer", &e)])
}

fn open(to: Dial<'_>) -> Result<Conn, Vec<Diff>> {
    Conn::open(to).map_err(|e| vec![Diff::error("connect", "a connection", &e)])
}

fn check(name: String, steps: impl FnOnce() -> Result<(), Vec<Diff>>) -> Check {
    Check::new(name, steps().err().unwrap_or_default())
}

fn sum_matches(r: &Response, expected: i64, at: &str) -> Result<(), Vec<Diff>> {
    let d = text_answer(r, &expected.to_string());
    if d.is_empty() {
        Ok(())
    } else {
        Err(prefixed(d, at))
    }
}

/// Every check of `baseline`.
pub fn check_all(to: Dial<'_>) -> Vec<Check> {
    let host = to.host();
    let post = |body: &[u8], framing| {
        post_request(&format!("/baseline?{QUERY}"), &host, &[], body, framing)
    };
    let get = |q: &str| {
        format!(
            "GET /baseline?{q} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: serverbench-verify\r\n\r\n"
        )
        .into_bytes()
    };
    vec![
        check(
            format!("GET /baseline?{QUERY} -> {SUM}, then ?a=7&b=1000 -> 1007"),
            || {
                let mut c = open(to)?;
                sum_matches(&ask(&mut c, &get(QUERY), None, "first")?, SUM, "first")?;
                sum_matches(
                    &ask(&mut c, &get("a=7&b=1000"), None, "second")?,
                    1007,
                    "second",
                )
            },
        ),
        check(
            format!("POST /baseline?{QUERY} with body 20 (Content-Length) -> 75"),
            || {
                let mut c = open(to)?;
                sum_matches(
                    &ask(&mut c, &post(b"20", Framing::Length), None, "POST")?,
                    75,
                    "POST",
                )
            },
        ),
        check(
            format!("POST /baseline?{QUERY} with body 20 (chunked) -> 75"),
            || {
                let mut c = open(to)?;
                let req = post(b"20", Framing::Chunked(1));
                sum_matches(&ask(&mut c, &req, None, "POST")?, 75, "POST")
            },
        ),
        check(
            format!("POST /baseline?{QUERY} sent 3 bytes at a time -> 75"),
            || {
                let mut c = open(to)?;
                let req = post(b"20", Framing::Length);
                sum_matches(&ask(&mut c, &req, Some(3), "POST")?, 75, "POST")
            },
        ),
        check(
            format!("two POSTs /baseline?{QUERY} on one connection, bodies 1 and 2 -> 56, 57"),
            || {
                let mut c = open(to)?;
                sum_matches(
                    &ask(&mut c, &post(b"1", Framing::Length), None, "first")?,
                    56,
                    "first",
                )?;
                sum_matches(
                    &ask(&mut c, &post(b"2", Framing::Length), None, "second")?,
                    57,
                    "second",
                )
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunked_post_frames_each_chunk_and_ends_with_the_last() {
        let r = post_request("/p", "h", &[], b"abc", Framing::Chunked(2));
        let s = String::from_utf8(r).unwrap();
        assert!(
            s.contains("Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n"),
            "{s}"
        );
        assert!(!s.contains("Content-Length"));
    }

    #[test]
    fn a_length_post_says_its_length() {
        let s =
            String::from_utf8(post_request("/p", "h", &["X: y"], b"20", Framing::Length)).unwrap();
        assert!(s.ends_with("X: y\r\nContent-Length: 2\r\n\r\n20"), "{s}");
    }
}
