//! tests/tcp.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "tcp.rs"]
mod tcp;
