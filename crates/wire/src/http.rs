//! HTTP/1.1: the smallest streaming response parser that is still correct (status line,
//! Content-Length, chunked, close-delimited, Connection: close, Content-Encoding). Requests are
//! written by the engine's templates.
//!
//! Hand-written on purpose: this is the hot path, run on every response of every connection, and
//! a general parser (httparse, hyper's h1) would allocate or decode headers the engine never
//! reads. It finds and parses a head in one pass (about 100 ns per nginx response, see
//! CHANGELOG), copies bytes only when a head is split across reads, and hashes bodies (FNV-1a,
//! the same function as the `fnv` crate) inline in the same byte loop only when `--verify` asks.
//! With `--verify`, an encoded body (`Content-Encoding`) is kept and decoded at its end, and the
//! decoded bytes are hashed and measured; the bytes on the wire are counted beside them.

use crate::coding::Coding;
use memchr::memmem;
use std::sync::LazyLock;

/// The end of a response head, searched with a prebuilt finder.
static HEAD_END: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"\r\n\r\n"));

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
    /// The body's bytes on the wire (chunk framing excluded); `body_len` is its decoded size
    /// when checksums are on and it was encoded, else the same.
    pub wire_len: u64,
    /// Its `Content-Encoding`.
    pub encoding: Encoding,
    /// Checksums on and the body not valid in its coding.
    pub undecodable: bool,
}

/// A response's `Content-Encoding`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Encoding {
    /// None (or `identity`).
    #[default]
    Identity,
    One(Coding),
    /// Several codings, or one the client does not know.
    Other,
}

impl Encoding {
    fn of(value: &[u8]) -> Encoding {
        let v = String::from_utf8_lossy(value);
        let v = v.trim();
        if v.is_empty() || v.eq_ignore_ascii_case("identity") {
            return Encoding::Identity;
        }
        Coding::parse(v).map_or(Encoding::Other, Encoding::One)
    }
}

impl Response {
    fn new(status: u16, close: bool, encoding: Encoding) -> Response {
        Response {
            status,
            close,
            body_len: 0,
            body_hash: FNV_OFFSET,
            wire_len: 0,
            encoding,
            undecodable: false,
        }
    }

    /// A response with only a status (and no body), as TCP echoes are recorded.
    pub fn status_only(status: u16) -> Response {
        Response {
            body_hash: 0,
            ..Response::new(status, false, Encoding::Identity)
        }
    }
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

/// The hash `--verify` keeps of a whole body (FNV-1a from its offset basis).
pub fn body_hash(bytes: &[u8]) -> u64 {
    fnv(FNV_OFFSET, bytes)
}

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
    /// Checksums on and the body encoded: its bytes, decoded at the end.
    encoded: Option<Vec<u8>>,
}

impl ResponseParser {
    pub fn new(head_request: bool, checksum: bool) -> Self {
        ResponseParser {
            state: State::Head,
            head: Vec::new(),
            cur: Response::new(0, false, Encoding::Identity),
            head_request,
            checksum,
            encoded: None,
        }
    }

    /// Forgets any partial response (after a reconnect).
    pub fn reset(&mut self) {
        self.state = State::Head;
        self.head.clear();
        self.encoded = None;
    }

    /// True in the middle of a body whose length is known (Content-Length, chunked): an EOF
    /// now truncates it.
    pub fn in_body(&self) -> bool {
        !matches!(
            self.state,
            State::Head | State::UntilClose | State::Fixed(0)
        )
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
            return Some(self.done());
        }
        None
    }

    fn finished(&mut self) -> Option<Response> {
        if matches!(self.state, State::Fixed(0)) {
            self.state = State::Head;
            return Some(self.done());
        }
        None
    }

    /// The current response, its encoded body decoded and hashed.
    fn done(&mut self) -> Response {
        let Some(raw) = self.encoded.take() else {
            self.cur.wire_len = self.cur.body_len;
            return self.cur;
        };
        self.cur.wire_len = raw.len() as u64;
        if let Encoding::One(c) = self.cur.encoding {
            match c.decode(&raw) {
                Ok(plain) => {
                    self.cur.body_len = plain.len() as u64;
                    self.cur.body_hash = fnv(FNV_OFFSET, &plain);
                }
                Err(_) => self.cur.undecodable = true,
            }
        }
        self.cur
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
        if let Some(raw) = &mut self.encoded {
            raw.extend_from_slice(bytes);
        } else if self.checksum {
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
        self.cur = Response::new(h.status, h.close, h.encoding);
        let encoded = self.checksum && matches!(h.encoding, Encoding::One(_));
        self.encoded = encoded.then(Vec::new);
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
    encoding: Encoding,
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
        encoding: Encoding::Identity,
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
            16 if name.eq_ignore_ascii_case(b"content-encoding") => {
                h.encoding = Encoding::of(&line[colon + 1..]);
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
#[path = "http_tests.rs"]
mod tests;
