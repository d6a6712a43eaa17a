//! tests/schema.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "schema.rs"]
mod schema;
