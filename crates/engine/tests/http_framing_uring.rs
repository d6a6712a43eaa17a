//! tests/http_framing.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "http_framing.rs"]
mod http_framing;
