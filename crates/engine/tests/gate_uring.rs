//! tests/gate.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "gate.rs"]
mod gate;
