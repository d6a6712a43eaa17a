//! One load's text, as `serverbench load` prints it: the summary ([`summary`], with its mix
//! table), the per-host breakdown of a distributed load ([`hosts`]), a capacity search's curve
//! ([`capacity`]), the live line's text ([`live`]) and why a completed load measured nothing
//! ([`verdict`]). It renders strings: the CLI prints them, and the engine never does.

pub mod capacity;
mod grpc_lines;
mod h3_lines;
pub mod hosts;
pub mod live;
mod mix_table;
pub mod summary;
mod units;
pub mod verdict;
