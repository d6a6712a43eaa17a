//! serverbench-analysis owns the statistics of a results folder: [`stats`] (medians, bootstrap
//! intervals, ranks), [`summary`] (one table per scenario x profile), [`diagnostics`] (every
//! warning, in one pass), [`protocol`] (laps over TLS and HTTP/2), [`scaling`] (core sweeps),
//! [`compare`] (two folders, server by server) and [`hosts`] (the per-host breakdown of laps
//! over several machines).
//!
//! Pure functions over [`serverbench_results`] values: no I/O, no processes, no printing.

pub mod compare;
pub mod database;
pub mod diagnostics;
#[cfg(test)]
mod fixture;
pub mod host_warnings;
pub mod hosts;
pub mod protocol;
mod row_warnings;
pub mod scaling;
pub mod stats;
pub mod summary;
pub mod until_ci;
pub mod warnings;

use serverbench_results::env::Env;
use serverbench_results::record::LapRecord;

/// The summary every report shows: [`summary::summarize`] with every warning of
/// [`diagnostics::diagnose`]. `env` is the results folder's `env.json` (it tells how many CPUs
/// the server was given).
pub fn analyze(
    records: &[LapRecord],
    baseline: Option<&str>,
    env: Option<&Env>,
) -> summary::Summary {
    let mut summary = summary::summarize(records, baseline);
    summary.warnings = diagnostics::diagnose(&summary, records, env);
    summary
}
