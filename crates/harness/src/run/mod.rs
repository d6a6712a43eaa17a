//! Running a suite: for lap in 1..=N, for each server (interleaved A B C A B C so drift spreads
//! evenly): start it pinned, check it once with a quick verify, then for each scenario x profile
//! a warm-up (not recorded) and the measured lap while `/proc` is sampled; stop it. One server
//! runs at a time. Each lap is appended to `results.jsonl` as soon as it ends.
//!
//! The harness never prints: progress is reported as [`Event`]s to a callback.

pub mod database;
mod db_floor;
mod disturbance;
mod dry_run;
pub mod env;
pub mod errors;
mod estimate;
pub mod hosts;
pub mod hosts_tls;
mod load;
mod placement;
pub mod plan;
mod running;
mod server;

pub use dry_run::{dry_run, DryRun, PlannedRun, ServerLaps};
pub use estimate::{FIRST_OVERHEAD_S, REQUEST_COUNT_LAP_S};
pub use load::{run_load, LoadError, LoadOutcome};
pub use plan::{pinning, Job, Plan};
pub use running::Attached;

use crate::catalog::Catalog;
use crate::certs::TlsFiles;
use crate::paths::Paths;
use crate::results::record::LapRecord;
use crate::results::{self, clock, read_records, ResultsError, ResultsWriter};
use crate::suite::Suite;
use crate::tools::{self, InstallStep, Prepared, Target, ToolError};
use hosts_tls::HostsTls;
use serverbench_analysis::until_ci::{self, CellOutcome};
use serverbench_results::env::{Env, EnvError, Pinning, Resumed, Skipped};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

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
        /// Selects per second, or why not.
        outcome: Result<f64, String>,
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

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Creates (or reuses, on resume) the results folder and writes `env.json`.
fn prepare_dir(
    opts: &RunOptions,
    paths: &Paths,
    catalog: &Catalog,
    skipped: &[Skipped],
) -> Result<PathBuf, RunError> {
    let now = SystemTime::now();
    let dir = match &opts.resume {
        Some(d) => d.clone(),
        None => results::new_run_dir(&opts.results_parent, &opts.suite.name, now),
    };
    std::fs::create_dir_all(dir.join(results::LOGS_DIR)).map_err(io_err(&dir))?;
    let env_path = dir.join(results::ENV_FILE);
    let started = clock::rfc3339(now);
    let old = match opts.resume {
        Some(_) => Env::read(&env_path).ok().flatten(),
        None => None,
    };
    let value = match old {
        Some(mut old) => {
            old.resumed.push(Resumed {
                started_at: started,
                pinning: opts.pinning.clone(),
            });
            old
        }
        None => {
            let mut env = env::collect(
                paths,
                catalog,
                &opts.suite,
                &opts.pinning,
                skipped,
                &started,
            );
            env.hosts = opts.hosts.as_ref().map(|h| h.env.clone());
            env.doctor = opts.doctor.clone();
            env
        }
    };
    value.write(&env_path)?;
    Ok(dir)
}

/// Runs `opts.suite` against the servers of `catalog`, reporting progress to `on_event`.
pub fn run(
    catalog: &Catalog,
    paths: &Paths,
    opts: &RunOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunOutcome, RunError> {
    let plan = plan::plan(&opts.suite, catalog, paths);
    report_skips(&plan, on_event);
    if plan.servers.is_empty() {
        let why: Vec<String> = plan
            .skipped
            .iter()
            .map(|s| format!("{}: {}", s.server, s.why))
            .collect();
        return Err(RunError::NothingToRun {
            suite: opts.suite.name.clone(),
            why: if why.is_empty() {
                "the catalog is empty".into()
            } else {
                why.join("; ")
            },
        });
    }
    on_event(Event::Preparing {
        what: format!(
            "recording the environment ({} servers' versions) and preparing {}",
            catalog.servers.len(),
            opts.suite.tool
        ),
    });
    if let Some(h) = &opts.hosts {
        let ids: Vec<String> = plan.servers.iter().map(|s| s.id.clone()).collect();
        on_event(Event::Preparing {
            what: format!("setting up {} server(s) on {}", ids.len(), h.server.name),
        });
        hosts::setup(h, &ids, &mut |_| {})?;
    }
    let dir = prepare_dir(opts, paths, catalog, &plan.skipped)?;
    let tool = tools::prepare(
        opts.suite.tool,
        &opts.serverbench_exe,
        &paths.cache.join("tools"),
        &dir.join("scripts"),
        &mut |step| on_event(Event::ToolInstall(step)),
    )?;
    check_tool(&tool, &plan, &opts.suite)?;
    let results_path = dir.join(results::RESULTS_FILE);
    let mut writer = ResultsWriter::open(&results_path)?;
    let done: HashSet<_> = read_records(&results_path)?
        .iter()
        .map(LapRecord::key)
        .collect();
    let (tls_files, hosts_tls) = certificate(opts, &plan, &dir, on_event)?;
    let mut state = server::RunState::new(&plan, opts, &tool, &dir, &done)
        .with_tls(tls_files, hosts_tls)
        .with_database(paths);
    on_event(Event::Started {
        dir: dir.clone(),
        servers: plan.servers.iter().map(|s| s.id.clone()).collect(),
        total: plan.jobs.len(),
        already: state.already(),
    });
    on_event(Event::Estimate { left: state.eta() });
    let mut skipped = plan.skipped.clone();
    let rule = opts.suite.until_ci_rule().map(until_ci::UntilCi::from);
    for lap in 1..=opts.suite.planned_laps() {
        if let Some(rule) = rule.filter(|r| lap > r.min_laps) {
            let cells = until_ci::cell_states(&read_records(&results_path)?, &rule);
            state.settled = settled(&cells);
            if cells.iter().all(|c| !c.state.needs_more()) {
                break;
            }
        }
        for si in 0..plan.servers.len() {
            if opts.cancel.load(Ordering::Relaxed) {
                break;
            }
            state.server_lap(paths, si, lap, &mut writer, on_event)?;
        }
        db_floor::measure(&plan, opts, state.db.as_mut(), (&dir, lap), on_event);
    }
    state.stop_database();
    let records = read_records(&results_path)?;
    let until_ci = rule.map(|r| until_ci::cell_states(&records, &r));
    skipped.extend(state.excluded());
    let interrupted = opts.cancel.load(Ordering::Relaxed);
    if interrupted {
        on_event(Event::Interrupted);
    } else if skipped.len() > plan.skipped.len() {
        record_skipped(&dir, &skipped)?;
    }
    Ok(RunOutcome {
        records,
        until_ci,
        dir,
        skipped,
        interrupted,
    })
}

/// The cells that need no more laps.
fn settled(cells: &[CellOutcome]) -> HashSet<(String, String, String)> {
    let done = cells.iter().filter(|c| !c.state.needs_more());
    let keys = done.map(|c| (c.server.clone(), c.scenario.clone(), c.profile.clone()));
    keys.collect()
}

/// The run's certificate when a server serves TLS: made for the address servers bind (the
/// server host's with `--hosts`, where it is then copied to every host).
fn certificate(
    opts: &RunOptions,
    plan: &Plan,
    dir: &Path,
    on_event: &mut dyn FnMut(Event),
) -> Result<(Option<TlsFiles>, Option<HostsTls>), RunError> {
    if !plan.servers.iter().any(crate::process::serves_tls) {
        return Ok((None, None));
    }
    let address = opts
        .hosts
        .as_ref()
        .map_or(&opts.host, |h| &h.server.address);
    let files = crate::certs::generate(&dir.join("tls"), address)?;
    let Some(h) = &opts.hosts else {
        return Ok((Some(files), None));
    };
    on_event(Event::Preparing {
        what: format!(
            "copying the run's TLS certificate to {} and {}",
            h.server.name,
            h.clients
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    });
    let copies = HostsTls::copy(&h.transport, &h.server, &h.clients, &files)?;
    Ok((Some(files), Some(copies)))
}

/// Refuses, before any server starts, a tool that cannot run one of the laps (wrk with a
/// request count, ab with rotated paths, an external tool on a TCP scenario...).
fn check_tool(tool: &Prepared, plan: &Plan, suite: &Suite) -> Result<(), RunError> {
    let target = Target {
        host: "127.0.0.1".into(),
        port: 1,
        echo_port: Some(2),
        tls_port: Some(3),
        ca_file: None,
    };
    let mut state_jobs = plan.jobs.iter().filter(|j| j.lap == 1);
    state_jobs.try_for_each(|j| {
        let params = server::params(suite, j);
        tool.command(&params, &target, &[]).map(|_| ())
    })?;
    Ok(())
}

fn report_skips(plan: &Plan, on_event: &mut dyn FnMut(Event)) {
    for s in &plan.skipped {
        on_event(Event::ServerSkipped {
            server: s.server.clone(),
            why: s.why.clone(),
        });
    }
    for s in &plan.scenario_skips {
        on_event(Event::ScenarioSkipped {
            server: s.server.clone(),
            scenario: s.scenario.clone(),
            why: s.why.clone(),
        });
    }
}

/// Rewrites `skipped` in `env.json` (servers excluded during the run are added).
fn record_skipped(dir: &Path, skipped: &[Skipped]) -> Result<(), RunError> {
    let env_path = dir.join(results::ENV_FILE);
    if let Ok(Some(mut env)) = Env::read(&env_path) {
        env.skipped = skipped.to_vec();
        env.write(&env_path)?;
    }
    Ok(())
}

/// Reads the suite recorded in a results folder's `env.json` (for `--resume DIR` alone).
pub fn suite_of(dir: &Path) -> Option<Suite> {
    Env::read(&dir.join(results::ENV_FILE))
        .ok()??
        .suite?
        .suite()
}
