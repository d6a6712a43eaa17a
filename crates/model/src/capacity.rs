//! The result of a capacity search (`serverbench load --find-max`), serialized as
//! `spec/capacity-result.schema.json`: the highest rate that met the SLO, why the search
//! stopped, and the curve of every step it measured.

use crate::result::LoadResult;
use crate::slo::{Observed, Slo};
use serde::{Deserialize, Serialize};

/// One measured step of the search: the load asked for, what the client achieved, the
/// figures the goals are judged on and the verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Requests/s asked for (open loop).
    pub rate_target: f64,
    /// Requests/s sent over the measured span (answered or not).
    pub rate_achieved: f64,
    /// Requests measured (successes plus errors).
    pub requests: u64,
    /// How long it was measured, seconds (after its warm-up).
    pub duration_s: f64,
    /// Latency from the intended send time (coordinated omission corrected), µs.
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// Failed requests, percent of all.
    pub errors_pct: f64,
    /// Requests that could not start on time (a connection was not free 1 ms after due).
    pub late: u64,
    /// The client's threads were busy or waiting for a CPU ≥ 90% of the time.
    pub client_saturated: bool,
    /// The connections the step loaded over, and the requests on them still unanswered when
    /// it ended: as many in flight as connections means every connection was waiting on the
    /// server (absent from results written before they were kept).
    #[serde(default)]
    pub connections: u32,
    #[serde(default)]
    pub in_flight_at_end: u64,
    /// Over `--hosts`: the client hosts that were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub saturated_hosts: Vec<String>,
    /// Server CPU µs per request when the server's process is known (the harness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_us_per_request: Option<f64>,
    /// Every goal held and the client kept the schedule.
    pub met: bool,
    /// The goals missed, e.g. `p99 7.2ms > 5ms`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub misses: Vec<String>,
    /// Why this step is the client's limit rather than the server's (the search then bisects
    /// below it, as below a missed goal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_limit: Option<String>,
}

impl Step {
    /// The step an open-loop (`-R`) load measured (not yet judged).
    pub fn from_load(r: &LoadResult) -> Step {
        let errors = r.errors.total();
        // Errors judged on an answer (a status, a body, a grpc-status) are among the requests.
        let all = r.requests + errors - r.errors.on_answers().min(errors);
        Step {
            rate_target: r.rate_target.unwrap_or(0.0),
            rate_achieved: r.rate_achieved.unwrap_or(r.rps),
            requests: all,
            duration_s: r.duration_s,
            p50_us: r.latency_us.p50,
            p90_us: r.latency_us.p90,
            p99_us: r.latency_us.p99,
            p999_us: r.latency_us.p999,
            errors_pct: if all == 0 {
                0.0
            } else {
                errors as f64 * 100.0 / all as f64
            },
            late: r.late.unwrap_or(0),
            client_saturated: r.client_saturated,
            connections: r.connections,
            in_flight_at_end: r.in_flight_at_end,
            ..Step::default()
        }
    }

    /// The figures the SLO is judged on.
    pub fn observed(&self) -> Observed {
        Observed {
            p50_us: self.p50_us,
            p90_us: self.p90_us,
            p99_us: self.p99_us,
            p999_us: self.p999_us,
            errors_pct: self.errors_pct,
        }
    }
}

/// Why the search stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// The highest passing and lowest failing rates are within the precision.
    #[default]
    Converged,
    /// The step limit came first; the capacity lies between the bracket's ends.
    StepLimit,
    /// The bracket closed on a rate the client could not send: the server met the goal at every
    /// rate the client could send, so the capacity is at least the highest passing rate and
    /// the client, not the server, is the limit.
    ClientLimit,
    /// The goal failed at the lowest rate tried: no capacity was found.
    GoalMissedAtStart,
    /// The search reached its highest allowed rate with the goal still met.
    RateCeiling,
    /// A step could not be measured (the server died, refused connections…).
    Aborted,
}

impl Ending {
    /// How the terminal and the reports say it.
    pub fn describe(self) -> &'static str {
        match self {
            Ending::Converged => "converged within the precision",
            Ending::StepLimit => "stopped at the step limit",
            Ending::ClientLimit => "the client's limit: the server may hold more",
            Ending::GoalMissedAtStart => "the goal failed at the lowest rate",
            Ending::RateCeiling => "the goal held up to the highest rate allowed",
            Ending::Aborted => "a step could not be measured",
        }
    }
}

/// The whole search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityResult {
    /// The URL(s) or `host:port` loaded.
    pub target: Vec<String>,
    /// What was loaded: its rates are requests/s (`http`), calls/s (`grpc`) or messages/s.
    /// Absent for HTTP, and from searches recorded before it was kept.
    #[serde(default, skip_serializing_if = "crate::Mode::is_http")]
    pub mode: crate::Mode,
    /// The goal, as written (`p99<=5ms,errors<=0.1%`).
    pub slo: Slo,
    /// Relative precision asked for (0.05: ±5%).
    pub precision: f64,
    pub max_steps: u32,
    /// The highest rate that met the goal (requests/s); `None` when none did.
    pub capacity_rps: Option<f64>,
    /// The lowest rate that missed it (`None` when none did): the capacity lies in between.
    pub failed_at_rps: Option<f64>,
    /// The client's own open-loop ceiling, requests/s: the most it sent in a step it could not
    /// keep (its threads busy or waiting for a CPU ≥ 90% of the time, or short of the rate). `None` when every step was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_ceiling_rps: Option<f64>,
    pub ending: Ending,
    /// One line on why it stopped (the client's limit, the engine's error…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Seconds the whole search took, warm-ups included.
    pub search_s: f64,
    /// Every step, in the order measured.
    pub steps: Vec<Step>,
}

impl CapacityResult {
    /// The step at the capacity (the last one measured at the highest rate that met the goal);
    /// `None` when no rate did.
    pub fn capacity_step(&self) -> Option<&Step> {
        let rate = self.capacity_rps?;
        self.steps
            .iter()
            .rev()
            .find(|s| s.met && s.rate_target == rate)
    }
}

/// A suite profile's `find_max = { slo = "p99<=5ms", precision = 5, max_steps = 20,
/// start_rate = 500 }`: each lap is a capacity search (the profile's `duration` is each step's
/// length), handed to `serverbench load --find-max` as flags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindMax {
    pub slo: Slo,
    /// Percent (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// Requests/s of the first step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_rate: Option<f64>,
}

impl FindMax {
    /// The flags of `serverbench load` that run this search.
    pub fn args(&self) -> Vec<String> {
        let mut a = vec![
            "--find-max".to_string(),
            "--slo".into(),
            self.slo.to_string(),
        ];
        if let Some(p) = self.precision {
            a.extend(["--precision".into(), format!("{p}%")]);
        }
        if let Some(n) = self.max_steps {
            a.extend(["--max-steps".into(), n.to_string()]);
        }
        if let Some(r) = self.start_rate {
            a.extend(["--start-rate".into(), r.to_string()]);
        }
        a
    }

    /// The longest a search can take with steps of `step_s` after `warmup_s` each (plus a
    /// second per step to connect): what a harness waits before calling it hung.
    pub fn longest_s(&self, step_s: f64, warmup_s: f64) -> f64 {
        f64::from(self.max_steps.unwrap_or(20)) * (step_s + warmup_s.max(1.0) + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_reads_errors_as_a_share_of_every_request() {
        let mut r = LoadResult {
            requests: 990,
            rate_target: Some(1000.0),
            rate_achieved: Some(999.0),
            ..LoadResult::default()
        };
        r.errors.timeout = 10;
        r.latency_us.p99 = 4000.0;
        let s = Step::from_load(&r);
        assert_eq!(s.requests, 1000);
        assert!((s.errors_pct - 1.0).abs() < 1e-9);
        assert_eq!(
            (s.rate_target, s.rate_achieved, s.p99_us),
            (1000.0, 999.0, 4000.0)
        );
    }

    #[test]
    fn a_step_counts_calls_failed_by_their_answer_once() {
        let mut r = LoadResult {
            requests: 1000,
            ..LoadResult::default()
        };
        r.errors.verdict = 500;
        r.errors.timeout = 10;
        let s = Step::from_load(&r);
        assert_eq!(s.requests, 1010);
        assert!(
            (s.errors_pct - 51.0 / 1.01).abs() < 1e-9,
            "{}",
            s.errors_pct
        );
        r.errors = Default::default();
        r.errors.status = 250;
        assert!((Step::from_load(&r).errors_pct - 25.0).abs() < 1e-9);
    }

    #[test]
    fn a_suites_find_max_becomes_the_load_flags() {
        let f: FindMax =
            toml::from_str("slo = \"p99<=5ms\"\nmax_steps = 8\nprecision = 2.5").unwrap();
        assert_eq!(
            f.args(),
            [
                "--find-max",
                "--slo",
                "p99<=5ms",
                "--precision",
                "2.5%",
                "--max-steps",
                "8"
            ]
        );
        assert!(toml::from_str::<FindMax>("slo = \"p95<=5ms\"").is_err());
    }
}
