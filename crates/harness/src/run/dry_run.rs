//! `run --dry-run`: the [`Plan`] as data — which laps each server would run, which servers,
//! scenarios and CPU counts are left out and why, how many laps in all and how long they should
//! take ([`Estimate`], the progress bar's arithmetic) — without starting a server, a load
//! or an install, and without creating the results folder. The CLI renders it.

use super::estimate::{self, Estimate};
use super::plan::{self, Job, Plan, ScenarioSkip};
use super::{RunError, RunOptions};
use crate::catalog::Catalog;
use crate::paths::Paths;
use crate::results::{read_records, record::LapRecord, RESULTS_FILE};
use crate::tools::Prepared;
use serde::{Serialize, Serializer};
use serverbench_model::Mode;
use serverbench_model::Tool;
use serverbench_results::env::{Pinning, Skipped};
use serverbench_results::LapKey;
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

/// What a run would do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DryRun {
    /// Suite name.
    pub suite: String,
    /// The load tool.
    pub tool: Tool,
    /// Laps per server x scenario x profile (at most, under `until_ci`).
    pub laps: u32,
    /// `--until-ci`: the rounds past `min_laps` run only for the cells still unclear.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until_ci: Option<serverbench_model::suite::until_ci::StopRule>,
    /// The suite's warm-up before each lap (a server's `min_warmup_s` may raise it: see
    /// [`PlannedRun::warmup_s`]).
    pub warmup_s: f64,
    /// Whether each server gets the quick contract check before its first lap.
    pub quick_verify: bool,
    /// Where server and client would run.
    pub pinning: Pinning,
    /// The servers that would run, in suite order, with their laps.
    pub servers: Vec<ServerLaps>,
    /// Servers that would not run, and why.
    pub skipped: Vec<Skipped>,
    /// Scenarios a server would not run, and why.
    pub scenario_skips: Vec<ScenarioSkip>,
    /// CPU counts of a core sweep left out, and why (from [`crate::suite::Suite::expand_sweeps`]).
    pub sweep_skips: Vec<String>,
    /// Laps planned, those already recorded (`--resume`) included.
    pub total_laps: usize,
    /// Laps already in the resumed folder's `results.jsonl`.
    pub already_recorded: usize,
    /// How long the laps left should take, as the progress bar first estimates it.
    #[serde(rename = "estimate_s", serialize_with = "seconds")]
    pub estimate: Duration,
    /// Why the run would stop before its first lap (a tool that cannot run a lap, TLS on
    /// `--hosts`); the plan is still listed.
    pub refusal: Option<String>,
}

/// One server's laps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerLaps {
    /// Catalog id.
    pub server: String,
    /// Each scenario x profile, in the order they run within a lap.
    pub runs: Vec<PlannedRun>,
}

/// One scenario x profile of a server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedRun {
    /// Scenario name.
    pub scenario: String,
    /// `http`, `tcp-stream` or `tcp-pingpong`.
    pub mode: Mode,
    /// How the requests travel (`https`, `h2 m16`, `https new-conn resume=tickets`); empty for
    /// HTTP/1.1 keep-alive over plain TCP.
    pub transport: String,
    /// Profile label.
    pub profile: String,
    /// The server's CPU count in a core sweep (None: the run's pinning).
    pub server_cpus: Option<u32>,
    /// Laps to run.
    pub laps: u32,
    /// Laps already recorded (`--resume`).
    pub already: u32,
    /// Warm-up before each lap: the suite's, raised to the server's `min_warmup_s`.
    pub warmup_s: f64,
    /// Lap length, or its request count.
    pub duration_s: Option<f64>,
    pub requests: Option<u64>,
}

fn seconds<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// The plan of `opts` against `catalog`; `sweep_skips` are the notes of the suite's
/// [`crate::suite::Suite::expand_sweeps`]. Reads the resumed folder's `results.jsonl` (if
/// any); writes nothing but a scratch folder for the tool check, removed at once.
pub fn dry_run(
    catalog: &Catalog,
    paths: &Paths,
    opts: &RunOptions,
    sweep_skips: Vec<String>,
) -> Result<DryRun, RunError> {
    let suite = &opts.suite;
    let plan = plan::plan(suite, catalog, paths);
    let done = recorded(opts)?;
    let is_done = |j: &&Job| done.contains(&plan.key(suite, j));
    let pending = plan.jobs.iter().filter(|j| !is_done(j));
    let estimate = Estimate::new(&plan, suite, pending).eta();
    let already_recorded = plan.jobs.iter().filter(is_done).count();
    let refusal = refusal(opts, &plan)?;
    let servers = (0..plan.servers.len())
        .map(|si| ServerLaps {
            server: plan.servers[si].id.clone(),
            runs: runs(&plan, opts, &done, si),
        })
        .collect();
    Ok(DryRun {
        suite: suite.name.clone(),
        tool: suite.tool,
        laps: suite.planned_laps(),
        until_ci: suite.until_ci_rule(),
        warmup_s: suite.warmup,
        quick_verify: opts.quick_verify,
        pinning: opts.pinning.clone(),
        servers,
        skipped: plan.skipped.clone(),
        scenario_skips: plan.scenario_skips.clone(),
        sweep_skips,
        total_laps: plan.jobs.len(),
        already_recorded,
        estimate,
        refusal,
    })
}

/// The laps `--resume DIR` finds in DIR (none without `--resume`, or before its first lap).
fn recorded(opts: &RunOptions) -> Result<HashSet<LapKey>, RunError> {
    let Some(dir) = &opts.resume else {
        return Ok(HashSet::new());
    };
    let file = dir.join(RESULTS_FILE);
    if !file.is_file() {
        return Ok(HashSet::new());
    }
    Ok(read_records(&file)?.iter().map(LapRecord::key).collect())
}

/// Why the run would stop before its first lap, if it would.
fn refusal(opts: &RunOptions, plan: &Plan) -> Result<Option<String>, RunError> {
    // The tool is checked as the run checks it, with a scratch folder of its own (wrk writes
    // its script there) and without installing it.
    let scratch = tempfile::tempdir().map_err(|source| RunError::Io {
        path: std::env::temp_dir(),
        source,
    })?;
    let tool = Prepared {
        tool: opts.suite.tool,
        exe: PathBuf::from(opts.suite.tool.to_string()),
        scratch: scratch.path().to_path_buf(),
    };
    Ok(plan
        .check_tool(&tool, &opts.suite)
        .err()
        .map(|e| e.to_string()))
}

/// Server `si`'s scenario x profile runs, in the order of its first lap.
fn runs(plan: &Plan, opts: &RunOptions, done: &HashSet<LapKey>, si: usize) -> Vec<PlannedRun> {
    let suite = &opts.suite;
    let first_lap = plan.jobs.iter().filter(|j| j.server == si && j.lap == 1);
    first_lap
        .map(|first| {
            let laps = plan.jobs.iter().filter(|j| {
                (j.server, j.scenario, j.profile) == (si, first.scenario, first.profile)
            });
            let already = laps.filter(|j| done.contains(&plan.key(suite, j))).count() as u32;
            let (sc, p) = (
                &suite.scenarios[first.scenario],
                &suite.profiles[first.profile],
            );
            PlannedRun {
                scenario: sc.name.clone(),
                mode: sc.work.mode,
                transport: plan::load_params(suite, first).transport_label(),
                profile: p.name.clone(),
                server_cpus: p.cores,
                laps: suite.planned_laps().saturating_sub(already),
                already,
                warmup_s: estimate::warmup_s(plan, suite, first),
                duration_s: p.duration,
                requests: p.requests,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::server::tests::{options, plan, suite};

    #[test]
    fn a_resumed_lap_counts_as_recorded_and_the_rest_as_to_run() {
        let tmp = tempfile::tempdir().unwrap();
        let (plan, opts) = (
            plan("exec true", tmp.path(), 2),
            options(suite(2), tmp.path()),
        );
        let done = HashSet::from([LapKey {
            server: "a".into(),
            scenario: "hello".into(),
            profile: "p".into(),
            lap: 1,
        }]);
        let runs = runs(&plan, &opts, &done, 0);
        let laps: Vec<(&str, u32, u32)> = runs
            .iter()
            .map(|r| (r.scenario.as_str(), r.laps, r.already))
            .collect();
        assert_eq!(laps, [("hello", 1, 1), ("json", 2, 0)]);
        assert_eq!((runs[0].mode, runs[0].transport.as_str()), (Mode::Http, ""));
        assert_eq!((runs[0].warmup_s, runs[0].duration_s), (1.0, Some(2.0)));
    }
}
