//! The incremental frame decoder: frames split across reads or merged in one, each returned
//! whole as a range of the caller's buffer, every protocol error named ([`ProtocolError`]) as
//! soon as the header shows it (a 16 MiB frame is refused before its payload is read).
//!
//! The caller keeps a read buffer, calls [`Decoder::decode`] on the unconsumed bytes (which must
//! start at a frame boundary), and on [`Decoded::Frame`] consumes `frame.len()` bytes before the
//! next call; on [`Decoded::Incomplete`] it reads more (at least `needed` bytes in total).

use super::{close, Opcode, MAX_CONTROL_PAYLOAD, MAX_MESSAGE};
use std::ops::Range;

/// Which side's frames are decoded: a client decodes a server's (which must be unmasked), a
/// server a client's (which must be masked; the decoder unmasks them in place).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

/// What a peer did against RFC 6455; the connection must be failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("a masked frame from the server")]
    MaskedFrame,
    #[error("an unmasked frame from the client")]
    UnmaskedFrame,
    #[error("RSV bits {0:03b} set without an extension that defines them")]
    ReservedBits(u8),
    #[error("reserved opcode 0x{0:X}")]
    ReservedOpcode(u8),
    #[error("a fragmented {0} frame (control frames have FIN set)")]
    FragmentedControl(Opcode),
    #[error("a {opcode} frame of {len} bytes (control frames carry at most 125)")]
    ControlTooLong { opcode: Opcode, len: u64 },
    #[error("a length of {0} in a longer encoding than needed")]
    NonMinimalLength(u64),
    #[error("a frame or message of {len} bytes, over the maximum of {max}")]
    TooLarge { len: u64, max: usize },
    #[error("a continuation frame outside a fragmented message")]
    UnexpectedContinuation,
    #[error("a new {0} frame inside a fragmented message (a continuation was due)")]
    ExpectedContinuation(Opcode),
    #[error("a close frame with a 1-byte payload")]
    CloseTooShort,
    #[error("close code {0}, which must not be sent")]
    BadCloseCode(u16),
    #[error("a text message or close reason that is not UTF-8")]
    InvalidUtf8,
}

impl ProtocolError {
    /// A short stable name, for counters and one-line reports (`masked frame`, `bad opcode`...).
    pub fn name(&self) -> &'static str {
        match self {
            ProtocolError::MaskedFrame => "masked frame",
            ProtocolError::UnmaskedFrame => "unmasked frame",
            ProtocolError::ReservedBits(_) => "RSV bits",
            ProtocolError::ReservedOpcode(_) => "bad opcode",
            ProtocolError::FragmentedControl(_) => "fragmented control frame",
            ProtocolError::ControlTooLong { .. } => "control frame over 125 bytes",
            ProtocolError::NonMinimalLength(_) => "non-minimal length",
            ProtocolError::TooLarge { .. } => "frame too large",
            ProtocolError::UnexpectedContinuation => "unexpected continuation",
            ProtocolError::ExpectedContinuation(_) => "continuation expected",
            ProtocolError::CloseTooShort => "1-byte close",
            ProtocolError::BadCloseCode(_) => "bad close code",
            ProtocolError::InvalidUtf8 => "invalid UTF-8",
        }
    }

    /// The close code to fail the connection with: 1007 for bad UTF-8, 1009 for too large, 1002
    /// for the rest.
    pub fn close_code(&self) -> u16 {
        match self {
            ProtocolError::InvalidUtf8 => 1007,
            ProtocolError::TooLarge { .. } => close::TOO_BIG,
            _ => close::PROTOCOL_ERROR,
        }
    }
}

/// One complete frame; its ranges index the buffer given to [`Decoder::decode`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub fin: bool,
    /// RSV1..3 in the low three bits (only those the decoder allows can be set).
    pub rsv: u8,
    pub opcode: Opcode,
    /// The masking key it carried (server role); its payload is already unmasked in the buffer.
    pub mask: Option<[u8; 4]>,
    /// Where the payload is; `payload.end` is the frame's whole length.
    pub payload: Range<usize>,
}

impl Frame {
    /// The bytes the frame takes in the buffer, header included: consume these.
    pub fn len(&self) -> usize {
        self.payload.end
    }

    /// Always false: a frame has at least its 2-byte header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Its payload in `buf` (the buffer it was decoded from).
    pub fn payload<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        &buf[self.payload.clone()]
    }

    /// A close frame's code, `None` for another frame or a close without a code.
    pub fn close_code(&self, buf: &[u8]) -> Option<u16> {
        let p = self.payload(buf);
        (self.opcode == Opcode::Close && p.len() >= 2).then(|| u16::from_be_bytes([p[0], p[1]]))
    }
}

/// What [`Decoder::decode`] found at the start of the buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    Frame(Frame),
    /// Not a whole frame yet: the buffer must hold at least `needed` bytes (the header's size
    /// until the header is in, then the whole frame's).
    Incomplete {
        needed: usize,
    },
}

/// The decoder of one connection: the role, the limits, and the fragmented message in progress.
#[derive(Debug, Clone)]
pub struct Decoder {
    role: Role,
    max: usize,
    allowed_rsv: u8,
    check_utf8: bool,
    /// The opcode of the fragmented message in progress, and its bytes so far.
    message: Option<(Opcode, usize)>,
    utf8: Utf8Validator,
}

impl Decoder {
    /// A decoder for `role`: frames and messages up to [`MAX_MESSAGE`], no RSV bits, text and
    /// close reasons checked as UTF-8.
    pub fn new(role: Role) -> Decoder {
        Decoder {
            role,
            max: MAX_MESSAGE,
            allowed_rsv: 0,
            check_utf8: true,
            message: None,
            utf8: Utf8Validator::default(),
        }
    }

    /// The same decoder with another maximum frame and message size.
    pub fn with_max(mut self, max: usize) -> Decoder {
        self.max = max;
        self
    }

    /// The same decoder allowing the RSV bits an extension negotiated (`0b100`: RSV1, for
    /// permessage-deflate).
    pub fn with_rsv(mut self, allowed: u8) -> Decoder {
        self.allowed_rsv = allowed & 0x7;
        self
    }

    /// The same decoder with the UTF-8 check of text on or off (off when the caller compares
    /// every byte anyway, as an echo check does).
    pub fn with_utf8_check(mut self, on: bool) -> Decoder {
        self.check_utf8 = on;
        self
    }

    /// The opcode of the fragmented message in progress (its first frame's), if any.
    pub fn in_message(&self) -> Option<Opcode> {
        self.message.map(|(op, _)| op)
    }

    /// Decodes the frame at the start of `buf`. A returned frame counts as consumed: the next
    /// call must start after it. In the server role its payload is unmasked in place.
    pub fn decode(&mut self, buf: &mut [u8]) -> Result<Decoded, ProtocolError> {
        let Some(&[b0, b1]) = buf.get(..2) else {
            return Ok(Decoded::Incomplete { needed: 2 });
        };
        let (fin, rsv, masked) = (b0 & 0x80 != 0, (b0 >> 4) & 0x7, b1 & 0x80 != 0);
        let opcode = self.check_first_bytes(fin, rsv, b0 & 0xF, masked)?;
        let ext = match b1 & 0x7F {
            126 => 2,
            127 => 8,
            _ => 0,
        };
        let header = 2 + ext + if masked { 4 } else { 0 };
        if buf.len() < header {
            return Ok(Decoded::Incomplete { needed: header });
        }
        let len = payload_len(b1 & 0x7F, &buf[2..2 + ext])?;
        self.check_len(opcode, len)?;
        let total = header + len as usize;
        if buf.len() < total {
            return Ok(Decoded::Incomplete { needed: total });
        }
        let mask = masked.then(|| {
            [
                buf[header - 4],
                buf[header - 3],
                buf[header - 2],
                buf[header - 1],
            ]
        });
        if let Some(m) = mask {
            super::apply_mask(&mut buf[header..total], m);
        }
        let frame = Frame {
            fin,
            rsv,
            opcode,
            mask,
            payload: header..total,
        };
        self.check_payload(&frame, frame.payload(buf))?;
        Ok(Decoded::Frame(frame))
    }

    /// The checks of the first two bytes: RSV, opcode, masking, control-frame FIN, continuation.
    fn check_first_bytes(
        &self,
        fin: bool,
        rsv: u8,
        raw: u8,
        masked: bool,
    ) -> Result<Opcode, ProtocolError> {
        if rsv & !self.allowed_rsv != 0 {
            return Err(ProtocolError::ReservedBits(rsv));
        }
        let opcode = Opcode::from_u8(raw).ok_or(ProtocolError::ReservedOpcode(raw))?;
        match (self.role, masked) {
            (Role::Client, true) => return Err(ProtocolError::MaskedFrame),
            (Role::Server, false) => return Err(ProtocolError::UnmaskedFrame),
            _ => {}
        }
        if opcode.is_control() && !fin {
            return Err(ProtocolError::FragmentedControl(opcode));
        }
        match (opcode, self.message) {
            (Opcode::Continuation, None) => Err(ProtocolError::UnexpectedContinuation),
            (Opcode::Text | Opcode::Binary, Some(_)) => {
                Err(ProtocolError::ExpectedContinuation(opcode))
            }
            _ => Ok(opcode),
        }
    }

    /// The length's limits: 125 for control frames, the maximum for a frame and its message.
    fn check_len(&self, opcode: Opcode, len: u64) -> Result<(), ProtocolError> {
        if opcode.is_control() && len > MAX_CONTROL_PAYLOAD as u64 {
            return Err(ProtocolError::ControlTooLong { opcode, len });
        }
        let so_far = match (opcode, self.message) {
            (Opcode::Continuation, Some((_, n))) => n as u64,
            _ => 0,
        };
        if so_far + len > self.max as u64 {
            return Err(ProtocolError::TooLarge {
                len: so_far + len,
                max: self.max,
            });
        }
        Ok(())
    }

    /// The checks of a whole frame's payload (close code, UTF-8), then the message state.
    fn check_payload(&mut self, frame: &Frame, payload: &[u8]) -> Result<(), ProtocolError> {
        let text = match (frame.opcode, self.message) {
            (Opcode::Close, _) => return self.check_close(payload),
            (Opcode::Ping | Opcode::Pong, _) => return Ok(()),
            (Opcode::Text, _) | (Opcode::Continuation, Some((Opcode::Text, _))) => true,
            _ => false,
        };
        if text && self.check_utf8 {
            self.utf8.feed(payload, frame.fin)?;
        }
        self.message = match (frame.fin, frame.opcode, self.message) {
            (true, _, _) => None,
            (false, Opcode::Continuation, Some((op, n))) => Some((op, n + payload.len())),
            (false, op, _) => Some((op, payload.len())),
        };
        Ok(())
    }

    fn check_close(&self, payload: &[u8]) -> Result<(), ProtocolError> {
        match payload {
            [] => Ok(()),
            [_] => Err(ProtocolError::CloseTooShort),
            [a, b, reason @ ..] => {
                let code = u16::from_be_bytes([*a, *b]);
                if !close::is_valid(code) {
                    return Err(ProtocolError::BadCloseCode(code));
                }
                if self.check_utf8 && std::str::from_utf8(reason).is_err() {
                    return Err(ProtocolError::InvalidUtf8);
                }
                Ok(())
            }
        }
    }
}

/// The payload length from the 7-bit field and its extension (2 or 8 bytes), in the minimal
/// encoding RFC 6455 requires; a 64-bit length with the top bit set is too large.
fn payload_len(len7: u8, ext: &[u8]) -> Result<u64, ProtocolError> {
    match len7 {
        126 => {
            let n = u64::from(u16::from_be_bytes([ext[0], ext[1]]));
            if n < 126 {
                return Err(ProtocolError::NonMinimalLength(n));
            }
            Ok(n)
        }
        127 => {
            let mut b = [0u8; 8];
            b.copy_from_slice(ext);
            let n = u64::from_be_bytes(b);
            if n >> 63 != 0 {
                return Err(ProtocolError::TooLarge {
                    len: n,
                    max: MAX_MESSAGE,
                });
            }
            if n <= 0xFFFF {
                return Err(ProtocolError::NonMinimalLength(n));
            }
            Ok(n)
        }
        n => Ok(u64::from(n)),
    }
}

/// UTF-8 checked fragment by fragment: a code point may be split between two fragments, so up
/// to 3 bytes of an unfinished one are carried to the next.
#[derive(Debug, Clone, Default)]
pub struct Utf8Validator {
    pending: [u8; 4],
    len: usize,
}

impl Utf8Validator {
    /// Checks the next fragment; `fin` says it is the last, where nothing may be left unfinished.
    /// After an error, or a `fin`, it starts over.
    pub fn feed(&mut self, mut data: &[u8], fin: bool) -> Result<(), ProtocolError> {
        let r = self.feed_inner(&mut data, fin);
        if r.is_err() || fin {
            self.len = 0;
        }
        r
    }

    fn feed_inner(&mut self, data: &mut &[u8], fin: bool) -> Result<(), ProtocolError> {
        // Finish the code point the last fragment left open, one byte at a time.
        while self.len > 0 {
            let Some((&b, rest)) = data.split_first() else {
                return if fin {
                    Err(ProtocolError::InvalidUtf8)
                } else {
                    Ok(())
                };
            };
            self.pending[self.len] = b;
            self.len += 1;
            *data = rest;
            match std::str::from_utf8(&self.pending[..self.len]) {
                Ok(_) => self.len = 0,
                Err(e) if e.error_len().is_some() || self.len == 4 => {
                    return Err(ProtocolError::InvalidUtf8)
                }
                Err(_) => {}
            }
        }
        match std::str::from_utf8(data) {
            Ok(_) => Ok(()),
            Err(e) if e.error_len().is_none() && !fin => {
                let tail = &data[e.valid_up_to()..];
                self.pending[..tail.len()].copy_from_slice(tail);
                self.len = tail.len();
                Ok(())
            }
            Err(_) => Err(ProtocolError::InvalidUtf8),
        }
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
