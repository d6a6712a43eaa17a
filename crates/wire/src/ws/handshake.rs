//! The opening handshake, client side (RFC 6455 §4.1): the upgrade request with a random
//! `Sec-WebSocket-Key`, and the check of the server's answer, failing by cause
//! ([`HandshakeError`]): the status, `Upgrade`, `Connection`, the `Sec-WebSocket-Accept` key
//! computed and compared, an extension or subprotocol the client did not offer.

use super::Rng;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use memchr::memmem;
use sha1::{Digest, Sha1};
use std::ops::Range;

/// The GUID RFC 6455 appends to the key before hashing.
pub const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// The largest response head accepted (a server's 101 is a few hundred bytes).
pub const MAX_HEAD: usize = 16 * 1024;

/// A `Sec-WebSocket-Key`: 16 random bytes, base64 (24 characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key([u8; 24]);

impl Key {
    /// The key of a 16-byte nonce.
    pub fn from_nonce(nonce: [u8; 16]) -> Key {
        let mut out = [0u8; 24];
        let n = STANDARD
            .encode_slice(nonce, &mut out)
            .expect("16 bytes are 24 in base64");
        debug_assert_eq!(n, 24);
        Key(out)
    }

    /// A fresh key from the connection's generator.
    pub fn random(rng: &mut Rng) -> Key {
        let mut nonce = [0u8; 16];
        nonce[..8].copy_from_slice(&rng.next_u64().to_ne_bytes());
        nonce[8..].copy_from_slice(&rng.next_u64().to_ne_bytes());
        Key::from_nonce(nonce)
    }

    /// The key as sent.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("base64 is ASCII")
    }

    /// The `Sec-WebSocket-Accept` a server must answer this key with.
    pub fn accept(&self) -> Accept {
        Accept::of(&self.0)
    }
}

/// A `Sec-WebSocket-Accept` value: base64(SHA-1(key + GUID)), 28 characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accept([u8; 28]);

impl Accept {
    /// The accept value for the key as sent (`key` is its base64 text, not the nonce).
    pub fn of(key: &[u8]) -> Accept {
        let mut h = Sha1::new();
        h.update(key);
        h.update(GUID);
        let digest = h.finalize();
        let mut out = [0u8; 28];
        STANDARD
            .encode_slice(digest.as_slice(), &mut out)
            .expect("20 bytes are 28 in base64");
        Accept(out)
    }

    /// The value as a server sends it.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("base64 is ASCII")
    }
}

/// Appends the upgrade request: `GET path`, `Host`, `Upgrade: websocket`, `Connection: Upgrade`,
/// the key, version 13, and `Sec-WebSocket-Extensions` only when `extensions` offers some.
pub fn write_upgrade_request(
    out: &mut Vec<u8>,
    host: &str,
    path: &str,
    key: &Key,
    extensions: Option<&str>,
) {
    let parts: [&[u8]; 7] = [
        b"GET ",
        path.as_bytes(),
        b" HTTP/1.1\r\nHost: ",
        host.as_bytes(),
        b"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ",
        &key.0,
        b"\r\nSec-WebSocket-Version: 13\r\n",
    ];
    for p in parts {
        out.extend_from_slice(p);
    }
    if let Some(ext) = extensions {
        out.extend_from_slice(b"Sec-WebSocket-Extensions: ");
        out.extend_from_slice(ext.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// Why a server's answer to the upgrade is not a WebSocket handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    #[error("a response head that is not HTTP/1.1")]
    Malformed,
    #[error("a response head over {MAX_HEAD} bytes")]
    HeadTooLarge,
    #[error("status {0} instead of 101")]
    Status(u16),
    #[error("no Upgrade: websocket")]
    MissingUpgrade,
    #[error("no Connection: Upgrade")]
    MissingConnection,
    #[error("no Sec-WebSocket-Accept")]
    MissingAccept,
    #[error("a wrong Sec-WebSocket-Accept")]
    WrongAccept,
    #[error("Sec-WebSocket-Extensions the client did not offer")]
    UnaskedExtension,
    #[error("a Sec-WebSocket-Protocol the client did not offer")]
    UnaskedProtocol,
}

impl HandshakeError {
    /// A short stable name, for counters (`status`, `missing accept`, `wrong accept`...).
    pub fn name(&self) -> &'static str {
        match self {
            HandshakeError::Malformed => "malformed",
            HandshakeError::HeadTooLarge => "head too large",
            HandshakeError::Status(_) => "status",
            HandshakeError::MissingUpgrade => "missing upgrade",
            HandshakeError::MissingConnection => "missing connection",
            HandshakeError::MissingAccept => "missing accept",
            HandshakeError::WrongAccept => "wrong accept",
            HandshakeError::UnaskedExtension => "unasked extension",
            HandshakeError::UnaskedProtocol => "unasked protocol",
        }
    }
}

/// A server's accepted upgrade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upgraded {
    /// The head's length, `\r\n\r\n` included: frames start right after it, possibly in the
    /// same read.
    pub head_len: usize,
    /// Where the `Sec-WebSocket-Extensions` value is in the buffer, when the server sent one
    /// (only possible when the client offered extensions).
    pub extensions: Option<Range<usize>>,
}

/// Parses the server's answer at the start of `buf`: `Ok(None)` until the head is complete, then
/// the upgrade or why it failed, checked in this order: status 101, `Upgrade: websocket`,
/// `Connection: Upgrade`, `Sec-WebSocket-Accept` equal to `accept`, no extension unless
/// `offered_extensions`, no subprotocol (the client never offers one).
pub fn parse_response(
    buf: &[u8],
    accept: &Accept,
    offered_extensions: bool,
) -> Result<Option<Upgraded>, HandshakeError> {
    let Some(end) = memmem::find(buf, b"\r\n\r\n") else {
        return if buf.len() > MAX_HEAD {
            Err(HandshakeError::HeadTooLarge)
        } else {
            Ok(None)
        };
    };
    if end > MAX_HEAD {
        return Err(HandshakeError::HeadTooLarge);
    }
    let mut lines = buf[..end].split(|&b| b == b'\n');
    let status = status_code(lines.next().unwrap_or_default())?;
    if status != 101 {
        return Err(HandshakeError::Status(status));
    }
    let mut seen = Seen::default();
    let mut at = lines_start(buf);
    for line in lines {
        let line_at = at;
        at += line.len() + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Err(HandshakeError::Malformed);
        };
        let v = trimmed(&line[colon + 1..]);
        let value = &line[colon + 1..][v.clone()];
        let at = line_at + colon + 1;
        seen.header(&line[..colon], value, at + v.start..at + v.end, accept);
    }
    seen.verdict(offered_extensions, end + 4)
}

/// What the headers said, as they were read.
#[derive(Default)]
struct Seen {
    upgrade: bool,
    connection: bool,
    accept: Option<bool>,
    extensions: Option<Range<usize>>,
    protocol: bool,
}

impl Seen {
    fn header(&mut self, name: &[u8], value: &[u8], at: Range<usize>, accept: &Accept) {
        let is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
        if is("upgrade") {
            self.upgrade |= has_token(value, b"websocket");
        } else if is("connection") {
            self.connection |= has_token(value, b"upgrade");
        } else if is("sec-websocket-accept") {
            self.accept = Some(self.accept.unwrap_or(true) && value == accept.0);
        } else if is("sec-websocket-extensions") {
            self.extensions = Some(at);
        } else if is("sec-websocket-protocol") {
            self.protocol = true;
        }
    }

    fn verdict(
        self,
        offered_extensions: bool,
        head_len: usize,
    ) -> Result<Option<Upgraded>, HandshakeError> {
        if !self.upgrade {
            return Err(HandshakeError::MissingUpgrade);
        }
        if !self.connection {
            return Err(HandshakeError::MissingConnection);
        }
        match self.accept {
            None => return Err(HandshakeError::MissingAccept),
            Some(false) => return Err(HandshakeError::WrongAccept),
            Some(true) => {}
        }
        if self.extensions.is_some() && !offered_extensions {
            return Err(HandshakeError::UnaskedExtension);
        }
        if self.protocol {
            return Err(HandshakeError::UnaskedProtocol);
        }
        Ok(Some(Upgraded {
            head_len,
            extensions: self.extensions,
        }))
    }
}

/// The status of `HTTP/1.1 NNN reason`.
fn status_code(line: &[u8]) -> Result<u16, HandshakeError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let rest = line
        .strip_prefix(b"HTTP/1.1 ")
        .ok_or(HandshakeError::Malformed)?;
    match rest.get(..3) {
        Some(d) if d.iter().all(u8::is_ascii_digit) && matches!(rest.get(3), None | Some(b' ')) => {
            Ok(d.iter().fold(0u16, |n, &b| n * 10 + u16::from(b - b'0')))
        }
        _ => Err(HandshakeError::Malformed),
    }
}

/// Where the header lines start (after the status line's `\n`).
fn lines_start(buf: &[u8]) -> usize {
    buf.iter()
        .position(|&b| b == b'\n')
        .map_or(buf.len(), |p| p + 1)
}

/// The range of `v` without its leading and trailing whitespace.
fn trimmed(v: &[u8]) -> Range<usize> {
    let start = v
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |p| p + 1);
    start..end
}

fn trim(v: &[u8]) -> &[u8] {
    &v[trimmed(v)]
}

/// True when the comma-separated `value` has `token` (case-insensitive).
fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| trim(t).eq_ignore_ascii_case(token))
}

#[cfg(test)]
#[path = "handshake_tests.rs"]
mod tests;
