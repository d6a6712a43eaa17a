//! The capacity search: the highest open-loop rate at which a server meets an [`Slo`].
//!
//! A pure function over a callback that measures one step at a rate and returns its
//! [`Step`]; `serverbench load --find-max` hands it one that runs the engine's open loop (`-R`,
//! latency from the intended send time, so coordinated omission is corrected) after a warm-up.
//!
//! **Bracketing.** From [`Plan::start`] the rate grows by [`Plan::growth`] (×2) while the goal
//! holds; the first miss closes the bracket `[highest met, lowest missed)`, which is then
//! bisected until `missed ≤ met × (1 + precision)` (default 5%: the answer is at most 5% under
//! the knee, as far as the steps can tell) or [`Plan::max_steps`] steps were measured. A miss
//! at the first rate ends the search with no capacity ([`Ending::GoalMissedAtStart`]).
//!
//! **The client's limit.** A step where the client could not keep the schedule says nothing
//! about the server: its threads were busy or waiting for a CPU ≥ 90% of the time, or it sent fewer than 95% of the asked requests
//! while every latency goal still held (a server at its limit shows it in the latency, which
//! counts from the intended send time; a client that cannot send shows only a shortfall). Such
//! a rate closes the bracket from above as a missed goal does, and the search bisects below it:
//! the knee may lie under what the client can send. When the bracket closes on the client's
//! rate (the server met the goal at every rate the client could send), the search ends with
//! [`Ending::ClientLimit`] and the capacity is a lower bound. Either way the most the client
//! sent in a step it could not keep is its open-loop ceiling ([`Outcome::client_ceiling`]).
//!
//! **Requests per step.** A quantile q is read from the slowest `(1 − q)·n` of n samples; with
//! at least 100 samples beyond it (`n ≥ 100 / (1 − q)`: 10 000 for p99, 100 000 for p99.9,
//! 1 000 for p90) its rank is known to about ±10% (a Poisson count of 100 has a standard
//! deviation of 10), which is what a ±5% bracket on the rate needs near the knee, where
//! latency climbs steeply. [`step_duration`] turns that into a duration at each rate, between
//! a floor (a second: queues must have time to build) and a ceiling (so a low first rate does
//! not take minutes); a step that still falls short of the count is flagged in the curve.

use serverbench_model::answers::{self, Answers};
use serverbench_model::capacity::{CapacityResult, Ending, FindMax, Step};
use serverbench_model::slo::Slo;
use serverbench_model::{LoadResult, LoadSpec};
use std::time::Duration;

/// A step's warm-up when none is asked: time for connections to open and queues to settle at
/// the step's rate before it is measured.
pub const STEP_WARMUP: Duration = Duration::from_secs(1);
/// The shortest and longest a step lasts when its length is not fixed ([`step_length`]).
const STEP_FLOOR: Duration = Duration::from_secs(1);
const STEP_CAP: Duration = Duration::from_secs(10);

/// How the search walks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// The first rate, requests/s.
    pub start: f64,
    /// Factor between ramp steps (> 1).
    pub growth: f64,
    /// Relative width at which the bracket is done (0.05: 5%).
    pub precision: f64,
    /// At most this many steps.
    pub max_steps: u32,
    /// Never ask for more than this, requests/s.
    pub ceiling: f64,
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            start: 500.0,
            growth: 2.0,
            precision: 0.05,
            max_steps: 20,
            ceiling: 10_000_000.0,
        }
    }
}

impl Plan {
    /// The plan of a suite profile's `find_max` (its precision in percent; the defaults for
    /// what it leaves out), or why it cannot run, naming the key.
    pub fn of(f: &FindMax) -> Result<Plan, PlanError> {
        let d = Plan::default();
        let plan = Plan {
            start: f.start_rate.unwrap_or(d.start),
            precision: f.precision.map_or(d.precision, |p| p / 100.0),
            max_steps: f.max_steps.unwrap_or(d.max_steps),
            ..d
        };
        if !(plan.precision > 0.0 && plan.precision < 1.0) {
            return Err(PlanError::Precision);
        }
        if plan.max_steps < 2 {
            return Err(PlanError::MaxSteps);
        }
        if !(plan.start > 0.0 && plan.start <= plan.ceiling) {
            return Err(PlanError::StartRate {
                ceiling: plan.ceiling,
            });
        }
        Ok(plan)
    }
}

/// Why a suite profile's `find_max` cannot run, naming the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("find_max precision: a percentage above 0 and below 100")]
    Precision,
    #[error("find_max max_steps: at least 2 (a bracket needs a pass and a miss)")]
    MaxSteps,
    #[error("find_max start_rate: above 0 and at most {ceiling}")]
    StartRate {
        /// The highest rate the search asks for, requests/s.
        ceiling: f64,
    },
}

/// A step that measured nothing about the server, naming the rate asked and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("at {rate:.0}/s: {why}")]
pub struct StepError {
    /// The rate asked, requests/s.
    pub rate: f64,
    /// Why nothing was measured (no request succeeded, none was answered...).
    pub why: String,
}

/// What the search found (the caller adds the target, the goal and the time taken).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// Highest rate that met the goal.
    pub capacity: Option<f64>,
    /// Lowest rate that missed it.
    pub failed_at: Option<f64>,
    /// Lowest rate the client could not send (the bracket's top when under `failed_at`).
    pub client_limit_at: Option<f64>,
    /// The most the client sent in a step it could not keep, requests/s.
    pub client_ceiling: Option<f64>,
    pub ending: Ending,
    /// Why it stopped, when that needs saying.
    pub note: Option<String>,
    pub steps: Vec<Step>,
}

/// Requests a step needs for the SLO's highest quantile: `100 / (1 − q)` (see the module
/// comment); 1 000 when the goal is on errors only.
pub fn samples_needed(slo: &Slo) -> u64 {
    slo.top_quantile()
        .map_or(1000, |q| (100.0 / (1.0 - q)).round() as u64)
}

/// How long to measure a step at `rate` to collect [`samples_needed`], within `[floor, cap]`.
pub fn step_duration(slo: &Slo, rate: f64, floor: Duration, cap: Duration) -> Duration {
    let secs = samples_needed(slo) as f64 / rate.max(1.0);
    Duration::from_secs_f64(secs).clamp(floor, cap.max(floor))
}

/// How long a step at `rate` is measured: `fixed` (a profile's `duration`, `-d`), else long
/// enough for [`samples_needed`], between 1 and 10 seconds.
pub fn step_length(slo: &Slo, rate: f64, fixed: Option<Duration>) -> Duration {
    fixed.unwrap_or_else(|| step_duration(slo, rate, STEP_FLOOR, STEP_CAP))
}

/// `spec` as one step: open loop at `rate`, measured for `length` after `warmup`, no request
/// count; nothing else changed.
pub fn step_spec(spec: &LoadSpec, rate: f64, length: Duration, warmup: Duration) -> LoadSpec {
    LoadSpec {
        rate: Some(rate),
        duration: Some(length),
        warmup,
        requests: None,
        ..spec.clone()
    }
}

/// The step an open-loop load measured (not yet judged), or why it measured nothing about the
/// server (no request succeeded, or none was answered: its latency would meet any goal),
/// naming the rate.
pub fn step_of(r: &LoadResult) -> Result<Step, StepError> {
    let unanswered = (r.requests == 0)
        .then(|| answers::judge(&Answers::of(r)).map(|f| f.describe("step")))
        .flatten();
    match r.no_success().or(unanswered) {
        Some(why) => Err(StepError {
            rate: r.rate_target.unwrap_or(0.0),
            why,
        }),
        None => Ok(Step::from_load(r)),
    }
}

impl Outcome {
    /// The whole search as recorded: `target` loaded (in `mode`) for `slo` with `plan`,
    /// `aborted` the cause when a step could not be measured (it becomes the note), `search_s`
    /// its time.
    pub fn into_result(
        self,
        (target, mode): (Vec<String>, serverbench_model::Mode),
        (slo, plan): (&Slo, &Plan),
        aborted: Option<String>,
        search_s: f64,
    ) -> CapacityResult {
        CapacityResult {
            target,
            mode,
            slo: slo.clone(),
            precision: plan.precision,
            max_steps: plan.max_steps,
            capacity_rps: self.capacity,
            failed_at_rps: self.failed_at,
            client_ceiling_rps: self.client_ceiling,
            ending: self.ending,
            note: aborted.or(self.note),
            search_s,
            steps: self.steps,
        }
    }
}

/// The URL(s) or `host:port` a load spec loads.
pub fn target_of(spec: &LoadSpec) -> Vec<String> {
    match spec.work.mode.is_tcp() {
        true => vec![spec.target.clone()],
        false => spec.urls(),
    }
}

/// Judges `step` against `slo`: its misses, whether it is the client's limit, and `met`.
///
/// A rate that fell short while requests failed (≥ 1%) is the server's or the network's doing
/// (a connection reset or timed out stops sending on it; a client host that died mid-step
/// leaves its share unsent), never the client's limit: it is a miss, whatever the goal. So is
/// a rate that fell short, with a client that was not saturated, while every connection was
/// waiting on the server at the end: the requests not sent were queued behind the server's
/// answers (in a short step the corrected latency may not yet show that backlog).
pub fn judge(slo: &Slo, step: &mut Step) {
    step.misses = slo.misses(&step.observed());
    if short(step) && step.errors_pct >= 1.0 && !step.client_saturated {
        step.misses.push(format!(
            "sent {:.0}/s of {:.0}/s with {:.1}% errors",
            step.rate_achieved, step.rate_target, step.errors_pct
        ));
    } else if short(step) && !step.client_saturated && backlogged(step) {
        step.misses.push(format!(
            "sent {:.0}/s of {:.0}/s: every connection was waiting on the server ({} in flight \
             at the end)",
            step.rate_achieved, step.rate_target, step.in_flight_at_end
        ));
    }
    step.client_limit = client_limit(step);
    step.met = step.misses.is_empty() && step.client_limit.is_none();
}

/// Under 95% of the rate asked was sent.
fn short(step: &Step) -> bool {
    step.rate_achieved < 0.95 * step.rate_target
}

/// Every connection had a request unanswered when the step ended.
fn backlogged(step: &Step) -> bool {
    step.connections > 0 && step.in_flight_at_end >= u64::from(step.connections)
}

fn client_limit(step: &Step) -> Option<String> {
    if step.client_saturated {
        let who = match step.saturated_hosts.as_slice() {
            [] => "the client's CPU was".to_string(),
            [one] => format!("client host {one}'s CPU was"),
            many => format!("the CPUs of client hosts {} were", many.join(", ")),
        };
        return Some(format!(
            "at {:.0}/s {who} ≥90% busy (or waiting for a CPU)",
            step.rate_target
        ));
    }
    if short(step) && step.misses.is_empty() {
        return Some(format!(
            "at {:.0}/s the client sent only {:.0}/s (<95%) while the goal held: it could not \
             keep the schedule",
            step.rate_target, step.rate_achieved
        ));
    }
    None
}

/// Runs the search: `measure(rate)` measures one step (the search judges it). An error from
/// `measure` stops the search ([`Ending::Aborted`]); it is returned beside the steps so far.
pub fn search<E>(
    slo: &Slo,
    plan: &Plan,
    mut measure: impl FnMut(f64) -> Result<Step, E>,
) -> (Outcome, Option<E>) {
    let mut out = Outcome::default();
    let mut rate = plan.start.min(plan.ceiling);
    loop {
        if out.steps.len() as u32 >= plan.max_steps {
            out.ending = Ending::StepLimit;
            break;
        }
        let mut step = match measure(rate) {
            Ok(s) => s,
            Err(e) => {
                out.ending = Ending::Aborted;
                return (out, Some(e));
            }
        };
        step.rate_target = rate;
        judge(slo, &mut step);
        out.record(step);
        match out.next(plan) {
            Ok(next) => rate = next,
            Err((ending, note)) => {
                out.ending = ending;
                out.note = note;
                break;
            }
        }
    }
    (out, None)
}

impl Outcome {
    /// Takes in a judged step: the highest met, the lowest missed, the lowest the client could
    /// not send and the most it sent then.
    fn record(&mut self, step: Step) {
        let rate = step.rate_target;
        let lowest = |at: Option<f64>| Some(at.map_or(rate, |r| r.min(rate)));
        if step.client_limit.is_some() {
            self.client_limit_at = lowest(self.client_limit_at);
            let sent = step.rate_achieved;
            self.client_ceiling = Some(self.client_ceiling.map_or(sent, |c| c.max(sent)));
        } else if step.met {
            self.capacity = Some(self.capacity.map_or(rate, |c| c.max(rate)));
        } else {
            self.failed_at = lowest(self.failed_at);
        }
        self.steps.push(step);
    }

    /// The bracket's top: the lowest rate that missed the goal or that the client could not
    /// send, and whether it is the client's.
    fn top(&self) -> Option<(f64, bool)> {
        match (self.failed_at, self.client_limit_at) {
            (Some(f), Some(c)) if c < f => Some((c, true)),
            (Some(f), _) => Some((f, false)),
            (None, Some(c)) => Some((c, true)),
            (None, None) => None,
        }
    }

    /// The next rate, or why the search ends (with its note).
    fn next(&self, plan: &Plan) -> Result<f64, (Ending, Option<String>)> {
        let last = self.steps.last().expect("a step was recorded");
        match (self.capacity, self.top()) {
            (None, Some((rate, true))) => Err((
                Ending::ClientLimit,
                Some(format!(
                    "{}; the first rate, {rate:.0}/s, is above what the client can send: \
                     lower --start-rate, or add client threads (-t) or hosts (--hosts)",
                    last.client_limit.as_deref().unwrap_or_default()
                )),
            )),
            (None, _) => Err((
                Ending::GoalMissedAtStart,
                Some(format!(
                    "the goal failed at the first rate, {:.0}/s: {}",
                    last.rate_target,
                    last.misses.join(", ")
                )),
            )),
            (Some(met), None) if met >= plan.ceiling => Err((Ending::RateCeiling, None)),
            (Some(met), None) => Ok((met * plan.growth).min(plan.ceiling)),
            (Some(met), Some((top, client))) if top <= met * (1.0 + plan.precision) => match client
            {
                true => Err((Ending::ClientLimit, Some(self.client_note(met)))),
                false => Err((Ending::Converged, None)),
            },
            (Some(met), Some((top, _))) => Ok((met + top) / 2.0),
        }
    }

    /// Why a search that ended at the client's limit is a lower bound, and what would find
    /// the knee.
    fn client_note(&self, met: f64) -> String {
        let why = self
            .steps
            .iter()
            .find(|s| Some(s.rate_target) == self.client_limit_at)
            .and_then(|s| s.client_limit.clone())
            .unwrap_or_default();
        format!(
            "capacity ≥ {met:.0}/s (client limit {:.0}/s): the goal held at every rate the \
             client could send ({why}); more client threads (-t) or client hosts (--hosts) \
             would find the server's knee",
            self.client_ceiling.unwrap_or(0.0)
        )
    }
}

#[cfg(test)]
#[path = "capacity_tests.rs"]
mod tests;
