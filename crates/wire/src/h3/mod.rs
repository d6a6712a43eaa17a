//! HTTP/3 (RFC 9114) and QPACK (RFC 9204) for a load generator, without QUIC: the bytes a
//! client writes on its streams and what it reads from the server's, over any QUIC stack that
//! hands streams' bytes in and takes them out (the engine drives quinn-proto).
//!
//! Hand-written, as HTTP/2 is (`crate::h2`), because the engine must see exact bytes per
//! response with no allocation per request and no async runtime: the `h3` crate is async over
//! its own QUIC trait and builds an `http::Response` per answer. What is here:
//!
//! - [`varint`]: QUIC variable-length integers (RFC 9000 §16).
//! - [`frame`]: the frames (DATA, HEADERS, SETTINGS, GOAWAY; CANCEL_PUSH, MAX_PUSH_ID and
//!   PUSH_PROMISE refused where they may not be; unknown and reserved types skipped), read
//!   incrementally from a stream's bytes as they arrive.
//! - [`qpack`]: requests encoded once per URL from the static table and literals (no Huffman,
//!   no dynamic table), responses decoded for their `:status`: static-table indexed and
//!   name-referenced fields, literals (Huffman strings decoded by the HTTP/2 codec's cached
//!   decoder, [`crate::h2::Strings`]), an encoded field section prefix whose Required Insert
//!   Count is 0. The client's SETTINGS give QPACK_MAX_TABLE_CAPACITY 0 and
//!   QPACK_BLOCKED_STREAMS 0, so a server may not use its dynamic table: a reference to it is
//!   QPACK_DECOMPRESSION_FAILED.
//! - [`stream`]: a response read from its request stream ([`stream::ResponseReader`]: status,
//!   body length and `--verify` hash, wire bytes) and the server's unidirectional streams
//!   ([`stream::UniReader`]: its control stream's SETTINGS and GOAWAY; QPACK streams drained).
//! - [`Code`]: HTTP/3 and QPACK error codes with their names.

pub mod frame;
pub mod qpack;
pub mod stream;

#[cfg(test)]
mod tests;

pub use qpack::Request;
pub use stream::{ResponseReader, UniEvent, UniReader};

/// The ALPN token of HTTP/3.
pub const ALPN: &[u8] = b"h3";

/// Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2).
pub mod stream_type {
    pub const CONTROL: u64 = 0x00;
    pub const PUSH: u64 = 0x01;
    pub const QPACK_ENCODER: u64 = 0x02;
    pub const QPACK_DECODER: u64 = 0x03;
}

/// SETTINGS identifiers the client reads or sends.
pub mod setting {
    pub const QPACK_MAX_TABLE_CAPACITY: u64 = 0x01;
    pub const MAX_FIELD_SECTION_SIZE: u64 = 0x06;
    pub const QPACK_BLOCKED_STREAMS: u64 = 0x07;
}

/// An HTTP/3 or QPACK error code (RFC 9114 §8.1, RFC 9204 §6), as carried by a
/// CONNECTION_CLOSE of the application, RESET_STREAM or STOP_SENDING.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Code(pub u64);

impl Code {
    pub const NO_ERROR: Code = Code(0x100);
    pub const GENERAL_PROTOCOL_ERROR: Code = Code(0x101);
    pub const INTERNAL_ERROR: Code = Code(0x102);
    pub const STREAM_CREATION_ERROR: Code = Code(0x103);
    pub const CLOSED_CRITICAL_STREAM: Code = Code(0x104);
    pub const FRAME_UNEXPECTED: Code = Code(0x105);
    pub const FRAME_ERROR: Code = Code(0x106);
    pub const EXCESSIVE_LOAD: Code = Code(0x107);
    pub const ID_ERROR: Code = Code(0x108);
    pub const SETTINGS_ERROR: Code = Code(0x109);
    pub const MISSING_SETTINGS: Code = Code(0x10a);
    pub const REQUEST_REJECTED: Code = Code(0x10b);
    pub const REQUEST_CANCELLED: Code = Code(0x10c);
    pub const REQUEST_INCOMPLETE: Code = Code(0x10d);
    pub const MESSAGE_ERROR: Code = Code(0x10e);
    pub const CONNECT_ERROR: Code = Code(0x10f);
    pub const VERSION_FALLBACK: Code = Code(0x110);
    pub const QPACK_DECOMPRESSION_FAILED: Code = Code(0x200);
    pub const QPACK_ENCODER_STREAM_ERROR: Code = Code(0x201);
    pub const QPACK_DECODER_STREAM_ERROR: Code = Code(0x202);

    /// The code's name in the RFCs, None for a code they do not name (a reserved
    /// `0x1f * N + 0x21` code, or an application's own).
    pub fn name(self) -> Option<&'static str> {
        const H3: [&str; 17] = [
            "H3_NO_ERROR",
            "H3_GENERAL_PROTOCOL_ERROR",
            "H3_INTERNAL_ERROR",
            "H3_STREAM_CREATION_ERROR",
            "H3_CLOSED_CRITICAL_STREAM",
            "H3_FRAME_UNEXPECTED",
            "H3_FRAME_ERROR",
            "H3_EXCESSIVE_LOAD",
            "H3_ID_ERROR",
            "H3_SETTINGS_ERROR",
            "H3_MISSING_SETTINGS",
            "H3_REQUEST_REJECTED",
            "H3_REQUEST_CANCELLED",
            "H3_REQUEST_INCOMPLETE",
            "H3_MESSAGE_ERROR",
            "H3_CONNECT_ERROR",
            "H3_VERSION_FALLBACK",
        ];
        const QPACK: [&str; 3] = [
            "QPACK_DECOMPRESSION_FAILED",
            "QPACK_ENCODER_STREAM_ERROR",
            "QPACK_DECODER_STREAM_ERROR",
        ];
        match self.0 {
            0x100..=0x110 => Some(H3[(self.0 - 0x100) as usize]),
            0x200..=0x202 => Some(QPACK[(self.0 - 0x200) as usize]),
            _ => None,
        }
    }

    /// Whether the error ends only the stream it happened on (RFC 9114 §4.1.2: a malformed
    /// message); every other error the client finds closes the connection.
    pub fn is_stream_error(self) -> bool {
        self == Code::MESSAGE_ERROR
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "H3 0x{:x}", self.0),
        }
    }
}

/// QUIC variable-length integers (RFC 9000 §16).
pub mod varint {
    /// The largest value a varint carries.
    pub const MAX: u64 = (1 << 62) - 1;

    /// Appends `v` (at most [`MAX`]) in the shortest encoding.
    pub fn put(out: &mut Vec<u8>, v: u64) {
        debug_assert!(v <= MAX);
        match v {
            0..=63 => out.push(v as u8),
            64..=16_383 => out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
            16_384..=1_073_741_823 => {
                out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes())
            }
            _ => out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
        }
    }

    /// The length of the varint whose first byte is `first`.
    #[inline]
    pub fn len(first: u8) -> usize {
        1 << (first >> 6)
    }

    /// Reads a varint at the start of `buf`: its value and length, None if `buf` is shorter.
    #[inline]
    pub fn get(buf: &[u8]) -> Option<(u64, usize)> {
        let first = *buf.first()?;
        let n = len(first);
        let bytes = buf.get(..n)?;
        let mut v = u64::from(first & 0x3f);
        for b in &bytes[1..] {
            v = (v << 8) | u64::from(*b);
        }
        Some((v, n))
    }
}

/// The client's control stream as it opens: its type and a SETTINGS frame saying the server
/// may use no QPACK dynamic table (capacity 0, no blocked streams).
pub fn client_control_stream() -> Vec<u8> {
    let mut settings = Vec::with_capacity(8);
    for (id, v) in [
        (setting::QPACK_MAX_TABLE_CAPACITY, 0),
        (setting::QPACK_BLOCKED_STREAMS, 0),
    ] {
        varint::put(&mut settings, id);
        varint::put(&mut settings, v);
    }
    let mut out = Vec::with_capacity(16);
    varint::put(&mut out, stream_type::CONTROL);
    frame::put_header(&mut out, frame::SETTINGS, settings.len() as u64);
    out.extend_from_slice(&settings);
    out
}
