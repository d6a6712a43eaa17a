//! tests/h2_tls.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "h2_tls.rs"]
mod h2_tls;
