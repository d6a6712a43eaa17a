//! Running a suite: for lap in 1..=N, for each server (interleaved A B C A B C so drift spreads
//! evenly): start it pinned, check it once with a quick verify, then for each scenario x profile
//! a warm-up (not recorded) and the measured lap while `/proc` is sampled; stop it. One server
//! runs at a time. Each lap is appended to `results.jsonl` as soon as it ends.
//!
//! The harness never prints: progress is reported as [`Event`]s to a callback.

mod context;
pub mod database;
mod db_floor;
mod disturbance;
mod dry_run;
pub mod env;
pub mod errors;
mod estimate;
pub mod hosts;
mod hosts_capacity;
pub mod hosts_tls;
mod load;
mod placement;
pub mod plan;
mod progress;
mod quick_check;
mod running;
mod server;
mod server_db;
mod server_measure;
mod start;

pub use dry_run::{dry_run, DryRun, PlannedRun, ServerLaps};
pub use estimate::{FIRST_OVERHEAD_S, REQUEST_COUNT_LAP_S};
pub use load::{run_load, LoadError, LoadOutcome};
pub use plan::{pinning, Job, Plan};
pub use running::Attached;

use crate::catalog::Catalog;
use crate::paths::Paths;
use crate::results::record::LapRecord;
use crate::results::{self, ResultsError};
use crate::suite::Suite;
use crate::tools::{InstallStep, ToolError};
use serverbench_analysis::until_ci::CellOutcome;
use serverbench_results::env::{Env, EnvError, Pinning, Skipped};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// What a run needs besides the catalog.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The suite (already shortened by `--quick`, filtered by `--servers`...).
    pub suite: Suite,
    /// Folder in which `<timestamp>-<suite>/` is created (ignored with `resume`).
    pub results_parent: PathBuf,
    /// Continue this results folder, skipping laps already recorded.
    pub resume: Option<PathBuf>,
    /// Where server and client run.
    pub pinning: Pinning,
    /// Address servers bind and the load goes to (loopback).
    pub host: String,
    /// The `serverbench` executable that has `load` (usually the current executable).
    pub serverbench_exe: PathBuf,
    /// Set by Ctrl-C: the run stops the load and the server and returns.
    pub cancel: Arc<AtomicBool>,
    /// Run `verify::quick` before the first lap of each server.
    pub quick_verify: bool,
    /// Servers already running (`run --url`), by the name they have in the catalog given to
    /// [`run`] (as [`crate::catalog::Server::attached`]).
    pub attached: Vec<Attached>,
    /// `run --hosts`: servers start on the server host, the load comes from the client hosts.
    pub hosts: Option<Arc<hosts::HostsRun>>,
    /// The database of database laps (`--db-port`, `--db-cpus`).
    pub database: database::DbOptions,
    /// `serverbench doctor`'s checks at the start of the run, kept in `env.json`.
    pub doctor: Option<Vec<serverbench_model::doctor::Check>>,
    /// The commit the serverbench binary was built from, kept in `env.json` as its `git`.
    pub build: serverbench_results::env::Git,
}

/// Progress of a run.
#[derive(Debug, Clone)]
pub enum Event {
    /// Before anything is measured: what takes the first seconds.
    Preparing {
        /// What is being done.
        what: String,
    },
    /// The results folder is ready; `total` laps are planned, `already` were recorded before.
    Started {
        /// Results folder.
        dir: PathBuf,
        /// Servers that will run.
        servers: Vec<String>,
        /// Laps planned, including those already recorded.
        total: usize,
        /// Laps found in `results.jsonl` (resume).
        already: usize,
    },
    /// An external tool is being installed.
    ToolInstall(InstallStep),
    /// A server will not run (not in the catalog, not set up, broken, failed its check).
    ServerSkipped {
        /// Catalog id.
        server: String,
        /// Why.
        why: String,
    },
    /// A server does not implement a scenario's features.
    ScenarioSkipped {
        /// Catalog id.
        server: String,
        /// Scenario.
        scenario: String,
        /// Why.
        why: String,
    },
    /// A server is starting for a lap.
    ServerStarting {
        /// Catalog id.
        server: String,
        /// Lap.
        lap: u32,
    },
    /// A server could not start, failed its check, or died.
    ServerFailed {
        /// Catalog id.
        server: String,
        /// Lap.
        lap: u32,
        /// Exit status, error and log tail.
        why: String,
    },
    /// A warm-up (not recorded) starts.
    WarmupStarted {
        /// Catalog id.
        server: String,
        /// Scenario.
        scenario: String,
        /// Profile.
        profile: String,
        /// Seconds.
        seconds: f64,
    },
    /// A measured lap starts.
    LapStarted {
        /// Catalog id.
        server: String,
        /// Scenario.
        scenario: String,
        /// Profile.
        profile: String,
        /// Lap.
        lap: u32,
        /// 1-based position among all planned laps.
        index: usize,
        /// Laps planned.
        total: usize,
        /// Estimated time left for the whole run.
        eta: Option<Duration>,
    },
    /// A lap ended (ok or failed) and is in `results.jsonl`.
    LapFinished {
        /// The record written.
        record: Box<LapRecord>,
        /// 1-based position among all planned laps.
        index: usize,
        /// Laps planned.
        total: usize,
    },
    /// The quick contract check of a server (once, before its first lap).
    Verifying {
        /// Catalog id.
        server: String,
    },
    /// The time the rest of the run should take, as of now: the remaining laps x (warm-up +
    /// duration + the per-lap overhead measured so far). Sent when the run starts and after
    /// each lap.
    Estimate {
        /// Time left.
        left: Duration,
    },
    /// Ctrl-C: the run stopped; `--resume` continues it.
    Interrupted,
    /// The database's floor at `clients` sessions after round `round` of a run with `/db` laps:
    /// selects per second, or why it could not be measured.
    DatabaseFloor {
        /// The round of laps it followed.
        round: u32,
        /// pgbench's sessions.
        clients: u32,
        /// Selects per second, or why not (the database's error, shared: events are cloned).
        outcome: Result<f64, std::sync::Arc<serverbench_database::DbError>>,
    },
}

/// Errors that stop a run (a failing server does not: it is recorded and the run goes on).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The results folder could not be created or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// `results.jsonl` could not be read or written.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// The run's TLS certificate could not be made.
    #[error(transparent)]
    Cert(#[from] crate::certs::CertError),
    /// `env.json` could not be written.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// The load tool cannot be used.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// A host of `run --hosts` failed before the first lap (setup there, the certificate).
    #[error(transparent)]
    Hosts(#[from] errors::HostsError),
    /// Nothing to run.
    #[error("no server of suite `{suite}` can run here: {why}")]
    NothingToRun {
        /// Suite name.
        suite: String,
        /// The skipped servers and why.
        why: String,
    },
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The results folder.
    pub dir: PathBuf,
    /// Every record in `results.jsonl` (including those of earlier, resumed runs).
    pub records: Vec<LapRecord>,
    /// `--until-ci`: where each cell stands at the end (clear, or the lap limit reached).
    pub until_ci: Option<Vec<CellOutcome>>,
    /// Servers not measured, and why.
    pub skipped: Vec<Skipped>,
    /// True when Ctrl-C stopped the run.
    pub interrupted: bool,
}

/// Runs `opts.suite` against the servers of `catalog`, reporting progress to `on_event`.
pub fn run(
    catalog: &Catalog,
    paths: &Paths,
    opts: &RunOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunOutcome, RunError> {
    let plan = plan::plan(&opts.suite, catalog, paths);
    plan.announce(&opts.suite, on_event)?;
    let ctx = context::prepare(catalog, paths, opts, &plan, on_event)?;
    let mut state = server::RunState::new(&ctx, progress::Progress::open(&ctx)?);
    state.rounds(on_event)?;
    state.finish(on_event)
}

/// Reads the suite recorded in a results folder's `env.json` (for `--resume DIR` alone).
pub fn suite_of(dir: &Path) -> Option<Suite> {
    let mut suite = Env::read(&dir.join(results::ENV_FILE))
        .ok()??
        .suite?
        .suite()?;
    // Mix files were recorded with absolute paths: read them again.
    suite.read_mixes(dir).ok()?;
    Some(suite)
}
