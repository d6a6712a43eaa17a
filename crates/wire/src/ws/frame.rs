//! Frames on the wire (RFC 6455 §5.2): the header, the payload masked a `u64` at a time, all
//! appended to a buffer the caller keeps (no allocation once it has grown to the message size).
//!
//! The encoder writes what it is told, including frames a client must not send (unmasked, RSV
//! bits set, a control frame over 125 bytes, a reserved opcode in [`Head::raw_opcode`]): verify
//! and its deliberately wrong test servers need them.

use super::{Opcode, Rng};

/// A frame's header as the encoder writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// FIN: the last fragment of its message.
    pub fin: bool,
    /// RSV1..3 in the low three bits (`0b100` = RSV1); 0 unless an extension was negotiated.
    pub rsv: u8,
    /// The opcode's 4 bits, as written (any value: reserved ones for the wrong test servers).
    pub raw_opcode: u8,
    /// The masking key: `Some` for every client frame, `None` for a server's.
    pub mask: Option<[u8; 4]>,
}

impl Head {
    /// A client frame: masked with `mask`, no RSV bits.
    pub fn client(opcode: Opcode, fin: bool, mask: [u8; 4]) -> Head {
        Head {
            fin,
            rsv: 0,
            raw_opcode: opcode as u8,
            mask: Some(mask),
        }
    }

    /// A server frame: unmasked, no RSV bits.
    pub fn server(opcode: Opcode, fin: bool) -> Head {
        Head {
            fin,
            rsv: 0,
            raw_opcode: opcode as u8,
            mask: None,
        }
    }

    /// The header's length for a payload of `len` bytes: 2, +2 or +8 for the length, +4 masked.
    pub fn len(&self, len: usize) -> usize {
        let ext = match len {
            0..=125 => 0,
            126..=0xFFFF => 2,
            _ => 8,
        };
        2 + ext + if self.mask.is_some() { 4 } else { 0 }
    }

    /// Appends the header of a frame whose payload is `len` bytes (the minimal length encoding).
    pub fn write(&self, out: &mut Vec<u8>, len: usize) {
        let b0 = (u8::from(self.fin) << 7) | ((self.rsv & 0x7) << 4) | (self.raw_opcode & 0xF);
        let m = if self.mask.is_some() { 0x80 } else { 0 };
        match len {
            0..=125 => out.extend_from_slice(&[b0, m | len as u8]),
            126..=0xFFFF => {
                out.extend_from_slice(&[b0, m | 126]);
                out.extend_from_slice(&(len as u16).to_be_bytes());
            }
            _ => {
                out.extend_from_slice(&[b0, m | 127]);
                out.extend_from_slice(&(len as u64).to_be_bytes());
            }
        }
        if let Some(mask) = self.mask {
            out.extend_from_slice(&mask);
        }
    }
}

/// Appends one frame: `head`, then `payload`, masked in place when `head` has a mask. Grows
/// `out` once (reserve) and copies the payload once.
pub fn encode(out: &mut Vec<u8>, head: Head, payload: &[u8]) {
    out.reserve(head.len(payload.len()) + payload.len());
    head.write(out, payload.len());
    let start = out.len();
    out.extend_from_slice(payload);
    if let Some(mask) = head.mask {
        apply_mask(&mut out[start..], mask);
    }
}

/// Appends one client frame masked with the next mask of the connection's `rng`.
#[inline]
pub fn encode_client(out: &mut Vec<u8>, opcode: Opcode, fin: bool, payload: &[u8], rng: &mut Rng) {
    encode(out, Head::client(opcode, fin, rng.mask()), payload);
}

/// Appends a close frame: `code` (big-endian) and `reason`, or an empty payload when `code` is
/// `None`; masked when `mask` is given (a client's close).
pub fn encode_close(out: &mut Vec<u8>, code: Option<u16>, reason: &[u8], mask: Option<[u8; 4]>) {
    let head = Head {
        fin: true,
        rsv: 0,
        raw_opcode: Opcode::Close as u8,
        mask,
    };
    let len = if code.is_some() { 2 + reason.len() } else { 0 };
    out.reserve(head.len(len) + len);
    head.write(out, len);
    let start = out.len();
    if let Some(code) = code {
        out.extend_from_slice(&code.to_be_bytes());
        out.extend_from_slice(reason);
    }
    if let Some(mask) = mask {
        apply_mask(&mut out[start..], mask);
    }
}

/// XORs `data` with `mask` (masking and unmasking are the same), starting at the mask's first
/// byte.
#[inline]
pub fn apply_mask(data: &mut [u8], mask: [u8; 4]) {
    apply_mask_at(data, mask, 0);
}

/// XORs `data` with `mask` as if `data` started `offset` bytes into the payload: for a payload
/// unmasked in pieces as it arrives. Eight bytes at a time as one `u64`, the tail byte by byte.
pub fn apply_mask_at(data: &mut [u8], mask: [u8; 4], offset: usize) {
    let m = mask;
    let p = offset & 3;
    let rot = [m[p], m[(p + 1) & 3], m[(p + 2) & 3], m[(p + 3) & 3]];
    let word = u64::from_ne_bytes([
        rot[0], rot[1], rot[2], rot[3], rot[0], rot[1], rot[2], rot[3],
    ]);
    let mut chunks = data.chunks_exact_mut(8);
    for c in &mut chunks {
        let v = u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) ^ word;
        c.copy_from_slice(&v.to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= rot[i & 3];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6455 §5.7's mask.
    const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

    #[test]
    fn the_rfc_examples_encode_to_their_bytes() {
        let mut out = Vec::new();
        encode(&mut out, Head::server(Opcode::Text, true), b"Hello");
        assert_eq!(out, [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]);
        out.clear();
        encode(&mut out, Head::client(Opcode::Text, true, MASK), b"Hello");
        let masked = [
            0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
        ];
        assert_eq!(out, masked);
        out.clear();
        encode(&mut out, Head::server(Opcode::Text, false), b"Hel");
        encode(&mut out, Head::server(Opcode::Continuation, true), b"lo");
        let fragmented = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f];
        assert_eq!(out, fragmented);
    }

    #[test]
    fn lengths_use_the_minimal_encoding_at_each_boundary() {
        for (len, head) in [
            (125usize, 2usize),
            (126, 4),
            (65535, 4),
            (65536, 10),
            (70000, 10),
        ] {
            let mut out = Vec::new();
            encode(
                &mut out,
                Head::server(Opcode::Binary, true),
                &vec![0u8; len],
            );
            assert_eq!(out.len(), head + len, "{len}");
            assert_eq!(Head::server(Opcode::Binary, true).len(len), head);
        }
        // RFC 6455 §5.7: 256 bytes and 64 KiB binary, unmasked.
        let mut out = Vec::new();
        encode(&mut out, Head::server(Opcode::Binary, true), &[0; 256]);
        assert_eq!(out[..4], [0x82, 0x7E, 0x01, 0x00]);
        out.clear();
        encode(&mut out, Head::server(Opcode::Binary, true), &[0; 65536]);
        assert_eq!(out[..10], [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0]);
    }

    #[test]
    fn masking_a_word_at_a_time_matches_the_bytewise_definition_at_every_offset() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for offset in 0..8 {
            for len in [0, 1, 3, 7, 8, 9, 15, 16, 17, 999] {
                let mut fast = data[..len].to_vec();
                apply_mask_at(&mut fast, MASK, offset);
                let slow: Vec<u8> = data[..len]
                    .iter()
                    .enumerate()
                    .map(|(i, b)| b ^ MASK[(i + offset) % 4])
                    .collect();
                assert_eq!(fast, slow, "offset {offset} len {len}");
            }
        }
    }

    #[test]
    fn a_close_frame_carries_its_code_big_endian_and_the_reason() {
        let mut out = Vec::new();
        encode_close(&mut out, Some(1000), b"bye", None);
        assert_eq!(out, [0x88, 0x05, 0x03, 0xE8, b'b', b'y', b'e']);
        out.clear();
        encode_close(&mut out, None, b"", Some(MASK));
        assert_eq!(out, [0x88, 0x80, 0x37, 0xfa, 0x21, 0x3d]);
        out.clear();
        encode_close(&mut out, Some(1002), b"", Some(MASK));
        let mut payload = out[6..].to_vec();
        apply_mask(&mut payload, MASK);
        assert_eq!(payload, 1002u16.to_be_bytes());
    }

    #[test]
    fn encoding_appends_without_touching_what_the_buffer_held() {
        let mut out = b"prefix".to_vec();
        let mut rng = Rng::new(1);
        encode_client(&mut out, Opcode::Binary, true, b"abc", &mut rng);
        assert_eq!(&out[..6], b"prefix");
        assert_eq!(out[6..8], [0x82, 0x83]);
        let mask: [u8; 4] = out[8..12].try_into().unwrap();
        let mut payload = out[12..].to_vec();
        apply_mask(&mut payload, mask);
        assert_eq!(payload, b"abc");
    }
}
