//! tests/errors.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "errors.rs"]
mod errors;
