//! tests/tls_handshakes.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "tls_handshakes.rs"]
mod tls_handshakes;
