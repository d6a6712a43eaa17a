//! HTTP/1.1: requests serialized once, and the smallest streaming response parser that is still
//! correct (status line, Content-Length, chunked, close-delimited, Connection: close).
//!
//! Hand-written on purpose: this is the hot path, run on every response of every connection, and
//! a general parser (httparse, hyper's h1) would allocate or decode headers the engine never
//! reads. It finds and parses a head in one pass (about 100 ns per nginx response, see
//! CHANGELOG), copies bytes only when a head is split across reads, and hashes bodies (FNV-1a,
//! the same function as the `fnv` crate) inline in the same byte loop only when `--verify` asks.

use memchr::memmem;
use std::sync::LazyLock;

/// The end of a response head, searched with a prebuilt finder.
static HEAD_END: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"\r\n\r\n"));

/// Serializes one request; done once per URL before the run. `host` is the `Host` header's
/// value (`host:port`), sent unless `headers` has one.
pub fn serialize_request(
    method: &str,
    path: &str,
    host: &str,
    headers: &[String],
    body: Option<&[u8]>,
) -> Vec<u8> {
    let mut out = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
    let has = |name: &str| {
        headers.iter().any(|h| {
            h.split(':')
                .next()
                .is_some_and(|n| n.trim().eq_ignore_ascii_case(name))
        })
    };
    if !has("host") {
        out.extend_from_slice(format!("Host: {host}\r\n").as_bytes());
    }
    for h in headers {
        out.extend_from_slice(h.trim().as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if let Some(body) = body {
        if !has("content-length") {
            out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body);
    } else {
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// A malformed response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseError;

/// One complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// The server will close the connection after this response.
    pub close: bool,
    pub body_len: u64,
    /// FNV-1a of the body (only when checksums are on; 0 otherwise).
    pub body_hash: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Fixed(u64),
    ChunkSize { size: u64, digits: bool, ext: bool },
    ChunkData(u64),
    ChunkEnd,
    Trailer { empty: bool },
    UntilClose,
}

const MAX_HEAD: usize = 64 * 1024;
pub(crate) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Folds `bytes` into an FNV-1a hash (the `--verify` body checksum).
#[inline]
pub(crate) fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(FNV_PRIME);
    }
    h
}

/// Streaming parser for the responses on one connection.
pub struct ResponseParser {
    state: State,
    head: Vec<u8>,
    cur: Response,
    head_request: bool,
    checksum: bool,
}

impl ResponseParser {
    pub fn new(head_request: bool, checksum: bool) -> Self {
        ResponseParser {
            state: State::Head,
            head: Vec::new(),
            cur: Response {
                status: 0,
                close: false,
                body_len: 0,
                body_hash: FNV_OFFSET,
            },
            head_request,
            checksum,
        }
    }

    /// Forgets any partial response (after a reconnect).
    pub fn reset(&mut self) {
        self.state = State::Head;
        self.head.clear();
    }

    /// True when no response is partially parsed.
    pub fn idle(&self) -> bool {
        self.state == State::Head && self.head.is_empty()
    }

    /// Body bytes the current response still needs, when its framing says exactly
    /// (Content-Length); `None` between responses and for chunked or close-delimited bodies.
    pub fn body_remaining(&self) -> Option<u64> {
        match self.state {
            State::Fixed(n) if n > 0 => Some(n),
            _ => None,
        }
    }

    /// Consumes bytes until one response completes: returns it and the bytes used, or `None`
    /// when all of `buf` was consumed without completing one.
    pub fn feed(&mut self, buf: &[u8]) -> Result<Option<(Response, usize)>, ParseError> {
        let mut pos = 0;
        loop {
            if let Some(done) = self.finished() {
                return Ok(Some((done, pos)));
            }
            if pos == buf.len() {
                return Ok(None);
            }
            pos += self.step(&buf[pos..])?;
        }
    }

    /// The connection hit EOF: a close-delimited body is complete now.
    pub fn eof(&mut self) -> Option<Response> {
        if self.state == State::UntilClose {
            self.state = State::Head;
            self.cur.close = true;
            return Some(self.cur);
        }
        None
    }

    fn finished(&mut self) -> Option<Response> {
        if matches!(self.state, State::Fixed(0)) {
            self.state = State::Head;
            return Some(self.cur);
        }
        None
    }

    /// Advances the state machine over some of `buf`; returns the bytes consumed (> 0).
    fn step(&mut self, buf: &[u8]) -> Result<usize, ParseError> {
        match self.state {
            State::Head => self.step_head(buf),
            State::Fixed(rem) | State::ChunkData(rem) => {
                let n = rem.min(buf.len() as u64) as usize;
                self.body(&buf[..n]);
                self.state = match self.state {
                    State::Fixed(r) => State::Fixed(r - n as u64),
                    _ if rem == n as u64 => State::ChunkEnd,
                    _ => State::ChunkData(rem - n as u64),
                };
                Ok(n)
            }
            State::UntilClose => {
                self.body(buf);
                Ok(buf.len())
            }
            State::ChunkSize { .. } => self.step_chunk_size(buf),
            State::ChunkEnd => match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    self.state = State::ChunkSize {
                        size: 0,
                        digits: false,
                        ext: false,
                    };
                    Ok(i + 1)
                }
                None => Ok(buf.len()),
            },
            State::Trailer { empty } => {
                let mut empty = empty;
                for (i, &b) in buf.iter().enumerate() {
                    match b {
                        b'\n' if empty => {
                            self.state = State::Fixed(0);
                            return Ok(i + 1);
                        }
                        b'\n' => empty = true,
                        b'\r' => {}
                        _ => empty = false,
                    }
                }
                self.state = State::Trailer { empty };
                Ok(buf.len())
            }
        }
    }

    fn step_chunk_size(&mut self, buf: &[u8]) -> Result<usize, ParseError> {
        let State::ChunkSize {
            mut size,
            mut digits,
            mut ext,
        } = self.state
        else {
            unreachable!()
        };
        for (i, &b) in buf.iter().enumerate() {
            match b {
                b'\n' => {
                    if !digits {
                        return Err(ParseError);
                    }
                    self.state = if size == 0 {
                        State::Trailer { empty: true }
                    } else {
                        State::ChunkData(size)
                    };
                    return Ok(i + 1);
                }
                _ if ext || b == b'\r' => {}
                b';' | b' ' | b'\t' => ext = true,
                _ => {
                    let d = (b as char).to_digit(16).ok_or(ParseError)? as u64;
                    if size > (u64::MAX >> 8) {
                        return Err(ParseError);
                    }
                    size = size * 16 + d;
                    digits = true;
                }
            }
        }
        self.state = State::ChunkSize { size, digits, ext };
        Ok(buf.len())
    }

    #[inline]
    fn body(&mut self, bytes: &[u8]) {
        self.cur.body_len += bytes.len() as u64;
        if self.checksum {
            self.cur.body_hash = fnv(self.cur.body_hash, bytes);
        }
    }

    fn step_head(&mut self, buf: &[u8]) -> Result<usize, ParseError> {
        if self.head.is_empty() {
            // The common case: the whole head is in this read, found and parsed in one pass.
            if let Some((head, end)) = parse_head(buf)? {
                self.start_body(head);
                return Ok(end);
            }
            if buf.len() > MAX_HEAD {
                return Err(ParseError);
            }
            self.head.extend_from_slice(buf);
            return Ok(buf.len());
        }
        let old = self.head.len();
        self.head.extend_from_slice(buf);
        let from = old.saturating_sub(3);
        match HEAD_END.find(&self.head[from..]) {
            Some(i) => {
                let end = from + i + 4;
                let parsed = parse_head(&self.head[..end]);
                self.head.clear();
                let (head, _) = parsed?.ok_or(ParseError)?;
                self.start_body(head);
                Ok(end - old)
            }
            None if self.head.len() > MAX_HEAD => Err(ParseError),
            None => Ok(buf.len()),
        }
    }

    /// Picks the body framing for a parsed head.
    fn start_body(&mut self, h: Head) {
        self.cur = Response {
            status: h.status,
            close: h.close,
            body_len: 0,
            body_hash: FNV_OFFSET,
        };
        self.state = if (100..200).contains(&h.status) {
            State::Head // interim response: the real one follows
        } else if self.head_request || h.status == 204 || h.status == 304 {
            State::Fixed(0)
        } else if h.chunked {
            State::ChunkSize {
                size: 0,
                digits: false,
                ext: false,
            }
        } else if let Some(len) = h.content_length {
            State::Fixed(len)
        } else {
            State::UntilClose
        };
    }
}

struct Head {
    status: u16,
    close: bool,
    chunked: bool,
    content_length: Option<u64>,
}

/// Parses the head at the start of `buf` up to its blank line (the first CRLF CRLF); returns it
/// with the bytes it took, or `None` when the blank line has not arrived yet.
fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, ParseError> {
    let mut lines = memchr::memchr_iter(b'\n', buf).scan(0, |start, nl| {
        let line = (*start, &buf[*start..nl]);
        *start = nl + 1;
        Some(line)
    });
    let Some((_, status_line)) = lines.next() else {
        return Ok(None);
    };
    if status_line.len() < 12 || !status_line.starts_with(b"HTTP/1.") || status_line[8] != b' ' {
        return Err(ParseError);
    }
    let code = &status_line[9..12];
    if !code.iter().all(u8::is_ascii_digit) {
        return Err(ParseError);
    }
    let status = code.iter().fold(0u16, |a, &d| a * 10 + (d - b'0') as u16);
    let http10 = status_line[7] == b'0';
    let mut h = Head {
        status,
        close: http10,
        chunked: false,
        content_length: None,
    };
    for (start, line) in lines {
        if line == b"\r" && buf[start - 2] == b'\r' {
            return Ok(Some((h, start + 2)));
        }
        // Only three headers matter, all starting with C or T: skip the rest on one byte,
        // then dispatch on the name's length before comparing.
        if !matches!(line.first(), Some(b'c' | b'C' | b't' | b'T')) {
            continue;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = memchr::memchr(b':', line) else {
            continue;
        };
        let name = &line[..colon];
        match name.len() {
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                h.content_length = Some(parse_u64(trim(&line[colon + 1..]))?);
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                h.chunked = contains_ci(trim(&line[colon + 1..]), b"chunked");
            }
            10 if name.eq_ignore_ascii_case(b"connection") => {
                let value = trim(&line[colon + 1..]);
                if value.eq_ignore_ascii_case(b"keep-alive") {
                    h.close = false;
                } else if contains_ci(value, b"close") {
                    h.close = true;
                } else if contains_ci(value, b"keep-alive") {
                    h.close = false;
                }
            }
            _ => {}
        }
    }
    Ok(None)
}

fn parse_u64(digits: &[u8]) -> Result<u64, ParseError> {
    if digits.is_empty() || digits.len() > 19 {
        return Err(ParseError);
    }
    digits.iter().try_fold(0u64, |acc, &d| {
        if d.is_ascii_digit() {
            Ok(acc * 10 + (d - b'0') as u64)
        } else {
            Err(ParseError)
        }
    })
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &s[start..end]
}

fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(p: &mut ResponseParser, mut buf: &[u8]) -> Vec<Response> {
        let mut out = Vec::new();
        while let Some((r, n)) = p.feed(buf).unwrap() {
            out.push(r);
            buf = &buf[n..];
        }
        out
    }

    #[test]
    fn content_length_response_completes_with_its_body() {
        let mut p = ResponseParser::new(false, true);
        let r = parse_all(&mut p, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].status, r[0].body_len, r[0].close), (200, 5, false));
    }

    #[test]
    fn a_pipelined_pair_split_at_any_byte_parses_like_the_whole() {
        let wire: &[u8] = b"HTTP/1.1 200 OK\r\nServer: x\r\nContent-Type: text/plain\r\n\
            Content-Length: 5\r\nConnection: keep-alive\r\n\r\nhello\
            HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\nconnection: close\r\n\r\nno";
        let whole = parse_all(&mut ResponseParser::new(false, true), wire);
        assert_eq!(whole.len(), 2);
        assert_eq!(
            (whole[0].status, whole[0].body_len, whole[0].close),
            (200, 5, false)
        );
        assert_eq!(
            (whole[1].status, whole[1].body_len, whole[1].close),
            (404, 2, true)
        );
        for at in 1..wire.len() {
            let mut p = ResponseParser::new(false, true);
            let mut got = parse_all(&mut p, &wire[..at]);
            got.extend(parse_all(&mut p, &wire[at..]));
            assert_eq!(got, whole, "split at byte {at}");
        }
    }

    #[test]
    fn a_head_ends_only_at_crlf_crlf() {
        // A bare LF before the CRLF is not the end of the head: the next line still counts.
        let wire = b"HTTP/1.1 200 OK\nX: y\n\r\nContent-Length: 2\r\n\r\nok";
        let r = parse_all(&mut ResponseParser::new(false, true), wire);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].body_len, 2);
    }

    #[test]
    fn chunked_response_split_byte_by_byte_completes_once() {
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        let mut p = ResponseParser::new(false, true);
        let mut got = Vec::new();
        for b in wire.iter() {
            got.extend(parse_all(&mut p, std::slice::from_ref(b)));
        }
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].body_len, 11);
        let mut whole = ResponseParser::new(false, true);
        assert_eq!(
            parse_all(
                &mut whole,
                b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world"
            )[0]
            .body_hash,
            got[0].body_hash
        );
    }

    #[test]
    fn pipelined_responses_come_out_in_order() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 404 NF\r\nContent-Length: 0\r\n\r\nHTTP/1.1 204 NC\r\n\r\n";
        let mut p = ResponseParser::new(false, false);
        let codes: Vec<u16> = parse_all(&mut p, wire).iter().map(|r| r.status).collect();
        assert_eq!(codes, vec![200, 404, 204]);
    }

    #[test]
    fn close_delimited_body_completes_at_eof() {
        let mut p = ResponseParser::new(false, false);
        assert!(parse_all(&mut p, b"HTTP/1.1 200 OK\r\n\r\nabc").is_empty());
        let r = p.eof().unwrap();
        assert_eq!((r.body_len, r.close), (3, true));
    }

    #[test]
    fn connection_close_header_is_reported() {
        let mut p = ResponseParser::new(false, false);
        let r = parse_all(
            &mut p,
            b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n",
        );
        assert!(r[0].close);
    }

    #[test]
    fn garbage_is_a_parse_error() {
        let mut p = ResponseParser::new(false, false);
        assert_eq!(p.feed(b"SSH-2.0-OpenSSH\r\n\r\n"), Err(ParseError));
    }

    #[test]
    fn head_response_has_no_body_despite_content_length() {
        let mut p = ResponseParser::new(true, false);
        let r = parse_all(&mut p, b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n");
        assert_eq!(r[0].body_len, 0);
    }

    #[test]
    fn request_has_host_header_and_body_length() {
        let req = serialize_request(
            "POST",
            "/x",
            "127.0.0.1:8080",
            &["X-A: 1".into()],
            Some(b"hi"),
        );
        assert_eq!(
            req,
            b"POST /x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-A: 1\r\nContent-Length: 2\r\n\r\nhi"
        );
    }
}
