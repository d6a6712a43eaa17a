//! One measured lap of a server: the warm-up here (over hosts, the client hosts warm up before
//! their barrier), then the load through the run's [`Placement`] with every role's process tree
//! sampled, the database's statements counted, and the failure named when something died.

use super::{died, Job, RunState, Running, LOG_TAIL};
use crate::results::record::{LapRecord, LapStatus, LoadParams};
use crate::run::disturbance;
use crate::run::placement::{LapError, Pid, Placement};
use crate::run::{run_load, Event, LoadError};
use crate::tools::Target;
use serverbench_model::failure::FailureKind;
use serverbench_model::failure::LapFailure;
use serverbench_results::{LapKey, Role};
use std::sync::atomic::Ordering;
use std::time::Instant;

impl RunState<'_> {
    /// Where this run's roles are placed.
    fn placement(&self) -> Placement<'_> {
        match &self.opts.hosts {
            Some(run) => Placement::Hosts {
                run,
                tls: self.hosts_tls.as_ref(),
            },
            None => Placement::Local {
                tool: self.tool,
                client_cpus: &self.opts.pinning.client_cpus,
            },
        }
    }

    /// The CPUs of the server, the client and the database (empty: every CPU).
    fn pinned_cpus(&self) -> Vec<usize> {
        let p = &self.opts.pinning;
        let db = self.opts.database.cpus.iter().flatten();
        let all = p.server_cpus.iter().chain(&p.client_cpus).chain(db);
        all.copied().collect()
    }

    /// Warm-up and one measured lap; `None` when interrupted.
    pub(super) fn measure(
        &mut self,
        proc: &mut Running,
        target: &Target,
        j: &Job,
        on_event: &mut dyn FnMut(Event),
    ) -> Option<LapRecord> {
        let placement = self.placement();
        let LapKey {
            server,
            scenario,
            profile,
            lap,
        } = self.key(j);
        let params = self.params(j);
        if placement.warms_up_apart() && params.warmup_s > 0.0 {
            on_event(Event::WarmupStarted {
                server: server.clone(),
                scenario: scenario.clone(),
                profile: profile.clone(),
                seconds: params.warmup_s,
            });
            if let Err(why) = self.warm_up(proc, target, &params)? {
                return Some(self.record(j, LapStatus::Failed, Some(why)));
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
        let uses_db = params.pool.is_some();
        let server_role = proc.sampled_pid().map(|p| (Role::Server, p));
        let roles: Vec<(Role, Pid)> = server_role
            .into_iter()
            .chain(self.database_role(uses_db))
            .collect();
        // Its statements are counted from when the measured load starts (over hosts: at the
        // release of the client hosts, after their warm-up).
        let mut db = self.db.take();
        let mut before = None;
        let mut at_start = || before = db.as_mut().filter(|_| uses_db).and_then(|d| d.snapshot());
        let placement = self.placement();
        // Over hosts the load runs on machines whose /proc is not ours: no disturbance record.
        let machine = placement.warms_up_apart().then(disturbance::before);
        let measured = placement.measure(&params, target, &roles, &mut at_start, &self.opts.cancel);
        self.db = db;
        record.wall_s = t0.elapsed().as_secs_f64();
        for (role, stats) in measured.stats {
            record.set_stats(role, stats);
        }
        record.hosts = measured.hosts;
        match measured.outcome {
            Err(LapError::Cancelled) => return None,
            Err(e) => {
                record.status = LapStatus::Failed;
                record.failure = Some(failure(e, proc));
            }
            Ok(m) => {
                record.load = Some(m);
                if let Some(why) = died(proc) {
                    record.status = LapStatus::Failed;
                    record.failure = Some(why);
                }
            }
        }
        if let Some(machine) = machine.filter(|_| record.load.is_some()) {
            record.disturbance = Some(disturbance::after(machine, &record, self.pinned_cpus()));
        }
        self.database_after(&mut record, before);
        Some(record)
    }

    /// The warm-up here (not recorded): `None` when interrupted, the failure when it failed.
    fn warm_up(
        &self,
        proc: &mut Running,
        target: &Target,
        params: &LoadParams,
    ) -> Option<Result<(), LapFailure>> {
        let cancel = &self.opts.cancel;
        let mut warm = params.clone();
        warm.duration_s = Some(params.warmup_s);
        warm.requests = None;
        match run_load(
            self.tool,
            &warm,
            target,
            &self.opts.pinning.client_cpus,
            cancel,
        ) {
            Err(LoadError::Cancelled) => None,
            Err(_) if cancel.load(Ordering::SeqCst) => None,
            Err(e) => Some(Err(died(proc).unwrap_or_else(|| {
                LapFailure::new(FailureKind::Warmup, format!("warm-up failed: {e}"))
                    .with_log_tail(proc.log_tail(LOG_TAIL))
            }))),
            Ok(_) => Some(Ok(())),
        }
    }
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
