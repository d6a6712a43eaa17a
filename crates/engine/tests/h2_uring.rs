//! tests/h2.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "h2.rs"]
mod h2;
