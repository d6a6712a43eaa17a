//! serverbench-harness owns what runs: suites ([`suite`]), the run loop ([`run`]), server and
//! client processes in their own groups with one interrupt handler ([`process`]), the /proc
//! sampler ([`sampler`], over serverbench-machine's /proc reads), the contract check
//! ([`verify`]), and what `serverbench load` and `run` share: the capacity step measurer
//! ([`capacity`]) and the distributed session over client hosts ([`clients`]).
//!
//! It builds on serverbench-catalog (what a server is and how it is set up), serverbench-tools
//! (how a load tool is driven) and serverbench-results (what is recorded). It never prints: it
//! returns values or emits events that the CLI renders, and it computes no statistics.

pub mod capacity;
pub mod certs;
pub mod clients;
pub mod process;
pub mod run;
pub mod sampler;
use serverbench_model::suite;
pub mod verify;
pub mod verify_db;

// Crate-local shorthands for the crates the harness builds on.
use serverbench_catalog::{self as catalog, paths};
use serverbench_results as results;
use serverbench_tools as tools;
