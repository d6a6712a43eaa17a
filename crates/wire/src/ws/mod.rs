//! WebSocket (RFC 6455), client side, without sockets: the upgrade request and the check of the
//! server's answer ([`handshake`]), client frames masked and encoded into a caller's buffer
//! ([`frame`]), and an incremental decoder of the frames a server sends ([`decode`]) that names
//! every protocol error. verify (`serverbench-contract`) and the engine's load loop share it; the
//! decoder also runs in the server role, for the deliberately wrong test servers.
//!
//! Hand-written on purpose, like [`crate::http`]: framing is the hot path of a message benchmark
//! (every message is one frame each way), and the load generator must see the exact bytes a
//! server sends (a masked server frame, RSV bits, a frame split or merged across reads, a close
//! code) to count them. A general crate (tungstenite, fastwebsockets) owns the socket or the
//! buffers, allocates a message per read, unmasks or validates on its own terms and hides the
//! framing we must judge. Here masking XORs a `u64` at a time with a mask per frame from a
//! per-connection generator ([`Rng`], wyrand), encoding appends to a `Vec` the caller keeps, and
//! decoding returns ranges into the caller's read buffer: no allocation per message.
//!
//! The handshake's SHA-1 and base64 come from the kept `sha1` and `base64` crates (once per
//! connection, not on the message path).

pub mod decode;
pub mod frame;
pub mod handshake;

pub use decode::{Decoded, Decoder, Frame, ProtocolError, Role, Utf8Validator};
pub use frame::{apply_mask, apply_mask_at, encode, encode_client, encode_close, Head};
pub use handshake::{
    parse_response, write_upgrade_request, Accept, HandshakeError, Key, Upgraded, MAX_HEAD,
};

/// The largest frame, and message, the decoder accepts by default: 16 MiB.
pub const MAX_MESSAGE: usize = 16 << 20;

/// The largest payload of a control frame (close, ping, pong).
pub const MAX_CONTROL_PAYLOAD: usize = 125;

/// A frame's opcode (RFC 6455 §5.2); the reserved ones are a [`ProtocolError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    /// The next fragment of a text or binary message.
    Continuation = 0x0,
    Text = 0x1,
    Binary = 0x2,
    Close = 0x8,
    Ping = 0x9,
    Pong = 0xA,
}

impl Opcode {
    /// The opcode of the low 4 bits, `None` for a reserved one (3–7, B–F).
    pub fn from_u8(v: u8) -> Option<Opcode> {
        Some(match v {
            0x0 => Opcode::Continuation,
            0x1 => Opcode::Text,
            0x2 => Opcode::Binary,
            0x8 => Opcode::Close,
            0x9 => Opcode::Ping,
            0xA => Opcode::Pong,
            _ => return None,
        })
    }

    /// True for close, ping and pong: at most 125 bytes, never fragmented.
    pub fn is_control(self) -> bool {
        (self as u8) & 0x8 != 0
    }

    /// Its name, for messages (`text`, `binary`, `close`...).
    pub fn name(self) -> &'static str {
        match self {
            Opcode::Continuation => "continuation",
            Opcode::Text => "text",
            Opcode::Binary => "binary",
            Opcode::Close => "close",
            Opcode::Ping => "ping",
            Opcode::Pong => "pong",
        }
    }
}

impl std::fmt::Display for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A close frame's status codes that serverbench sends or expects (RFC 6455 §7.4.1).
pub mod close {
    /// Normal closure.
    pub const NORMAL: u16 = 1000;
    /// The endpoint is going away.
    pub const GOING_AWAY: u16 = 1001;
    /// A protocol error (what a server answers to an unmasked client frame).
    pub const PROTOCOL_ERROR: u16 = 1002;
    /// A close frame without a code, as the receiving side names it (never sent).
    pub const NO_STATUS: u16 = 1005;
    /// The connection ended without a close frame, as the receiving side names it (never sent).
    pub const ABNORMAL: u16 = 1006;
    /// A message too big to process.
    pub const TOO_BIG: u16 = 1009;
    /// The server met a condition that kept it from serving (an internal error).
    pub const INTERNAL_ERROR: u16 = 1011;

    /// True when `code` may appear in a close frame on the wire: 1000–1003, 1007–1014 and
    /// 3000–4999 (1004–1006 and 1015 are reserved or must never be sent).
    pub fn is_valid(code: u16) -> bool {
        matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
    }
}

/// A fast per-connection generator (wyrand) for masks and handshake keys. Not cryptographic:
/// RFC 6455 asks masks to be unpredictable to intermediaries, which a per-connection seed from
/// [`Rng::from_os`] gives a benchmark; one multiply per mask keeps it off the profile.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (the same seed, the same masks: for tests).
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator seeded from the OS's randomness (std's `RandomState`, whose keys the OS gives
    /// once per thread), mixed with `salt` (e.g. a connection index) so each connection differs.
    pub fn from_os(salt: u64) -> Rng {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(salt);
        Rng(h.finish())
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xe703_7ed1_a0b4_28db);
        ((t >> 64) as u64) ^ (t as u64)
    }

    /// A frame's masking key.
    #[inline]
    pub fn mask(&mut self) -> [u8; 4] {
        (self.next_u64() as u32).to_ne_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_round_trip_and_reserved_ones_are_none() {
        for op in [0u8, 1, 2, 8, 9, 0xA] {
            assert_eq!(Opcode::from_u8(op).map(|o| o as u8), Some(op));
        }
        for op in [3u8, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF] {
            assert_eq!(Opcode::from_u8(op), None, "{op:x}");
        }
        assert!(Opcode::Ping.is_control() && !Opcode::Binary.is_control());
    }

    #[test]
    fn close_codes_reserved_by_the_rfc_are_invalid_on_the_wire() {
        for ok in [1000, 1001, 1002, 1003, 1007, 1011, 3000, 4999] {
            assert!(close::is_valid(ok), "{ok}");
        }
        for bad in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000] {
            assert!(!close::is_valid(bad), "{bad}");
        }
    }

    #[test]
    fn masks_from_one_seed_repeat_and_from_two_differ() {
        let (mut a, mut b, mut c) = (Rng::new(7), Rng::new(7), Rng::new(8));
        let xs: Vec<[u8; 4]> = (0..4).map(|_| a.mask()).collect();
        let ys: Vec<[u8; 4]> = (0..4).map(|_| b.mask()).collect();
        let zs: Vec<[u8; 4]> = (0..4).map(|_| c.mask()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
        assert_ne!(xs[0], xs[1]);
        assert_ne!(Rng::from_os(1).next_u64(), Rng::from_os(1).next_u64());
    }
}
