//! tests/idle.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "idle.rs"]
mod idle;
