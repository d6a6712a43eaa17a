//! tests/grpc.rs again, on io_uring: `common::io()` reads this crate's `_uring` name.

#[path = "grpc.rs"]
mod grpc;
