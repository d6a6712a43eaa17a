//! tests/lowat.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "lowat.rs"]
mod lowat;
