//! The bytes of serverbench's load generator, without sockets: HTTP/1.1 requests serialized once
//! and the streaming response parser ([`http`]), and HTTP/2 ([`h2`]: frames, HPACK, and a
//! connection's protocol state, which takes bytes in and hands back events and the frames owed),
//! and HTTP/3 ([`h3`]: frames, QPACK without a dynamic table, responses read from their
//! streams' bytes, over any QUIC stack),
//! and TLS ([`tls`]: the rustls client configuration per thread, session resumption, certificate
//! trust, and names for what a handshake negotiated or why it failed), and WebSocket ([`ws`]:
//! the upgrade handshake, client frames masked a word at a time, the incremental frame decoder).
//!
//! Owns: protocol framing and parsing, hand-written because it runs on every response (each
//! module says why a kept crate does not do). Must not: touch a socket, a clock, a thread or
//! the terminal; time is passed in as nanoseconds, output is appended to caller-owned buffers.
//! [`coding`]: the content codings `--verify` decodes (a kept crate each). [`grpc`]: gRPC's
//! message framing, status codes and trailers.
//! The engine (`serverbench-engine`) drives these from its worker loops.

pub mod coding;
pub mod grpc;
pub mod h2;
pub mod h3;
pub mod http;
pub mod tls;
pub mod ws;

/// A request on the wire, waiting for its response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inflight {
    /// When it should have been sent (`-R`), or when it was sent (closed loop).
    pub intended: u64,
    pub sent: u64,
    /// Which of the run's URLs it asked for.
    pub url: u32,
}
