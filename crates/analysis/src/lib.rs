//! serverbench-analysis owns the statistics of a results folder: [`stats`] (medians, bootstrap
//! intervals, ranks), [`summary`] (one table per scenario x profile), [`diagnostics`] (every
//! warning, in one pass), [`protocol`] (laps over TLS, HTTP/2 and gRPC, [`grpc_calls`]), [`scaling`] (core sweeps),
//! [`compare`] (two folders, server by server) and [`hosts`] (the per-host breakdown of laps
//! over several machines).
//!
//! Pure functions over [`serverbench_results`] values: no I/O, no processes, no printing.

pub mod capacity;
pub mod capacity_rows;
pub mod compare;
pub mod cost;
pub mod database;
pub mod diagnostics;
pub mod disturbed;
pub mod figure;
#[cfg(test)]
mod fixture;
pub mod grpc_calls;
pub mod h3_figures;
pub mod host_warnings;
pub mod hosts;
pub mod mix;
pub mod off_contract;
pub mod protocol;
mod row_warnings;
pub mod scaling;
pub mod stats;
pub mod summary;
pub mod until_ci;
pub mod warnings;
mod ws_closes;

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
    analyze_with(records, baseline, env, Options::default())
}

/// How the laps are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// `--drop-disturbed`: disturbed laps are left out of the figures (listed, with why).
    pub drop_disturbed: bool,
}

/// [`analyze`] with `opts`: the disturbed laps listed (and with `drop_disturbed` left out of
/// every figure), and with a suite run `--until-ci` (in `env`), where each cell ended.
pub fn analyze_with(
    records: &[LapRecord],
    baseline: Option<&str>,
    env: Option<&Env>,
    opts: Options,
) -> summary::Summary {
    let kept;
    let measured = match opts.drop_disturbed {
        true => {
            kept = disturbed::without_disturbed(records);
            &kept[..]
        }
        false => records,
    };
    let mut summary = summary::summarize(measured, baseline);
    let floors = env.map_or(&[][..], |e| &e.database_floor[..]);
    database::with_floor(&mut summary.database, measured, floors);
    summary.disturbed = disturbed::disturbed_laps(records, opts.drop_disturbed);
    summary.until_ci = until_ci::report(records, env);
    summary.warnings = diagnostics::diagnose(&summary, measured, env);
    summary.warnings.extend(disturbed::warnings(&summary));
    summary.warnings.extend(off_contract::warnings(&summary));
    summary
}
