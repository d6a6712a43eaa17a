//! tests/live.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "live.rs"]
mod live;
