//! The rounds of a run and one server's share of each: start it, check it once, warm up and
//! measure each scenario x profile, record failures, stop it. The run's fixed inputs are its
//! [`Context`]; what changes as laps end is held by concern: [`Progress`] (results and time
//! left), [`Checks`] (the quick contract check), [`LapDatabase`] (the database of `/db` laps).

use super::context::Context;
use super::errors::QuickCheckFailed;
use super::plan::Job;
use super::progress::Progress;
use super::quick_check::Checks;
use super::running::Running;
use super::server_db::LapDatabase;
use super::server_measure::Lap;
use super::start::Turn;
use super::{db_floor, Event, RunError, RunOutcome};
use crate::results::record::LapStatus;
use crate::tools::Target;
use serverbench_analysis::until_ci::{self, UntilCi};
use serverbench_model::failure::{FailureKind, LapFailure};

/// A run under way.
pub(super) struct RunState<'c> {
    ctx: &'c Context<'c>,
    progress: Progress,
    checks: Checks,
    db: LapDatabase,
}

impl<'c> RunState<'c> {
    pub(super) fn new(ctx: &'c Context<'c>, progress: Progress) -> Self {
        RunState {
            ctx,
            progress,
            checks: Checks::default(),
            db: LapDatabase::new(ctx),
        }
    }

    /// Every round (lap 1 of every server, then lap 2...) until the planned laps are run,
    /// `--until-ci` settles every cell, or Ctrl-C; the database's floor after each round.
    pub(super) fn rounds(&mut self, on_event: &mut dyn FnMut(Event)) -> Result<(), RunError> {
        let (ctx, plan) = (self.ctx, self.ctx.plan);
        on_event(Event::Started {
            dir: ctx.dir.clone(),
            servers: plan.servers.iter().map(|s| s.id.clone()).collect(),
            total: plan.jobs.len(),
            already: self.progress.already(ctx),
        });
        on_event(Event::Estimate {
            left: self.progress.eta(),
        });
        let rule = ctx.opts.suite.until_ci_rule().map(UntilCi::from);
        for lap in 1..=ctx.opts.suite.planned_laps() {
            if let Some(rule) = rule.filter(|r| lap > r.min_laps) {
                if self.progress.settle(&rule)? {
                    break;
                }
            }
            for si in 0..plan.servers.len() {
                if ctx.cancelled() {
                    break;
                }
                self.server_lap(si, lap, on_event)?;
            }
            db_floor::measure(ctx, self.db.running(), lap, on_event);
        }
        Ok(())
    }

    /// The database stopped, the servers excluded during the run added to `env.json`'s
    /// skipped ones, and what the run produced.
    pub(super) fn finish(
        mut self,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<RunOutcome, RunError> {
        let ctx = self.ctx;
        self.db.stop();
        let records = self.progress.records()?;
        let rule = ctx.opts.suite.until_ci_rule().map(UntilCi::from);
        let until_ci = rule.map(|r| until_ci::cell_states(&records, &r));
        let mut skipped = ctx.plan.skipped.clone();
        skipped.extend(self.checks.excluded(&ctx.plan.servers));
        let interrupted = ctx.cancelled();
        if interrupted {
            on_event(Event::Interrupted);
        } else if skipped.len() > ctx.plan.skipped.len() {
            ctx.record_skipped(&skipped)?;
        }
        Ok(RunOutcome {
            records,
            until_ci,
            dir: ctx.dir.clone(),
            skipped,
            interrupted,
        })
    }

    /// Runs server `si`'s laps numbered `lap`: one start per CPU count (a core sweep) and
    /// pool size (`DATABASE_POOL`).
    pub(super) fn server_lap(
        &mut self,
        si: usize,
        lap: u32,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), RunError> {
        let ctx = self.ctx;
        let pending = self.progress.pending(ctx, si, lap);
        let start_of = |j: &Job| (ctx.cores(j), ctx.pool(j));
        let mut starts: Vec<(Option<u32>, Option<u32>)> = Vec::new();
        for j in &pending {
            if !starts.contains(&start_of(j)) {
                starts.push(start_of(j));
            }
        }
        for (cores, pool) in starts {
            let group = pending.iter().filter(|&j| start_of(j) == (cores, pool));
            let group: Vec<Job> = group.copied().collect();
            let server = &ctx.plan.servers[si];
            let turn = Turn {
                si,
                server,
                lap,
                cores,
                pool,
            };
            self.server_turn(&turn, &group, on_event)?;
        }
        Ok(())
    }

    /// Starts a server once for its turn and runs `pending` on it.
    fn server_turn(
        &mut self,
        turn: &Turn,
        pending: &[Job],
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), RunError> {
        let (ctx, id) = (self.ctx, &turn.server.id);
        if pending.is_empty() {
            return Ok(());
        }
        if let Some(why) = self.checks.exclusion(turn.si) {
            let why = LapFailure::new(FailureKind::NotRun, format!("not run: {why}"));
            return self.progress.fail_all(ctx, pending, &why, on_event);
        }
        on_event(Event::ServerStarting {
            server: id.clone(),
            lap: turn.lap,
        });
        if self.db.starts_with(turn.pool) {
            let on = ctx.opts.hosts.as_ref();
            let on = on.map_or(String::new(), |h| format!(" on {}", h.database.name));
            let port = ctx.opts.database.port;
            let what = format!("starting the database{on} (port {port})");
            on_event(Event::Preparing { what });
        }
        let env = match self.db.env(turn.server, turn.pool) {
            Ok(env) => env,
            Err(e) => {
                let why = LapFailure::new(FailureKind::Database, e.to_string());
                return self.progress.fail_all(ctx, pending, &why, on_event);
            }
        };
        let (mut proc, target) = match turn.start(ctx, env) {
            Ok(p) => p,
            Err(e) => {
                let why = e.to_string();
                on_event(Event::ServerFailed {
                    server: id.clone(),
                    lap: turn.lap,
                    why: why.clone(),
                });
                let why = LapFailure::from_text(FailureKind::Start, &why);
                return self.progress.fail_all(ctx, pending, &why, on_event);
            }
        };
        if let Err(QuickCheckFailed(e)) = self.checks.verify_once(ctx, turn, &target, on_event) {
            let why = format!("failed the quick contract check: {e}");
            proc.stop();
            on_event(Event::ServerFailed {
                server: id.clone(),
                lap: turn.lap,
                why: why.clone(),
            });
            on_event(Event::ServerSkipped {
                server: id.clone(),
                why: why.clone(),
            });
            let why = LapFailure::from_text(FailureKind::Contract, &why);
            return self.progress.fail_all(ctx, pending, &why, on_event);
        }
        self.run_jobs(&mut proc, &target, pending, on_event)?;
        proc.stop();
        Ok(())
    }

    /// Measures each job on the running server; once it dies, the rest are recorded as not run.
    fn run_jobs(
        &mut self,
        proc: &mut Running,
        target: &Target,
        pending: &[Job],
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), RunError> {
        let ctx = self.ctx;
        let mut dead: Option<LapFailure> = None;
        for j in pending {
            if ctx.cancelled() {
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
                self.progress.fail_all(ctx, &[*j], &why, on_event)?;
                continue;
            }
            let lap = Lap {
                job: *j,
                proc: &mut *proc,
                target,
                index: self.progress.next(),
                eta: self.progress.eta(),
            };
            let Some(record) = lap.measure(ctx, &mut self.db, on_event) else {
                break; // interrupted: nothing recorded, `--resume` redoes this lap
            };
            let db_lost = self.db.take_lost();
            if record.status == LapStatus::Failed && (db_lost || proc.exited().is_some()) {
                dead = record.failure.clone();
                on_event(Event::ServerFailed {
                    server: record.server.clone(),
                    lap: j.lap,
                    why: dead.as_ref().map(|d| d.to_string()).unwrap_or_default(),
                });
            }
            self.progress.finish(ctx, j, record, on_event)?;
        }
        Ok(())
    }

    #[cfg(test)]
    pub(super) fn progress(&mut self) -> &mut Progress {
        &mut self.progress
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
pub(super) mod tests;
