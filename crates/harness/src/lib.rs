//! The serverbench harness: the catalog of servers, their setup and verification, running suites,
//! sampling the server's process tree, statistics over laps and the results folder.
//!
//! The harness never prints: it returns values or emits events that the CLI renders.

pub mod catalog;
pub mod compare;
pub mod diagnostics;
pub mod paths;
pub mod process;
pub mod results;
pub mod run;
pub mod sampler;
pub mod setup;
pub mod stats;
pub mod suite;
pub mod summary;
pub mod tools;
pub mod verify;
