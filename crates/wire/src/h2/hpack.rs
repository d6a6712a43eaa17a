//! HPACK (RFC 7541) for a load generator: request header blocks encoded once per URL, and
//! response header blocks decoded with the dynamic table honoured.
//!
//! Requests use the static table and literals "without indexing" only, so the server's
//! decoder table stays empty and one block serves every request to a URL.
//!
//! The response decoder is written here, on the hot path, because the kept HPACK crates cost
//! more than the whole request budget. nginx adds five entries to the dynamic table with every
//! response (server, date, content-type, content-length, last-modified, Huffman-coded), so every
//! block has to go through the table. On nginx 1.22's `/hello` block, decoded 200,000 times:
//! `httlib-hpack` 0.1.3 takes 2.5 µs per block (a copy per string, a `Vec` per field and a
//! `drain` per field), `loona-hpack` 0.4.3 (and `hpack`/`fluke-hpack`, the same code) 217 µs,
//! because it builds a `HashMap` Huffman table for every Huffman string; h2load's whole client
//! CPU per request is a few µs. A load generator needs one header, `:status`, so this decoder
//! keeps, per table entry, the sizes the table accounting needs and the status when the entry is
//! a `:status` field, never the strings. Huffman strings are decoded by the `httlib-huffman` crate
//! (a flattened-table decoder), once per distinct string: [`Strings`] remembers, per thread, the
//! decoded length (and first bytes) of the strings it has seen, and servers repeat theirs.
//! `hpack/tests.rs` checks this decoder against `loona-hpack` on generated block sequences.

use std::collections::VecDeque;

/// A header block the decoder cannot accept: a connection error (COMPRESSION_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressionError;

/// The static table's names (RFC 7541 Appendix A), index 1 first.
const STATIC_NAMES: [&str; 61] = [
    ":authority",
    ":method",
    ":method",
    ":path",
    ":path",
    ":scheme",
    ":scheme",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "accept",
    "access-control-allow-origin",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "content-disposition",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-range",
    "content-type",
    "cookie",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "link",
    "location",
    "max-forwards",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "refresh",
    "retry-after",
    "server",
    "set-cookie",
    "strict-transport-security",
    "transfer-encoding",
    "user-agent",
    "vary",
    "via",
    "www-authenticate",
];

/// The static `:status` entries 8 to 14.
const STATIC_STATUS: [u16; 7] = [200, 204, 206, 304, 400, 404, 500];

/// The dynamic table's default size (SETTINGS_HEADER_TABLE_SIZE), which we never change.
pub const TABLE_SIZE: usize = 4096;

/// What a field's name is to the decoder: `:status`, or (gRPC only) `content-type` and
/// `grpc-status`; any other name is only counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Other,
    Status,
    ContentType,
    GrpcStatus,
}

/// What the decoder keeps of one dynamic table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    name_len: u32,
    value_len: u32,
    /// What the name is.
    kind: Kind,
    /// Its value as `kind` reads it: a status code (0: not three digits), a gRPC status (see
    /// [`Fields::grpc_status`]) or a content type (see [`Fields::content_type`]).
    value: u16,
}

impl Entry {
    fn size(&self) -> usize {
        self.name_len as usize + self.value_len as usize + 32
    }
}

/// One connection's response decoder.
#[derive(Debug)]
pub struct Decoder {
    /// Newest first.
    entries: VecDeque<Entry>,
    size: usize,
    max: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            entries: VecDeque::new(),
            size: 0,
            max: TABLE_SIZE,
        }
    }
}

/// A string literal as it is on the wire.
#[derive(Clone, Copy)]
struct Literal<'a> {
    huffman: bool,
    bytes: &'a [u8],
}

/// A field's name: what the table and the fields read need of it.
#[derive(Clone, Copy)]
struct Name {
    len: u32,
    kind: Kind,
}

/// What a gRPC call needs of a header block (see [`Decoder::decode_grpc`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fields {
    /// The first `:status`.
    pub status: Option<u16>,
    /// `grpc-status`: its code (`GRPC_STATUS_UNREADABLE`: not a number up to three digits).
    pub grpc_status: Option<u16>,
    /// `content-type`: `CONTENT_GRPC` (`application/grpc`, `+` or `;` suffixes allowed) or
    /// `CONTENT_OTHER`; None when absent.
    pub content_type: Option<u16>,
}

/// [`Fields::content_type`]: `application/grpc`.
pub const CONTENT_GRPC: u16 = 1;
/// [`Fields::content_type`]: anything else.
pub const CONTENT_OTHER: u16 = 2;
/// [`Fields::grpc_status`]: a value that is not a status code.
pub const GRPC_STATUS_UNREADABLE: u16 = u16::MAX;

impl Decoder {
    /// Decodes one complete header block; returns its `:status` (the first, if several).
    pub fn decode(
        &mut self,
        block: &[u8],
        strings: &mut Strings,
    ) -> Result<Option<u16>, CompressionError> {
        self.fields::<false>(block, strings).map(|f| f.status)
    }

    /// Decodes one complete header block of a gRPC response: `:status`, `content-type` and
    /// `grpc-status` (a connection decodes every block with one of the two methods).
    pub fn decode_grpc(
        &mut self,
        block: &[u8],
        strings: &mut Strings,
    ) -> Result<Fields, CompressionError> {
        self.fields::<true>(block, strings)
    }

    /// The decoder: with `GRPC` false, only `:status` is read (the HTTP/2 driver's path).
    fn fields<const GRPC: bool>(
        &mut self,
        block: &[u8],
        strings: &mut Strings,
    ) -> Result<Fields, CompressionError> {
        let mut pos = 0;
        let mut f = Fields::default();
        let mut fields = false;
        while pos < block.len() {
            let b = block[pos];
            if b & 0x80 != 0 {
                let index = int(block, &mut pos, 7)?;
                let (kind, value) = self.indexed(index)?;
                read::<GRPC>(&mut f, kind, value);
                fields = true;
            } else if b & 0xe0 == 0x20 {
                if fields {
                    return Err(CompressionError); // a size update comes before any field
                }
                let max = int(block, &mut pos, 5)?;
                if max > TABLE_SIZE {
                    return Err(CompressionError);
                }
                self.max = max;
                self.evict(0);
            } else {
                let (prefix, index) = if b & 0x40 != 0 { (6, true) } else { (4, false) };
                let name_index = int(block, &mut pos, prefix)?;
                let name = match name_index {
                    0 => {
                        let lit = literal(block, &mut pos)?;
                        let (len, head) = strings.get(lit)?;
                        let kind = match (len, &head) {
                            (7, h) if &h[..7] == b":status" => Kind::Status,
                            (12, b"content-") if GRPC => Kind::ContentType,
                            (11, b"grpc-sta") if GRPC => Kind::GrpcStatus,
                            _ => Kind::Other,
                        };
                        Name { len, kind }
                    }
                    i => self.name::<GRPC>(i)?,
                };
                let value = literal(block, &mut pos)?;
                let (value_len, head) = strings.get(value)?;
                let code = match name.kind {
                    Kind::Status if value_len == 3 => three_digits(&head[..3]),
                    Kind::Status | Kind::Other => 0,
                    Kind::GrpcStatus => match value_len {
                        1..=3 => match three_digits(&head[..value_len as usize]) {
                            0 if head[0] != b'0' || value_len != 1 => GRPC_STATUS_UNREADABLE,
                            n => n,
                        },
                        _ => GRPC_STATUS_UNREADABLE,
                    },
                    Kind::ContentType => content_type(strings.full(value)?),
                };
                read::<GRPC>(&mut f, name.kind, code);
                if index {
                    self.insert(Entry {
                        name_len: name.len,
                        value_len,
                        kind: name.kind,
                        value: code,
                    });
                }
                fields = true;
            }
        }
        Ok(f)
    }

    /// What an indexed field is, and its value as its kind reads it.
    fn indexed(&self, index: usize) -> Result<(Kind, u16), CompressionError> {
        match index {
            0 => Err(CompressionError),
            8..=14 => Ok((Kind::Status, STATIC_STATUS[index - 8])),
            1..=61 => Ok((Kind::Other, 0)),
            _ => {
                let e = self.entries.get(index - 62).ok_or(CompressionError)?;
                Ok((e.kind, e.value))
            }
        }
    }

    fn name<const GRPC: bool>(&self, index: usize) -> Result<Name, CompressionError> {
        match index {
            1..=61 => Ok(Name {
                len: STATIC_NAMES[index - 1].len() as u32,
                kind: match index {
                    8..=14 => Kind::Status,
                    31 if GRPC => Kind::ContentType,
                    _ => Kind::Other,
                },
            }),
            _ => {
                let e = self.entries.get(index - 62).ok_or(CompressionError)?;
                Ok(Name {
                    len: e.name_len,
                    kind: e.kind,
                })
            }
        }
    }

    fn insert(&mut self, e: Entry) {
        if e.size() > self.max {
            self.entries.clear();
            self.size = 0;
            return;
        }
        self.evict(e.size());
        self.size += e.size();
        self.entries.push_front(e);
    }

    /// Evicts the oldest entries until `room` more bytes fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max {
            match self.entries.pop_back() {
                Some(old) => self.size -= old.size(),
                None => break,
            }
        }
    }

    /// Entries and bytes in the dynamic table (for tests).
    pub fn table(&self) -> (usize, usize) {
        (self.entries.len(), self.size)
    }
}

fn three_digits(b: &[u8]) -> u16 {
    if b.iter().all(u8::is_ascii_digit) {
        b.iter().fold(0, |a, &d| a * 10 + (d - b'0') as u16)
    } else {
        0
    }
}

/// Takes one field's value into `f` (`GRPC`: the gRPC fields too).
#[inline]
fn read<const GRPC: bool>(f: &mut Fields, kind: Kind, value: u16) {
    match kind {
        Kind::Status if value != 0 => {
            f.status.get_or_insert(value);
        }
        Kind::ContentType if GRPC => f.content_type = Some(value),
        Kind::GrpcStatus if GRPC => f.grpc_status = Some(value),
        _ => {}
    }
}

/// `application/grpc`, alone or with a `+format` or `;parameters`.
fn content_type(v: &[u8]) -> u16 {
    let rest = v.strip_prefix(b"application/grpc");
    match rest {
        Some([] | [b'+' | b';', ..]) => CONTENT_GRPC,
        _ => CONTENT_OTHER,
    }
}

/// An HPACK integer with an N-bit prefix (RFC 7541 section 5.1), at most 2^28.
fn int(buf: &[u8], pos: &mut usize, prefix: u32) -> Result<usize, CompressionError> {
    let mask = (1usize << prefix) - 1;
    let first = *buf.get(*pos).ok_or(CompressionError)? as usize & mask;
    *pos += 1;
    if first < mask {
        return Ok(first);
    }
    let mut value = mask;
    let mut shift = 0;
    loop {
        let b = *buf.get(*pos).ok_or(CompressionError)? as usize;
        *pos += 1;
        value += (b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
        shift += 7;
        if shift > 21 {
            return Err(CompressionError);
        }
    }
}

fn literal<'a>(buf: &'a [u8], pos: &mut usize) -> Result<Literal<'a>, CompressionError> {
    let huffman = buf.get(*pos).ok_or(CompressionError)? & 0x80 != 0;
    let len = int(buf, pos, 7)?;
    let bytes = buf.get(*pos..*pos + len).ok_or(CompressionError)?;
    *pos += len;
    Ok(Literal { huffman, bytes })
}

/// Slots in the Huffman string cache (direct-mapped).
const SLOTS: usize = 256;
/// Decoded bytes a cache slot keeps: enough for `:status` and a status code.
const HEAD: usize = 8;

/// A Huffman string seen before: its encoded bytes, decoded length and first decoded bytes.
#[derive(Clone)]
struct Seen {
    key: Box<[u8]>,
    len: u32,
    head: [u8; HEAD],
}

/// One thread's memory of Huffman strings: decoded length and first bytes by encoded bytes.
pub struct Strings {
    slots: Vec<Option<Seen>>,
    scratch: Vec<u8>,
}

impl Default for Strings {
    fn default() -> Self {
        Strings {
            slots: vec![None; SLOTS],
            scratch: Vec::with_capacity(256),
        }
    }
}

impl Strings {
    /// A literal's decoded length and (up to) its first 8 bytes, zero-padded.
    fn get(&mut self, lit: Literal<'_>) -> Result<(u32, [u8; HEAD]), CompressionError> {
        let mut head = [0u8; HEAD];
        if !lit.huffman {
            let n = lit.bytes.len().min(HEAD);
            head[..n].copy_from_slice(&lit.bytes[..n]);
            return Ok((lit.bytes.len() as u32, head));
        }
        let slot = fnv(lit.bytes) as usize % SLOTS;
        if let Some(seen) = &self.slots[slot] {
            if *seen.key == *lit.bytes {
                return Ok((seen.len, seen.head));
            }
        }
        self.scratch.clear();
        httlib_huffman::decode(
            lit.bytes,
            &mut self.scratch,
            httlib_huffman::DecoderSpeed::FourBits,
        )
        .map_err(|_| CompressionError)?;
        let n = self.scratch.len().min(HEAD);
        head[..n].copy_from_slice(&self.scratch[..n]);
        let len = self.scratch.len() as u32;
        self.slots[slot] = Some(Seen {
            key: lit.bytes.into(),
            len,
            head,
        });
        Ok((len, head))
    }
}

impl Strings {
    /// A string literal's decoded length and (up to) its first 8 bytes, Huffman-coded or not:
    /// QPACK's literals (`crate::h3::qpack`) share this thread's memory of strings.
    pub(crate) fn head(
        &mut self,
        huffman: bool,
        bytes: &[u8],
    ) -> Result<(u32, [u8; HEAD]), CompressionError> {
        self.get(Literal { huffman, bytes })
    }

    /// A literal's whole decoded bytes (Huffman strings decoded each time: gRPC's content type
    /// only, which servers index after its first use).
    fn full<'a>(&'a mut self, lit: Literal<'a>) -> Result<&'a [u8], CompressionError> {
        if !lit.huffman {
            return Ok(lit.bytes);
        }
        self.scratch.clear();
        httlib_huffman::decode(
            lit.bytes,
            &mut self.scratch,
            httlib_huffman::DecoderSpeed::FourBits,
        )
        .map_err(|_| CompressionError)?;
        Ok(&self.scratch)
    }
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Encodes a request's header block: pseudo-headers first, then `headers` (names lowercased),
/// all from the static table or as literals without indexing, no Huffman.
pub fn encode_request(
    method: &str,
    scheme: &str,
    authority: &str,
    path: &str,
    headers: &[(String, String)],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    match method {
        "GET" => out.push(0x82),
        "POST" => out.push(0x83),
        m => field(&mut out, 2, m),
    }
    out.push(if scheme == "https" { 0x87 } else { 0x86 });
    match path {
        "/" => out.push(0x84),
        "/index.html" => out.push(0x85),
        p => field(&mut out, 4, p),
    }
    field(&mut out, 1, authority);
    for (name, value) in headers {
        let name = name.to_ascii_lowercase();
        match STATIC_NAMES.iter().position(|n| *n == name) {
            Some(i) => field(&mut out, i + 1, value),
            None => {
                out.push(0);
                string(&mut out, &name);
                string(&mut out, value);
            }
        }
    }
    out
}

/// A literal field without indexing, its name from static entry `index`.
fn field(out: &mut Vec<u8>, index: usize, value: &str) {
    put_int(out, 0, 4, index);
    string(out, value);
}

fn string(out: &mut Vec<u8>, s: &str) {
    put_int(out, 0, 7, s.len());
    out.extend_from_slice(s.as_bytes());
}

/// Appends an integer with an N-bit prefix after the `flags` bits.
fn put_int(out: &mut Vec<u8>, flags: u8, prefix: u32, mut v: usize) {
    let mask = (1usize << prefix) - 1;
    if v < mask {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | mask as u8);
    v -= mask;
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests;
