//! One measured lap of a server: the warm-up here (over hosts, the client hosts warm up before
//! their barrier), then the load through the run's [`Placement`] with every role's process tree
//! sampled, the database's statements counted, and the failure named when something died.

use super::context::Context;
use super::plan::Job;
use super::running::Running;
use super::server_db::LapDatabase;
use crate::results::record::{LapRecord, LapStatus, LoadParams, Measurement};
use crate::run::placement::{Lap as MeasuredLap, LapError, Pid, Placement};
use crate::run::{disturbance, hosts_capacity};
use crate::run::{run_load, Event, LoadError};
use crate::tools::Target;
use serverbench_model::answers;
use serverbench_model::failure::{FailureKind, LapFailure};
use serverbench_results::{LapKey, Role};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Lines of server log kept in a failure.
const LOG_TAIL: usize = 20;

/// One measured lap: its job, the server it loads, and where it stands in the run.
pub(super) struct Lap<'r> {
    pub(super) job: Job,
    pub(super) proc: &'r mut Running,
    pub(super) target: &'r Target,
    /// 1-based position among all planned laps.
    pub(super) index: usize,
    /// Time left for the whole run.
    pub(super) eta: Duration,
}

/// Where this run's roles are placed.
fn placement<'c>(ctx: &'c Context) -> Placement<'c> {
    match &ctx.opts.hosts {
        Some(run) => Placement::Hosts {
            run,
            tls: ctx.hosts_tls.as_ref(),
        },
        None => Placement::Local {
            tool: &ctx.tool,
            client_cpus: &ctx.opts.pinning.client_cpus,
        },
    }
}

/// The CPUs of the server, the client and the database (empty: every CPU).
fn pinned_cpus(ctx: &Context) -> Vec<usize> {
    let p = &ctx.opts.pinning;
    let db = ctx.opts.database.cpus.iter().flatten();
    let all = p.server_cpus.iter().chain(&p.client_cpus).chain(db);
    all.copied().collect()
}

impl Lap<'_> {
    /// Warm-up and the measured lap; `None` when interrupted.
    pub(super) fn measure(
        self,
        ctx: &Context,
        db: &mut LapDatabase,
        on_event: &mut dyn FnMut(Event),
    ) -> Option<LapRecord> {
        let j = &self.job;
        let placement = placement(ctx);
        let LapKey {
            server,
            scenario,
            profile,
            lap,
        } = ctx.key(j);
        let params = ctx.params(j);
        if placement.warms_up_apart() && params.warmup_s > 0.0 {
            on_event(Event::WarmupStarted {
                server: server.clone(),
                scenario: scenario.clone(),
                profile: profile.clone(),
                seconds: params.warmup_s,
            });
            if let Err(why) = warm_up(ctx, self.proc, self.target, &params)? {
                return Some(ctx.record(j, LapStatus::Failed, Some(why)));
            }
        }
        on_event(Event::LapStarted {
            server,
            scenario,
            profile,
            lap,
            index: self.index,
            total: ctx.plan.jobs.len(),
            eta: Some(self.eta),
        });
        let mut record = ctx.record(j, LapStatus::Ok, None);
        let t0 = Instant::now();
        let uses_db = params.pool.is_some();
        let server_role = self.proc.sampled_pid().map(|p| (Role::Server, p));
        let roles: Vec<(Role, Pid)> = server_role.into_iter().chain(db.role(uses_db)).collect();
        // Its statements are counted from when the measured load starts (over hosts: at the
        // release of the client hosts, after their warm-up).
        let mut before = None;
        let mut at_start = || before = db.snapshot(uses_db);
        // Over hosts the load runs on machines whose /proc is not ours: no disturbance record.
        let machine = placement.warms_up_apart().then(disturbance::before);
        let measured = lap_load(ctx, &params, self.target, &roles, &mut at_start);
        record.wall_s = t0.elapsed().as_secs_f64();
        for (role, stats) in measured.stats {
            record.set_stats(role, stats);
        }
        record.hosts = measured.hosts;
        match measured.outcome {
            Err(LapError::Cancelled) => return None,
            Err(e) => {
                record.status = LapStatus::Failed;
                record.failure = Some(failure(e, self.proc));
                record.load = measured.kept;
            }
            Ok(m) => {
                if let Some(why) = judged(&m, &params, self.proc) {
                    record.status = LapStatus::Failed;
                    record.failure = Some(why);
                }
                record.load = Some(m);
            }
        }
        if let Some(machine) = machine.filter(|_| record.load.is_some()) {
            record.disturbance = Some(disturbance::after(machine, &record, pinned_cpus(ctx)));
        }
        db.after(&mut record, before);
        Some(record)
    }
}

/// The measured load of `params` through the run's placement; over the hosts a `find_max` lap
/// is searched step by step from here (`hosts_capacity.rs`), each step split across the client
/// hosts, where the load tool's own search could not split its steps.
fn lap_load(
    ctx: &Context,
    params: &LoadParams,
    target: &Target,
    roles: &[(Role, Pid)],
    at_start: &mut (dyn FnMut() + Send),
) -> MeasuredLap {
    let cancel = &ctx.opts.cancel;
    match placement(ctx) {
        Placement::Hosts { run, tls } if params.find_max.is_some() => {
            hosts_capacity::measure((run, tls), params, target, roles, at_start, cancel)
        }
        p => p.measure(params, target, roles, at_start, cancel),
    }
}

/// The warm-up here (not recorded): `None` when interrupted, the failure when it failed.
fn warm_up(
    ctx: &Context,
    proc: &mut Running,
    target: &Target,
    params: &LoadParams,
) -> Option<Result<(), LapFailure>> {
    let cancel = &ctx.opts.cancel;
    let mut warm = params.clone();
    warm.duration_s = Some(params.warmup_s);
    warm.requests = None;
    // A capacity lap warms up closed loop, once: its search warms up before every step.
    warm.find_max = None;
    let client_cpus = &ctx.opts.pinning.client_cpus;
    match run_load(&ctx.tool, &warm, target, client_cpus, None, cancel) {
        Err(LoadError::Cancelled) => None,
        Err(_) if cancel.load(Ordering::SeqCst) => None,
        Err(e) => Some(Err(died(proc).unwrap_or_else(|| {
            LapFailure::new(FailureKind::Warmup, format!("warm-up failed: {e}"))
                .with_log_tail(proc.log_tail(LOG_TAIL))
        }))),
        Ok(_) => Some(Ok(())),
    }
}

/// If the server has exited: how, and its log tail.
pub(super) fn died(proc: &mut Running) -> Option<LapFailure> {
    let status = proc.exited()?;
    Some(
        LapFailure::new(
            FailureKind::ServerExited,
            format!("server exited during the lap ({status})"),
        )
        .with_log_tail(proc.log_tail(LOG_TAIL)),
    )
}

/// Why a lap that measured failed all the same: its server died, or it answered nothing, fewer
/// requests than it left in flight, or stopped answering part-way ([`answers::judge`], the
/// same for a lap here and over the hosts); with the server's log tail.
fn judged(m: &Measurement, params: &LoadParams, proc: &mut Running) -> Option<LapFailure> {
    if let Some(dead) = died(proc) {
        return Some(dead);
    }
    let fault = answers::judge(&m.answers(params)?)?;
    Some(fault.failure().with_log_tail(proc.log_tail(LOG_TAIL)))
}

/// Why a measured load failed, with the server's state: how it died, or its log tail when the
/// fault may be its own.
fn failure(e: LapError, proc: &mut Running) -> LapFailure {
    match e {
        LapError::Cancelled => LapFailure::new(FailureKind::NotRun, "interrupted"),
        LapError::Local(e) => died(proc).unwrap_or_else(|| {
            LapFailure::new(FailureKind::Load, e.to_string()).with_log_tail(proc.log_tail(LOG_TAIL))
        }),
        LapError::Prepare(e) => LapFailure::new(FailureKind::Load, e.to_string()),
        LapError::Search(why) => died(proc).unwrap_or_else(|| {
            LapFailure::new(FailureKind::Load, why).with_log_tail(proc.log_tail(LOG_TAIL))
        }),
        LapError::Hosts {
            faults,
            server_host,
        } => {
            let faults: Vec<String> = faults.iter().map(|e| e.to_string()).collect();
            let why = LapFailure::new(FailureKind::Hosts, faults.join("; "));
            if let Some(dead) = died(proc) {
                LapFailure {
                    detail: format!("{}; {}", why.detail, dead.detail),
                    ..dead
                }
            } else if server_host {
                why.with_log_tail(proc.log_tail(LOG_TAIL))
            } else {
                why
            }
        }
    }
}
