//! tests/ws.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "ws.rs"]
mod ws;
