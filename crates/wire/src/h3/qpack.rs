//! QPACK (RFC 9204) as a client that allows no dynamic table: requests encoded once per URL
//! from the static table and literals (never Huffman, never the dynamic table, so the encoder
//! needs no stream of its own), responses decoded for their `:status`.
//!
//! The client's SETTINGS say QPACK_MAX_TABLE_CAPACITY 0, so a response's field section must
//! have a Required Insert Count of 0 and no line may refer to the dynamic table (indexed or
//! name-referenced with T=0, post-base forms): any such reference, or a malformed line, is
//! QPACK_DECOMPRESSION_FAILED. Strings are read through the HTTP/2 codec's per-thread memory of
//! Huffman strings ([`crate::h2::Strings`]), so a server repeating its strings costs one decode
//! per distinct string.

use super::frame::{self, DATA, HEADERS};
use super::Code;
use crate::h2::Strings;

/// The static table (RFC 9204 Appendix A): names and values, index 0 first.
pub(crate) const STATIC: [(&str, &str); 99] = [
    (":authority", ""),
    (":path", "/"),
    ("age", "0"),
    ("content-disposition", ""),
    ("content-length", "0"),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("referer", ""),
    ("set-cookie", ""),
    (":method", "CONNECT"),
    (":method", "DELETE"),
    (":method", "GET"),
    (":method", "HEAD"),
    (":method", "OPTIONS"),
    (":method", "POST"),
    (":method", "PUT"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "103"),
    (":status", "200"),
    (":status", "304"),
    (":status", "404"),
    (":status", "503"),
    ("accept", "*/*"),
    ("accept", "application/dns-message"),
    ("accept-encoding", "gzip, deflate, br"),
    ("accept-ranges", "bytes"),
    ("access-control-allow-headers", "cache-control"),
    ("access-control-allow-headers", "content-type"),
    ("access-control-allow-origin", "*"),
    ("cache-control", "max-age=0"),
    ("cache-control", "max-age=2592000"),
    ("cache-control", "max-age=604800"),
    ("cache-control", "no-cache"),
    ("cache-control", "no-store"),
    ("cache-control", "public, max-age=31536000"),
    ("content-encoding", "br"),
    ("content-encoding", "gzip"),
    ("content-type", "application/dns-message"),
    ("content-type", "application/javascript"),
    ("content-type", "application/json"),
    ("content-type", "application/x-www-form-urlencoded"),
    ("content-type", "image/gif"),
    ("content-type", "image/jpeg"),
    ("content-type", "image/png"),
    ("content-type", "text/css"),
    ("content-type", "text/html; charset=utf-8"),
    ("content-type", "text/plain"),
    ("content-type", "text/plain;charset=utf-8"),
    ("range", "bytes=0-"),
    ("strict-transport-security", "max-age=31536000"),
    (
        "strict-transport-security",
        "max-age=31536000; includesubdomains",
    ),
    (
        "strict-transport-security",
        "max-age=31536000; includesubdomains; preload",
    ),
    ("vary", "accept-encoding"),
    ("vary", "origin"),
    ("x-content-type-options", "nosniff"),
    ("x-xss-protection", "1; mode=block"),
    (":status", "100"),
    (":status", "204"),
    (":status", "206"),
    (":status", "302"),
    (":status", "400"),
    (":status", "403"),
    (":status", "421"),
    (":status", "425"),
    (":status", "500"),
    ("accept-language", ""),
    ("access-control-allow-credentials", "FALSE"),
    ("access-control-allow-credentials", "TRUE"),
    ("access-control-allow-headers", "*"),
    ("access-control-allow-methods", "get"),
    ("access-control-allow-methods", "get, post, options"),
    ("access-control-allow-methods", "options"),
    ("access-control-expose-headers", "content-length"),
    ("access-control-request-headers", "content-type"),
    ("access-control-request-method", "get"),
    ("access-control-request-method", "post"),
    ("alt-svc", "clear"),
    ("authorization", ""),
    (
        "content-security-policy",
        "script-src 'none'; object-src 'none'; base-uri 'none'",
    ),
    ("early-data", "1"),
    ("expect-ct", ""),
    ("forwarded", ""),
    ("if-range", ""),
    ("origin", ""),
    ("purpose", "prefetch"),
    ("server", ""),
    ("timing-allow-origin", "*"),
    ("upgrade-insecure-requests", "1"),
    ("user-agent", ""),
    ("x-forwarded-for", ""),
    ("x-frame-options", "deny"),
    ("x-frame-options", "sameorigin"),
];

/// Static entries that are `:status` fields: their codes, by index (0: not a status).
fn static_status(index: usize) -> u16 {
    match STATIC.get(index) {
        Some((":status", v)) => v.parse().unwrap_or(0),
        _ => 0,
    }
}

/// A request prepared once per URL: the HEADERS frame, and a DATA frame when it has a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The frames a request stream carries, FIN after them.
    pub bytes: Vec<u8>,
}

impl Request {
    /// Encodes a request: pseudo-headers first (`:scheme https`), then `headers` (names
    /// lowercased), then `body` as one DATA frame.
    pub fn new(
        method: &str,
        authority: &str,
        path: &str,
        headers: &[(String, String)],
        body: Option<&[u8]>,
    ) -> Request {
        let block = encode(method, authority, path, headers);
        let mut bytes = Vec::with_capacity(block.len() + 16 + body.map_or(0, <[u8]>::len));
        frame::put_header(&mut bytes, HEADERS, block.len() as u64);
        bytes.extend_from_slice(&block);
        if let Some(body) = body {
            frame::put_header(&mut bytes, DATA, body.len() as u64);
            bytes.extend_from_slice(body);
        }
        Request { bytes }
    }
}

/// A request's encoded field section (without the frame header).
pub fn encode(method: &str, authority: &str, path: &str, headers: &[(String, String)]) -> Vec<u8> {
    let mut out = vec![0x00, 0x00]; // Required Insert Count 0, Base 0
    field(&mut out, ":method", method);
    field(&mut out, ":scheme", "https");
    field(&mut out, ":authority", authority);
    field(&mut out, ":path", path);
    for (name, value) in headers {
        field(&mut out, &name.to_ascii_lowercase(), value);
    }
    out
}

/// One field line: indexed when the static table has the field, else a literal naming a
/// static entry's name, else a literal with a literal name.
fn field(out: &mut Vec<u8>, name: &str, value: &str) {
    if let Some(i) = STATIC.iter().position(|&(n, v)| n == name && v == value) {
        put_int(out, 0xc0, 6, i as u64); // 11 T=1: static indexed
        return;
    }
    match STATIC.iter().position(|&(n, _)| n == name) {
        Some(i) => put_int(out, 0x50, 4, i as u64), // 01 N=0 T=1: static name
        None => {
            put_int(out, 0x20, 3, name.len() as u64); // 001 N=0 H=0: literal name
            out.extend_from_slice(name.as_bytes());
        }
    }
    put_int(out, 0x00, 7, value.len() as u64);
    out.extend_from_slice(value.as_bytes());
}

/// Appends an integer with an `n`-bit prefix after the `flags` bits (RFC 7541 §5.1).
pub(crate) fn put_int(out: &mut Vec<u8>, flags: u8, n: u32, v: u64) {
    let max = (1u64 << n) - 1;
    if v < max {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | max as u8);
    let mut rest = v - max;
    while rest >= 0x80 {
        out.push((rest as u8 & 0x7f) | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

const FAILED: Code = Code::QPACK_DECOMPRESSION_FAILED;

/// Reads an integer with an `n`-bit prefix at `*at` (at most 2^62).
fn int(buf: &[u8], at: &mut usize, n: u32) -> Result<u64, Code> {
    let max = (1u64 << n) - 1;
    let mut v = u64::from(*buf.get(*at).ok_or(FAILED)?) & max;
    *at += 1;
    if v < max {
        return Ok(v);
    }
    let mut shift = 0;
    loop {
        let b = *buf.get(*at).ok_or(FAILED)?;
        *at += 1;
        v += u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
        shift += 7;
        if shift > 55 {
            return Err(FAILED);
        }
    }
}

/// A string literal whose length has an `n`-bit prefix and whose Huffman flag is `h_bit` of
/// its first byte: its decoded length and first bytes.
fn string(
    buf: &[u8],
    at: &mut usize,
    n: u32,
    h_bit: u8,
    strings: &mut Strings,
) -> Result<(u32, [u8; 8]), Code> {
    let huffman = buf.get(*at).ok_or(FAILED)? & h_bit != 0;
    let len = int(buf, at, n)? as usize;
    let bytes = buf.get(*at..at.saturating_add(len)).ok_or(FAILED)?;
    *at += len;
    strings.head(huffman, bytes).map_err(|_| FAILED)
}

/// The three digits of a status value, 0 when it is not three digits.
fn status_digits(len: u32, head: &[u8; 8]) -> u16 {
    if len != 3 || !head[..3].iter().all(u8::is_ascii_digit) {
        return 0;
    }
    head[..3]
        .iter()
        .fold(0, |a, &d| a * 10 + u16::from(d - b'0'))
}

/// Decodes a response's field section: its `:status` (the first, if several; None when it has
/// none). Any reference to the dynamic table, or a malformed line, is
/// QPACK_DECOMPRESSION_FAILED.
pub fn decode_status(block: &[u8], strings: &mut Strings) -> Result<Option<u16>, Code> {
    let mut at = 0;
    if int(block, &mut at, 8)? != 0 {
        return Err(FAILED); // Required Insert Count: a dynamic table we did not allow
    }
    int(block, &mut at, 7)?; // Sign and Delta Base: meaningless without a table
    let mut status = None;
    while at < block.len() {
        let b = block[at];
        let code = if b & 0x80 != 0 {
            // 1 T index(6): indexed field line
            if b & 0x40 == 0 {
                return Err(FAILED);
            }
            static_status(int(block, &mut at, 6)? as usize)
        } else if b & 0xc0 == 0x40 {
            // 01 N T index(4): literal with name reference
            if b & 0x10 == 0 {
                return Err(FAILED);
            }
            let index = int(block, &mut at, 4)? as usize;
            let (name, _) = STATIC.get(index).ok_or(FAILED)?;
            let (len, head) = string(block, &mut at, 7, 0x80, strings)?;
            if *name == ":status" {
                status_digits(len, &head)
            } else {
                0
            }
        } else if b & 0xe0 == 0x20 {
            // 001 N H len(3): literal with literal name
            let (name_len, name) = string(block, &mut at, 3, 0x08, strings)?;
            let (len, head) = string(block, &mut at, 7, 0x80, strings)?;
            if name_len == 7 && &name[..7] == b":status" {
                status_digits(len, &head)
            } else {
                0
            }
        } else {
            // 0001 (indexed post-base) and 0000 (name reference post-base): dynamic
            return Err(FAILED);
        };
        if code != 0 && status.is_none() {
            status = Some(code);
        }
    }
    Ok(status)
}
