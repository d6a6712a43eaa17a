//! Where a run stands: `results.jsonl` (each lap appended as it ends), the laps recorded before
//! (`--resume`), the 1-based position of the next lap, the time left, and the cells
//! `--until-ci` has settled.

use super::context::Context;
use super::estimate::{self, Estimate};
use super::plan::Job;
use super::{Event, RunError};
use crate::results::record::{LapRecord, LapStatus};
use crate::results::{read_records, ResultsWriter, RESULTS_FILE};
use serverbench_analysis::until_ci::{self, CellOutcome, UntilCi};
use serverbench_model::failure::LapFailure;
use serverbench_results::LapKey;
use std::collections::HashSet;
use std::time::Duration;

/// A cell of the results: (server, scenario, profile).
type Cell = (String, String, String);

/// Progress across the whole run.
pub(super) struct Progress {
    writer: ResultsWriter,
    /// Laps recorded before this run (`--resume`).
    done: HashSet<LapKey>,
    /// Laps ended or found done so far.
    index: usize,
    /// The time the laps still to run should take.
    estimate: Estimate,
    /// `--until-ci`: cells whose interval is clear or whose lap limit is reached; their later
    /// rounds are not run.
    settled: HashSet<Cell>,
}

impl Progress {
    /// Opens the results folder's `results.jsonl`; the laps it holds count as done.
    pub(super) fn open(ctx: &Context) -> Result<Progress, RunError> {
        let path = ctx.dir.join(RESULTS_FILE);
        let writer = ResultsWriter::open(&path)?;
        let done = read_records(&path)?.iter().map(LapRecord::key).collect();
        Ok(Progress::new(ctx, writer, done))
    }

    /// Nothing run yet; `done` are the laps recorded before.
    pub(super) fn new(ctx: &Context, writer: ResultsWriter, done: HashSet<LapKey>) -> Progress {
        let pending = ctx.plan.jobs.iter().filter(|j| !done.contains(&ctx.key(j)));
        Progress {
            writer,
            estimate: Estimate::new(ctx.plan, &ctx.opts.suite, pending),
            done,
            index: 0,
            settled: HashSet::new(),
        }
    }

    /// Laps already recorded before this run.
    pub(super) fn already(&self, ctx: &Context) -> usize {
        let jobs = ctx.plan.jobs.iter();
        jobs.filter(|j| self.done.contains(&ctx.key(j))).count()
    }

    /// Time left ([`Estimate::eta`]).
    pub(super) fn eta(&self) -> Duration {
        self.estimate.eta()
    }

    /// The 1-based position of the lap about to start.
    pub(super) fn next(&self) -> usize {
        self.index + 1
    }

    /// Every record in `results.jsonl`.
    pub(super) fn records(&self) -> Result<Vec<LapRecord>, RunError> {
        Ok(read_records(self.writer.path())?)
    }

    /// `--until-ci` before round `lap`: settles the cells that need no more laps; true when
    /// none needs more.
    pub(super) fn settle(&mut self, rule: &UntilCi) -> Result<bool, RunError> {
        let cells = until_ci::cell_states(&self.records()?, rule);
        self.settled = settled(&cells);
        Ok(cells.iter().all(|c| !c.state.needs_more()))
    }

    /// Server `si`'s jobs in lap `lap` that are neither recorded (`--resume`) nor settled
    /// (`--until-ci`); the others count as done for the progress index.
    pub(super) fn pending(&mut self, ctx: &Context, si: usize, lap: u32) -> Vec<Job> {
        let jobs = ctx
            .plan
            .jobs
            .iter()
            .filter(|j| j.server == si && j.lap == lap);
        let jobs: Vec<Job> = jobs.copied().collect();
        let left = |j: &&Job| {
            let k = ctx.key(j);
            !self.done.contains(&k) && !self.settled.contains(&(k.server, k.scenario, k.profile))
        };
        let pending: Vec<Job> = jobs.iter().filter(left).copied().collect();
        self.index += jobs.len() - pending.len();
        pending
    }

    /// Appends a lap's record and reports it with the time left.
    pub(super) fn finish(
        &mut self,
        ctx: &Context,
        j: &Job,
        record: LapRecord,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), RunError> {
        self.writer.append(&record)?;
        let expected = estimate::expected_s(ctx.plan, &ctx.opts.suite, j);
        self.estimate.lap_done(expected);
        self.index += 1;
        on_event(Event::LapFinished {
            record: Box::new(record),
            index: self.index,
            total: ctx.plan.jobs.len(),
        });
        on_event(Event::Estimate { left: self.eta() });
        Ok(())
    }

    /// Records each of `jobs` as failed for `why`.
    pub(super) fn fail_all(
        &mut self,
        ctx: &Context,
        jobs: &[Job],
        why: &LapFailure,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), RunError> {
        for j in jobs {
            let r = ctx.record(j, LapStatus::Failed, Some(why.clone()));
            self.finish(ctx, j, r, on_event)?;
        }
        Ok(())
    }

    #[cfg(test)]
    pub(super) fn index(&self) -> usize {
        self.index
    }
}

/// The cells that need no more laps.
fn settled(cells: &[CellOutcome]) -> HashSet<Cell> {
    let done = cells.iter().filter(|c| !c.state.needs_more());
    let keys = done.map(|c| (c.server.clone(), c.scenario.clone(), c.profile.clone()));
    keys.collect()
}
