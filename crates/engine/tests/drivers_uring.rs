//! tests/drivers.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "drivers.rs"]
mod drivers;
