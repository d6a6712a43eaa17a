//! One server's share of one lap: start it, check it once, warm up and measure each scenario x
//! profile, record failures, stop it.

use super::database::RunDatabase;
use super::errors::{QuickCheckFailed, StartError};
use super::estimate::{self, Estimate};
use super::hosts::RemoteServer;
use super::hosts_tls::HostsTls;
use super::plan::{Job, Plan};
use super::running::Running;
use super::{Event, RunError, RunOptions};
use crate::catalog::Server;
use crate::paths::{slug, Paths};
use crate::process::{self, ServerProcess, StartOptions};
use crate::results::record::{LapRecord, LapStatus, LoadParams};
use crate::results::{clock, ResultsWriter, LOGS_DIR};
use crate::tools::{Prepared, Target};
use serverbench_model::failure::FailureKind;
use serverbench_model::failure::LapFailure;
use serverbench_model::Feature;
use serverbench_results::env::Skipped;
use serverbench_results::LapKey;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

/// Lines of server log kept in a failure.
const LOG_TAIL: usize = 20;

type Key = LapKey;

/// One start of a server: which server, which lap, how many CPUs (a core sweep).
#[derive(Debug, Clone, Copy)]
struct Turn {
    si: usize,
    lap: u32,
    cores: Option<u32>,
    pool: Option<u32>,
}

/// Progress across the whole run.
pub(super) struct RunState<'a> {
    plan: &'a Plan,
    opts: &'a RunOptions,
    tool: &'a Prepared,
    dir: &'a Path,
    done: &'a HashSet<Key>,
    verified: HashSet<usize>,
    excluded: Vec<(usize, String)>,
    index: usize,
    /// The time the laps still to run should take.
    estimate: Estimate,
    /// The run's certificate, for servers that serve TLS.
    tls_files: Option<crate::certs::TlsFiles>,
    /// `run --hosts`: the run's certificate copied to the hosts.
    hosts_tls: Option<HostsTls>,
    /// The database of database laps, when the run has some.
    pub(super) db: Option<RunDatabase>,
    /// The database died in the lap just measured.
    pub(super) db_lost: bool,
    /// `--until-ci`: cells (server, scenario, profile) whose interval is clear or whose lap
    /// limit is reached; their later rounds are not run.
    pub(super) settled: HashSet<(String, String, String)>,
}

impl<'a> RunState<'a> {
    pub(super) fn new(
        plan: &'a Plan,
        opts: &'a RunOptions,
        tool: &'a Prepared,
        dir: &'a Path,
        done: &'a HashSet<Key>,
    ) -> Self {
        let pending = plan
            .jobs
            .iter()
            .filter(|j| !done.contains(&key(plan, &opts.suite, j)));
        RunState {
            plan,
            opts,
            tool,
            dir,
            done,
            verified: HashSet::new(),
            excluded: Vec::new(),
            index: 0,
            estimate: Estimate::new(plan, &opts.suite, pending),
            tls_files: None,
            hosts_tls: None,
            db: None,
            db_lost: false,
            settled: HashSet::new(),
        }
    }

    /// Servers that serve TLS get these certificate files (`TLS_CERT`, `TLS_KEY`); over
    /// hosts, the copies of `hosts`.
    pub(super) fn with_tls(
        mut self,
        files: Option<crate::certs::TlsFiles>,
        hosts: Option<HostsTls>,
    ) -> Self {
        self.tls_files = files;
        self.hosts_tls = hosts;
        self
    }

    /// Laps already recorded before this run.
    pub(super) fn already(&self) -> usize {
        self.plan
            .jobs
            .iter()
            .filter(|j| self.done.contains(&self.key(j)))
            .count()
    }

    /// Servers excluded during the run (failed their quick verify).
    pub(super) fn excluded(&self) -> Vec<Skipped> {
        self.excluded
            .iter()
            .map(|(si, why)| Skipped {
                server: self.plan.servers[*si].id.clone(),
                why: why.clone(),
            })
            .collect()
    }

    /// `--until-ci`: the job's cell needs no more laps.
    fn is_settled(&self, j: &Job) -> bool {
        let k = self.key(j);
        self.settled.contains(&(k.server, k.scenario, k.profile))
    }

    fn key(&self, j: &Job) -> Key {
        key(self.plan, &self.opts.suite, j)
    }

    /// Time left ([`Estimate::eta`]).
    pub(super) fn eta(&self) -> Duration {
        self.estimate.eta()
    }

    /// The recorded parameters, with the warm-up this server actually gets.
    fn params(&self, j: &Job) -> LoadParams {
        LoadParams {
            warmup_s: self.warmup_s(j),
            ..params(&self.opts.suite, j)
        }
    }

    /// The suite's warm-up, raised to the server's `min_warmup_s`.
    fn warmup_s(&self, j: &Job) -> f64 {
        estimate::warmup_s(self.plan, &self.opts.suite, j)
    }

    fn record(&self, j: &Job, status: LapStatus, failure: Option<LapFailure>) -> LapRecord {
        let LapKey {
            server,
            scenario,
            profile,
            lap,
        } = self.key(j);
        LapRecord {
            suite: self.opts.suite.name.clone(),
            server,
            scenario,
            profile,
            lap,
            status,
            failure,
            tool: self.tool.tool,
            started_at: clock::rfc3339(SystemTime::now()),
            wall_s: 0.0,
            params: self.params(j),
            load: None,
            server_stats: None,
            roles: Default::default(),
            database: None,
            hosts: None,
            disturbance: None,
        }
    }

    fn finish(
        &mut self,
        j: &Job,
        record: LapRecord,
        writer: &mut ResultsWriter,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), RunError> {
        writer.append(&record)?;
        self.estimate
            .lap_done(estimate::expected_s(self.plan, &self.opts.suite, j));
        self.index += 1;
        on_event(Event::LapFinished {
            record: Box::new(record),
            index: self.index,
            total: self.plan.jobs.len(),
        });
        on_event(Event::Estimate { left: self.eta() });
        Ok(())
    }

    fn fail_all(
        &mut self,
        jobs: &[Job],
        why: &LapFailure,
        writer: &mut ResultsWriter,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), RunError> {
        for j in jobs {
            let r = self.record(j, LapStatus::Failed, Some(why.clone()));
            self.finish(j, r, writer, on_event)?;
        }
        Ok(())
    }

    /// Runs server `si`'s laps numbered `lap`.
    pub(super) fn server_lap(
        &mut self,
        paths: &Paths,
        si: usize,
        lap: u32,
        writer: &mut ResultsWriter,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), RunError> {
        let pending = self.pending_jobs(si, lap);
        // One start per CPU count (a core sweep) and pool size (DATABASE_POOL).
        let mut starts: Vec<(Option<u32>, Option<u32>)> = Vec::new();
        for j in &pending {
            let start = (self.cores(j), self.pool(j));
            if !starts.contains(&start) {
                starts.push(start);
            }
        }
        for (c, pool) in starts {
            let group: Vec<Job> = pending
                .iter()
                .filter(|j| (self.cores(j), self.pool(j)) == (c, pool))
                .copied()
                .collect();
            let turn = Turn {
                si,
                lap,
                cores: c,
                pool,
            };
            self.server_turn(paths, turn, &group, writer, on_event)?;
        }
        Ok(())
    }

    /// The server CPU count of a job's profile (a core sweep), `None` for the run's pinning.
    fn cores(&self, j: &Job) -> Option<u32> {
        self.opts.suite.profiles[j.profile].cores
    }

    /// Starts a server once for its turn and runs `pending` on it.
    fn server_turn(
        &mut self,
        paths: &Paths,
        Turn {
            si,
            lap,
            cores,
            pool,
        }: Turn,
        pending: &[Job],
        writer: &mut ResultsWriter,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), RunError> {
        if pending.is_empty() {
            return Ok(());
        }
        let server = &self.plan.servers[si];
        if let Some((_, why)) = self.excluded.iter().find(|(s, _)| *s == si) {
            let why = LapFailure::new(FailureKind::NotRun, format!("not run: {why}"));
            return self.fail_all(pending, &why, writer, on_event);
        }
        on_event(Event::ServerStarting {
            server: server.id.clone(),
            lap,
        });
        if pool.is_some() && self.db.as_ref().is_some_and(|d| d.pid().is_none()) {
            on_event(Event::Preparing {
                what: format!(
                    "starting the database{} (port {})",
                    self.opts
                        .hosts
                        .as_ref()
                        .map_or(String::new(), |h| format!(" on {}", h.database.name)),
                    self.opts.database.port
                ),
            });
        }
        let env = match self.database_env(server, pool) {
            Ok(env) => env,
            Err(e) => {
                let why = LapFailure::new(FailureKind::Database, e.to_string());
                return self.fail_all(pending, &why, writer, on_event);
            }
        };
        let (mut proc, target) = match self.start_or_attach(paths, server, lap, cores, env) {
            Ok(p) => p,
            Err(e) => {
                let why = e.to_string();
                on_event(Event::ServerFailed {
                    server: server.id.clone(),
                    lap,
                    why: why.clone(),
                });
                let why = LapFailure::from_text(FailureKind::Start, &why);
                return self.fail_all(pending, &why, writer, on_event);
            }
        };
        if let Err(QuickCheckFailed(e)) = self.verify_once(si, server, &target, on_event) {
            let why = format!("failed the quick contract check: {e}");
            proc.stop();
            on_event(Event::ServerFailed {
                server: server.id.clone(),
                lap,
                why: why.clone(),
            });
            on_event(Event::ServerSkipped {
                server: server.id.clone(),
                why: why.clone(),
            });
            let why = LapFailure::from_text(FailureKind::Contract, &why);
            return self.fail_all(pending, &why, writer, on_event);
        }
        self.run_jobs(&mut proc, &target, pending, writer, on_event)?;
        proc.stop();
        Ok(())
    }

    /// This server's jobs in this lap that are not recorded yet (`--resume`); the ones already
    /// recorded count as done for the progress index.
    fn pending_jobs(&mut self, si: usize, lap: u32) -> Vec<Job> {
        let jobs: Vec<Job> = self
            .plan
            .jobs
            .iter()
            .filter(|j| j.server == si && j.lap == lap)
            .copied()
            .collect();
        let pending: Vec<Job> = jobs
            .iter()
            .filter(|j| !self.done.contains(&self.key(j)) && !self.is_settled(j))
            .copied()
            .collect();
        self.index += jobs.len() - pending.len();
        pending
    }

    /// Measures each job on the running server; once it dies, the rest are recorded as not run.
    fn run_jobs(
        &mut self,
        proc: &mut Running,
        target: &Target,
        pending: &[Job],
        writer: &mut ResultsWriter,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), RunError> {
        let mut dead: Option<LapFailure> = None;
        for j in pending {
            if self.opts.cancel.load(Ordering::Relaxed) {
                break;
            }
            if let Some(why) = &dead {
                let detail = format!(
                    "not run: the server had died earlier in this lap: {}",
                    why.detail
                );
                let why = LapFailure {
                    kind: FailureKind::NotRun,
                    detail,
                    log_tail: why.log_tail.clone(),
                };
                self.fail_all(&[*j], &why, writer, on_event)?;
                continue;
            }
            let Some(record) = self.measure(proc, target, j, on_event) else {
                break; // interrupted: nothing recorded, `--resume` redoes this lap
            };
            let db_lost = std::mem::take(&mut self.db_lost);
            if record.status == LapStatus::Failed && (db_lost || proc.exited().is_some()) {
                dead = record.failure.clone();
                on_event(Event::ServerFailed {
                    server: record.server.clone(),
                    lap: j.lap,
                    why: dead.as_ref().map(|d| d.to_string()).unwrap_or_default(),
                });
            }
            self.finish(j, record, writer, on_event)?;
        }
        Ok(())
    }

    /// Starts the server, or finds the one already running (`run --url`).
    fn start_or_attach(
        &self,
        paths: &Paths,
        server: &Server,
        lap: u32,
        cores: Option<u32>,
        env: Vec<(String, String)>,
    ) -> Result<(Running, Target), StartError> {
        if server.is_attached() {
            let a = self.opts.attached.iter().find(|a| a.name == server.id);
            let a = a.ok_or_else(|| StartError::NoUrl {
                server: server.id.clone(),
            })?;
            return Ok((Running::Attached { pid: a.pid }, a.target.clone()));
        }
        if let Some(h) = &self.opts.hosts {
            let (cpus, workers) = self.server_cpus(cores);
            let log = self.log_path(server, lap);
            let tls = self.hosts_tls.as_ref();
            let tls = tls.filter(|_| process::serves_tls(server));
            let at = (workers, cpus.as_slice());
            let (remote, target) = RemoteServer::start(h, server, at, tls, &env, &log)?;
            return Ok((Running::Remote(remote), target));
        }
        let (proc, target) = self.start(paths, server, lap, cores, env)?;
        Ok((Running::Started(proc), target))
    }

    /// The server's CPUs and `WORKERS`: the run's pinning, cut to `cores` in a core sweep.
    fn server_cpus(&self, cores: Option<u32>) -> (Vec<usize>, usize) {
        let mut cpus = self.opts.pinning.server_cpus.clone();
        let mut workers = self.opts.pinning.workers;
        if let Some(n) = cores {
            cpus.truncate(n as usize);
            workers = n as usize;
        }
        (cpus, workers)
    }

    fn log_path(&self, server: &Server, lap: u32) -> std::path::PathBuf {
        self.dir
            .join(LOGS_DIR)
            .join(format!("{}.lap{lap}.log", slug(&server.id)))
    }

    fn start(
        &self,
        paths: &Paths,
        server: &Server,
        lap: u32,
        cores: Option<u32>,
        env: Vec<(String, String)>,
    ) -> Result<(ServerProcess, Target), StartError> {
        let host = &self.opts.host;
        let free_port = || {
            process::free_port(host).map_err(|source| StartError::NoPort {
                host: host.clone(),
                source,
            })
        };
        let port = free_port()?;
        let echo_port = if server.implements(Feature::Echo) {
            Some(free_port()?)
        } else {
            None
        };
        let mut so = StartOptions::new(server, port, echo_port, self.log_path(server, lap));
        so.host = host.clone();
        so.extra_env.extend(env);
        (so.cpus, so.workers) = self.server_cpus(cores);
        if let (true, Some(files)) = (process::serves_tls(server), &self.tls_files) {
            let port = free_port()?;
            so.tls = Some(process::TlsListener {
                port,
                files: files.clone(),
            });
        }
        let proc = process::start(server, paths, &so)?;
        let target = Target {
            host: host.clone(),
            port,
            echo_port,
            tls_port: so.tls.as_ref().map(|t| t.port),
            ca_file: so.tls.as_ref().map(|t| t.files.cert.clone()),
        };
        Ok((proc, target))
    }
}

/// The key of a job's lap in `results.jsonl`.
pub(super) fn key(plan: &Plan, s: &crate::suite::Suite, j: &Job) -> Key {
    LapKey {
        server: plan.servers[j.server].id.clone(),
        scenario: s.scenarios[j.scenario].name.clone(),
        profile: s.profiles[j.profile].name.clone(),
        lap: j.lap,
    }
}

/// The load parameters of a job, as recorded.
pub(super) fn params(s: &crate::suite::Suite, j: &Job) -> LoadParams {
    let (sc, p) = (&s.scenarios[j.scenario], &s.profiles[j.profile]);
    LoadParams {
        mode: sc.mode,
        paths: sc.paths.clone(),
        connections: p.connections,
        threads: p.threads.unwrap_or(0),
        duration_s: p.duration,
        requests: p.requests,
        pipeline: p.pipeline,
        rate: p.rate,
        warmup_s: s.warmup,
        message: sc.message.clone(),
        size: sc.size,
        binary: sc.binary,
        reconnect_every: sc.reconnect_every,
        server_cpus: p.cores,
        transport: sc.transport.clone(),
        pool: sc
            .needs_database()
            .then(|| p.pool.or(s.pool).unwrap_or(crate::suite::DEFAULT_POOL)),
    }
}

/// If the server has exited: how, and its log tail.
fn died(proc: &mut Running) -> Option<LapFailure> {
    let status = proc.exited()?;
    Some(
        LapFailure::new(
            FailureKind::ServerExited,
            format!("server exited during the lap ({status})"),
        )
        .with_log_tail(proc.log_tail(LOG_TAIL)),
    )
}

#[path = "quick_check.rs"]
mod quick_check;

#[path = "server_db.rs"]
mod server_db;

#[path = "server_measure.rs"]
mod server_measure;

#[cfg(test)]
#[path = "server_tests.rs"]
pub(super) mod tests;
