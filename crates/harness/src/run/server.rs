//! One server's share of one lap: start it, check it once, warm up and measure each scenario x
//! profile, record failures, stop it.

use super::estimate::{self, Estimate};
use super::hosts::RemoteServer;
use super::hosts_tls::HostsTls;
use super::plan::{Job, Plan};
use super::running::Running;
use super::{run_load, Event, LoadError, RunError, RunOptions};
use crate::catalog::{Feature, Server};
use crate::paths::{slug, Paths};
use crate::process::{self, ServerProcess, StartOptions};
use crate::results::record::{FailureKind, LapFailure, LapRecord, LapStatus, LoadParams};
use crate::results::{clock, ResultsWriter, LOGS_DIR};
use crate::sampler::{Sampler, INTERVAL};
use crate::tools::{Prepared, Target};
use serverbench_results::env::Skipped;
use serverbench_results::LapKey;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

/// Lines of server log kept in a failure.
const LOG_TAIL: usize = 20;

type Key = LapKey;

/// One start of a server: which server, which lap, how many CPUs (a core sweep).
#[derive(Debug, Clone, Copy)]
struct Turn {
    si: usize,
    lap: u32,
    cores: Option<u32>,
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
            hosts: None,
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
        let mut cores: Vec<Option<u32>> = pending.iter().map(|j| self.cores(j)).collect();
        cores.dedup();
        for c in cores {
            let group: Vec<Job> = pending
                .iter()
                .filter(|j| self.cores(j) == c)
                .copied()
                .collect();
            let turn = Turn { si, lap, cores: c };
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
        Turn { si, lap, cores }: Turn,
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
        let (mut proc, target) = match self.start_or_attach(paths, server, lap, cores) {
            Ok(p) => p,
            Err(why) => {
                on_event(Event::ServerFailed {
                    server: server.id.clone(),
                    lap,
                    why: why.clone(),
                });
                let why = LapFailure::from_text(FailureKind::Start, &why);
                return self.fail_all(pending, &why, writer, on_event);
            }
        };
        if let Err(why) = self.verify_once(si, server, &target, on_event) {
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
            .filter(|j| !self.done.contains(&self.key(j)))
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
            if record.status == LapStatus::Failed && proc.exited().is_some() {
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
    ) -> Result<(Running, Target), String> {
        if server.is_attached() {
            let a = self.opts.attached.iter().find(|a| a.name == server.id);
            let a = a.ok_or_else(|| format!("{}: no URL given for it", server.id))?;
            return Ok((Running::Attached { pid: a.pid }, a.target.clone()));
        }
        if let Some(h) = &self.opts.hosts {
            let (cpus, workers) = self.server_cpus(cores);
            let log = self.log_path(server, lap);
            let tls = self.hosts_tls.as_ref();
            let tls = tls.filter(|_| process::serves_tls(server));
            let (remote, target) = RemoteServer::start(h, server, workers, &cpus, tls, &log)?;
            return Ok((Running::Remote(remote), target));
        }
        let (proc, target) = self.start(paths, server, lap, cores)?;
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
    ) -> Result<(ServerProcess, Target), String> {
        let host = &self.opts.host;
        let port = process::free_port(host).map_err(|e| format!("no free port on {host}: {e}"))?;
        let echo_port = if server.implements(Feature::Echo) {
            Some(process::free_port(host).map_err(|e| format!("no free port on {host}: {e}"))?)
        } else {
            None
        };
        let mut so = StartOptions::new(server, port, echo_port, self.log_path(server, lap));
        so.host = host.clone();
        (so.cpus, so.workers) = self.server_cpus(cores);
        if let (true, Some(files)) = (process::serves_tls(server), &self.tls_files) {
            let port =
                process::free_port(host).map_err(|e| format!("no free port on {host}: {e}"))?;
            so.tls = Some(process::TlsListener {
                port,
                files: files.clone(),
            });
        }
        let proc = process::start(server, paths, &so).map_err(|e| e.to_string())?;
        let target = Target {
            host: host.clone(),
            port,
            echo_port,
            tls_port: so.tls.as_ref().map(|t| t.port),
            ca_file: so.tls.as_ref().map(|t| t.files.cert.clone()),
        };
        Ok((proc, target))
    }

    /// Warm-up and one measured lap; `None` when interrupted.
    fn measure(
        &mut self,
        proc: &mut Running,
        target: &Target,
        j: &Job,
        on_event: &mut dyn FnMut(Event),
    ) -> Option<LapRecord> {
        if self.opts.hosts.is_some() {
            return self.measure_on_hosts(proc, target, j, on_event);
        }
        let LapKey {
            server,
            scenario,
            profile,
            lap,
        } = self.key(j);
        let params = self.params(j);
        let cpus = &self.opts.pinning.client_cpus;
        let cancel = &self.opts.cancel;
        if params.warmup_s > 0.0 {
            on_event(Event::WarmupStarted {
                server: server.clone(),
                scenario: scenario.clone(),
                profile: profile.clone(),
                seconds: params.warmup_s,
            });
            let mut warm = params.clone();
            warm.duration_s = Some(params.warmup_s);
            warm.requests = None;
            match run_load(self.tool, &warm, target, cpus, cancel) {
                Err(LoadError::Cancelled) => return None,
                Err(_) if cancel.load(Ordering::SeqCst) => return None,
                Err(e) => {
                    let why = died(proc).unwrap_or_else(|| {
                        LapFailure::new(FailureKind::Warmup, format!("warm-up failed: {e}"))
                            .with_log_tail(proc.log_tail(LOG_TAIL))
                    });
                    return Some(self.record(j, LapStatus::Failed, Some(why)));
                }
                Ok(_) => {}
            }
        }
        on_event(Event::LapStarted {
            server,
            scenario,
            profile,
            lap,
            index: self.index + 1,
            total: self.plan.jobs.len(),
            eta: Some(self.eta()),
        });
        let mut record = self.record(j, LapStatus::Ok, None);
        let t0 = Instant::now();
        let sampler = proc
            .pid()
            .map(|pid| Sampler::start(pid, INTERVAL, cpus.clone()));
        let result = run_load(self.tool, &params, target, cpus, cancel);
        let requests = result.as_ref().ok().and_then(|o| o.measurement.requests);
        record.server_stats = sampler.map(|s| s.finish(requests));
        record.wall_s = t0.elapsed().as_secs_f64();
        match result {
            Err(LoadError::Cancelled) => return None,
            Err(_) if cancel.load(Ordering::SeqCst) => return None,
            Err(e) => {
                record.status = LapStatus::Failed;
                record.failure = Some(died(proc).unwrap_or_else(|| {
                    LapFailure::new(FailureKind::Load, e.to_string())
                        .with_log_tail(proc.log_tail(LOG_TAIL))
                }));
            }
            Ok(out) => {
                record.load = Some(out.measurement);
                if let Some(why) = died(proc) {
                    record.status = LapStatus::Failed;
                    record.failure = Some(why);
                }
            }
        }
        Some(record)
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
        server_cpus: p.cores,
        transport: sc.transport.clone(),
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

#[path = "server_hosts.rs"]
mod on_hosts;

#[cfg(test)]
#[path = "server_tests.rs"]
pub(super) mod tests;
