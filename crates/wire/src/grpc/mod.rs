//! gRPC over HTTP/2 (the "gRPC over HTTP2" protocol document), without sockets: the
//! length-prefixed message framing ([`frame`], [`Deframer`]), the status codes ([`Code`]) and the
//! status a response ends with (`grpc-status`, `grpc-message`: [`Status`]), and the
//! `grpc-timeout` header ([`timeout`]). The HTTP/2 streams underneath are the caller's.
//!
//! Hand-written: each is a few lines of the protocol, run on every call by the load generator,
//! and verify must see what a server sent exactly (a flag byte, a prefix longer than its
//! message), which a whole gRPC stack would hide.

mod status;

pub use status::{percent_decode, Code, Status, StatusError};

use std::time::Duration;

/// The bytes before every message: a compressed flag and a big-endian 32-bit length.
pub const PREFIX_LEN: usize = 5;

/// The media type of gRPC requests and responses (`application/grpc`, optionally `+proto`...).
pub const CONTENT_TYPE: &str = "application/grpc";

/// Appends `message` to `out` with its prefix (`compressed`: the flag a message encoded with
/// the call's `grpc-encoding` carries).
pub fn frame(message: &[u8], compressed: bool, out: &mut Vec<u8>) {
    let len = u32::try_from(message.len()).unwrap_or(u32::MAX);
    out.push(u8::from(compressed));
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(message);
}

/// `message` alone with its prefix.
pub fn framed(message: &[u8], compressed: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(PREFIX_LEN + message.len());
    frame(message, compressed, &mut out);
    out
}

/// One message taken out of a stream's DATA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The compressed flag of its prefix.
    pub compressed: bool,
    /// Its bytes, as sent (still compressed when the flag says so).
    pub data: Vec<u8>,
}

/// What is wrong with a stream's message framing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    /// A prefix's flag byte other than 0 or 1.
    #[error("message {index}: compressed flag {flag}, not 0 or 1")]
    Flag { index: usize, flag: u8 },
    /// A prefix announcing more than the limit.
    #[error("message {index}: its prefix says {len} bytes, above the limit of {limit}")]
    TooLong { index: usize, len: u64, limit: u64 },
    /// The stream ended inside a prefix or a message.
    #[error("the stream ended inside message {index}: {have} of {want} bytes")]
    Truncated {
        index: usize,
        have: usize,
        want: usize,
    },
}

/// Takes messages out of a stream's DATA as it arrives (a message may span DATA frames, and a
/// frame may hold several messages).
#[derive(Debug, Clone)]
pub struct Deframer {
    buf: Vec<u8>,
    limit: u64,
    index: usize,
}

impl Deframer {
    /// A deframer refusing messages longer than `limit` bytes.
    pub fn new(limit: u64) -> Deframer {
        Deframer {
            buf: Vec::new(),
            limit,
            index: 0,
        }
    }

    /// Messages seen so far.
    pub fn count(&self) -> usize {
        self.index
    }

    /// Adds `data` and returns the messages it completed.
    pub fn push(&mut self, data: &[u8]) -> Result<Vec<Message>, FramingError> {
        self.buf.extend_from_slice(data);
        let mut out = Vec::new();
        let mut at = 0;
        while self.buf.len() - at >= PREFIX_LEN {
            let head = &self.buf[at..at + PREFIX_LEN];
            let flag = head[0];
            if flag > 1 {
                return Err(FramingError::Flag {
                    index: self.index,
                    flag,
                });
            }
            let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]);
            if u64::from(len) > self.limit {
                return Err(FramingError::TooLong {
                    index: self.index,
                    len: u64::from(len),
                    limit: self.limit,
                });
            }
            let end = at + PREFIX_LEN + len as usize;
            if self.buf.len() < end {
                break;
            }
            out.push(Message {
                compressed: flag == 1,
                data: self.buf[at + PREFIX_LEN..end].to_vec(),
            });
            self.index += 1;
            at = end;
        }
        self.buf.drain(..at);
        Ok(out)
    }

    /// The stream ended: an error when bytes of a message are left over.
    pub fn finish(&self) -> Result<(), FramingError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let want = match self.buf.get(1..PREFIX_LEN) {
            Some(l) => PREFIX_LEN + u32::from_be_bytes([l[0], l[1], l[2], l[3]]) as usize,
            None => PREFIX_LEN,
        };
        Err(FramingError::Truncated {
            index: self.index,
            have: self.buf.len(),
            want,
        })
    }
}

/// `d` as a `grpc-timeout` value (at most 8 digits): in the coarsest unit that holds it exactly
/// (`1m` for a millisecond), else rounded up in the finest unit that fits.
pub fn timeout(d: Duration) -> String {
    const UNITS: [(u128, char); 6] = [
        (1, 'n'),
        (1_000, 'u'),
        (1_000_000, 'm'),
        (1_000_000_000, 'S'),
        (60_000_000_000, 'M'),
        (3_600_000_000_000, 'H'),
    ];
    let nanos = d.as_nanos();
    for (per, unit) in UNITS.into_iter().rev() {
        let (value, rest) = (nanos / per, nanos % per);
        if rest == 0 && value < 100_000_000 {
            return format!("{value}{unit}");
        }
    }
    for (per, unit) in UNITS {
        let value = nanos.div_ceil(per);
        if value < 100_000_000 {
            return format!("{value}{unit}");
        }
    }
    "99999999H".to_owned()
}

#[cfg(test)]
mod tests;
