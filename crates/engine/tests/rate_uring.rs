//! tests/rate.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "rate.rs"]
mod rate;
