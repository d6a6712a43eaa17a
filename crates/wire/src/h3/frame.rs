//! HTTP/3 frames (RFC 9114 §7): a type and a length as varints, then the payload. [`Frames`]
//! reads them from a stream's bytes as they arrive, in any split: DATA payloads are handed on
//! as they come (never copied), other known frames whole (their payloads are small: a header
//! section, SETTINGS, a GOAWAY), unknown and reserved types skipped as §9 asks.

use super::{varint, Code};

pub const DATA: u64 = 0x00;
pub const HEADERS: u64 = 0x01;
pub const CANCEL_PUSH: u64 = 0x03;
pub const SETTINGS: u64 = 0x04;
pub const PUSH_PROMISE: u64 = 0x05;
pub const GOAWAY: u64 = 0x07;
pub const MAX_PUSH_ID: u64 = 0x0d;

/// The largest frame the reader keeps whole (a header section, SETTINGS): more is
/// H3_EXCESSIVE_LOAD.
pub const MAX_WHOLE: u64 = 64 * 1024;

/// Appends a frame header: type and payload length.
pub fn put_header(out: &mut Vec<u8>, ty: u64, len: u64) {
    varint::put(out, ty);
    varint::put(out, len);
}

/// What [`Frames::feed`] hands on.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Part of a DATA frame's payload (a frame's parts come in order; an empty DATA frame
    /// gives one empty part).
    Data(&'a [u8]),
    /// A whole frame of another known type, its payload.
    Whole(u64, &'a [u8]),
}

/// Whether a frame of type `ty` is kept whole (known, not DATA).
fn kept(ty: u64) -> bool {
    matches!(
        ty,
        HEADERS | CANCEL_PUSH | SETTINGS | PUSH_PROMISE | GOAWAY | MAX_PUSH_ID
    )
}

/// Frame types of HTTP/2 that HTTP/3 reserves: receiving one is H3_FRAME_UNEXPECTED.
fn h2_only(ty: u64) -> bool {
    matches!(ty, 0x02 | 0x06 | 0x08 | 0x09)
}

/// The frame being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Between frames: `head` holds the start of the next header.
    Header,
    /// In a DATA payload, this much left.
    Data(u64),
    /// In a kept frame, this much left (its bytes gather in `whole`).
    Kept(u64, u64),
    /// In an unknown frame, this much left to skip.
    Skip(u64),
}

/// One stream's frame reader.
#[derive(Debug)]
pub struct Frames {
    at: At,
    head: [u8; 16],
    have: usize,
    whole: Vec<u8>,
}

impl Default for Frames {
    fn default() -> Self {
        Frames {
            at: At::Header,
            head: [0; 16],
            have: 0,
            whole: Vec::new(),
        }
    }
}

impl Frames {
    /// Ready for another stream (its buffers kept).
    pub fn reset(&mut self) {
        self.at = At::Header;
        self.have = 0;
        self.whole.clear();
    }

    /// Whether the bytes so far end on a frame boundary (a FIN elsewhere is H3_FRAME_ERROR).
    pub fn at_boundary(&self) -> bool {
        self.at == At::Header && self.have == 0
    }

    /// Reads `data`, handing each piece to `on` in order; stops at the first error (`on`'s,
    /// or H3_FRAME_UNEXPECTED for an HTTP/2-only type, H3_EXCESSIVE_LOAD for a kept frame
    /// over [`MAX_WHOLE`]).
    pub fn feed(
        &mut self,
        mut data: &[u8],
        mut on: impl FnMut(Piece<'_>) -> Result<(), Code>,
    ) -> Result<(), Code> {
        while !data.is_empty() {
            match self.at {
                At::Header => {
                    let Some(used) = self.header(data)? else {
                        return Ok(());
                    };
                    data = &data[used..];
                    if let At::Data(0) = self.at {
                        self.at = At::Header;
                        on(Piece::Data(&[]))?;
                    } else if let At::Kept(ty, 0) = self.at {
                        self.at = At::Header;
                        on(Piece::Whole(ty, &[]))?;
                    }
                }
                At::Data(left) => {
                    let n = left.min(data.len() as u64) as usize;
                    self.at = if n as u64 == left {
                        At::Header
                    } else {
                        At::Data(left - n as u64)
                    };
                    on(Piece::Data(&data[..n]))?;
                    data = &data[n..];
                }
                At::Kept(ty, left) => {
                    let n = left.min(data.len() as u64) as usize;
                    if n as u64 == left && self.whole.is_empty() {
                        // The whole payload is in this read: no copy.
                        self.at = At::Header;
                        on(Piece::Whole(ty, &data[..n]))?;
                    } else {
                        self.whole.extend_from_slice(&data[..n]);
                        if n as u64 == left {
                            self.at = At::Header;
                            let r = on(Piece::Whole(ty, &self.whole));
                            self.whole.clear();
                            r?;
                        } else {
                            self.at = At::Kept(ty, left - n as u64);
                        }
                    }
                    data = &data[n..];
                }
                At::Skip(left) => {
                    let n = left.min(data.len() as u64) as usize;
                    self.at = if n as u64 == left {
                        At::Header
                    } else {
                        At::Skip(left - n as u64)
                    };
                    data = &data[n..];
                }
            }
        }
        Ok(())
    }

    /// Reads a frame header from `head` and `data`; returns how much of `data` it took, None
    /// when `data` ended inside it (kept in `head`).
    fn header(&mut self, data: &[u8]) -> Result<Option<usize>, Code> {
        let take = (self.head.len() - self.have).min(data.len());
        self.head[self.have..self.have + take].copy_from_slice(&data[..take]);
        let buf = &self.head[..self.have + take];
        let parsed = varint::get(buf).and_then(|(ty, a)| {
            let (len, b) = varint::get(&buf[a..])?;
            Some((ty, len, a + b))
        });
        let Some((ty, len, n)) = parsed else {
            self.have += take;
            return Ok(None);
        };
        let used = n - self.have;
        self.have = 0;
        self.at = match ty {
            DATA => At::Data(len),
            t if kept(t) => {
                if len > MAX_WHOLE {
                    return Err(Code::EXCESSIVE_LOAD);
                }
                At::Kept(t, len)
            }
            t if h2_only(t) => return Err(Code::FRAME_UNEXPECTED),
            _ => At::Skip(len),
        };
        Ok(Some(used))
    }
}

/// Reads a SETTINGS payload: each identifier and value, in order (H3_FRAME_ERROR if it ends
/// inside a pair).
pub fn settings(payload: &[u8], mut each: impl FnMut(u64, u64)) -> Result<(), Code> {
    let mut at = 0;
    while at < payload.len() {
        let (id, a) = varint::get(&payload[at..]).ok_or(Code::FRAME_ERROR)?;
        let (v, b) = varint::get(&payload[at + a..]).ok_or(Code::FRAME_ERROR)?;
        at += a + b;
        each(id, v);
    }
    Ok(())
}

/// Reads a payload that is one varint (GOAWAY, CANCEL_PUSH, MAX_PUSH_ID).
pub fn one_varint(payload: &[u8]) -> Result<u64, Code> {
    match varint::get(payload) {
        Some((v, n)) if n == payload.len() => Ok(v),
        _ => Err(Code::FRAME_ERROR),
    }
}
