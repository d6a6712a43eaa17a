//! tests/tls.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "tls.rs"]
mod tls;
