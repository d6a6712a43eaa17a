//! How long a run should take: each lap's nominal seconds (its warm-up, raised to the server's
//! `min_warmup_s`, and its duration; [`REQUEST_COUNT_LAP_S`] for a request count) plus an
//! overhead per lap (starting, checking, connecting, stopping) — measured as laps end,
//! [`FIRST_OVERHEAD_S`] until one has. The progress bar's ETA ([`super::Event::Estimate`]) and
//! `run --dry-run`'s estimate are this one sum.

use super::plan::{Job, Plan};
use crate::suite::Suite;
use std::time::{Duration, Instant};

/// The per-lap overhead (start, check, connect, stop) assumed until a lap has been timed.
pub const FIRST_OVERHEAD_S: f64 = 1.0;

/// The nominal length of a lap bound by a request count, not a duration.
pub const REQUEST_COUNT_LAP_S: f64 = 5.0;

/// The suite's warm-up, raised to the server's `min_warmup_s`.
pub(super) fn warmup_s(plan: &Plan, suite: &Suite, j: &Job) -> f64 {
    let min = plan.servers[j.server].manifest.min_warmup_s as f64;
    suite.warmup.max(min)
}

/// Nominal seconds of a lap: its warm-up and its duration (a capacity search: about
/// [`SEARCH_STEPS`] steps, each warmed up).
pub(super) fn expected_s(plan: &Plan, suite: &Suite, j: &Job) -> f64 {
    let p = &suite.profiles[j.profile];
    let one = warmup_s(plan, suite, j) + p.duration.unwrap_or(REQUEST_COUNT_LAP_S);
    match &p.find_max {
        Some(f) => one.max(1.0) * f64::from(f.max_steps.unwrap_or(20).min(SEARCH_STEPS)),
        None => one,
    }
}

/// Steps a capacity search usually takes (a ramp of 4-6 doublings, then 4-5 halvings).
pub const SEARCH_STEPS: u32 = 10;

/// The laps still to run and those run so far in this process, in nominal seconds.
#[derive(Debug, Clone)]
pub(super) struct Estimate {
    started: Instant,
    expected_left: f64,
    laps_left: usize,
    expected_done: f64,
    laps_done: usize,
}

impl Estimate {
    /// Nothing run yet; `pending` are the laps still to run.
    pub(super) fn new<'a>(
        plan: &Plan,
        suite: &Suite,
        pending: impl IntoIterator<Item = &'a Job>,
    ) -> Estimate {
        let left: Vec<f64> = pending
            .into_iter()
            .map(|j| expected_s(plan, suite, j))
            .collect();
        Estimate {
            started: Instant::now(),
            expected_left: left.iter().sum(),
            laps_left: left.len(),
            expected_done: 0.0,
            laps_done: 0,
        }
    }

    /// A lap of `expected` nominal seconds ended (ok or failed).
    pub(super) fn lap_done(&mut self, expected: f64) {
        self.expected_left -= expected;
        self.laps_left = self.laps_left.saturating_sub(1);
        self.expected_done += expected;
        self.laps_done += 1;
    }

    /// Time left: the remaining laps' nominal time plus, for each, the overhead per lap
    /// measured so far (the time that was not warm-up or load).
    pub(super) fn eta(&self) -> Duration {
        let per_lap = if self.laps_done > 0 {
            let elapsed = self.started.elapsed().as_secs_f64();
            (elapsed - self.expected_done) / self.laps_done as f64
        } else {
            FIRST_OVERHEAD_S
        };
        let left = self.expected_left + self.laps_left as f64 * per_lap;
        Duration::from_secs_f64(left.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(expected_left: f64, laps_left: usize) -> Estimate {
        Estimate {
            started: Instant::now(),
            expected_left,
            laps_left,
            expected_done: 0.0,
            laps_done: 0,
        }
    }

    #[test]
    fn the_eta_is_the_laps_left_times_their_length_plus_the_overhead_measured_per_lap() {
        // 4 laps of 1 s warm-up + 2 s, and 1 s of overhead assumed for each until one is timed.
        let mut e = estimate(12.0, 4);
        assert_eq!(e.eta(), Duration::from_secs(16), "nothing done yet");
        // One lap done in 5 s: 2 s of overhead on top of its 3 s; 3 laps left.
        e.lap_done(3.0);
        assert_eq!((e.expected_left, e.laps_left), (9.0, 3));
        e.started = Instant::now() - Duration::from_secs(5);
        let eta = e.eta().as_secs_f64();
        assert!((14.9..15.1).contains(&eta), "3 x (3 + 2): {eta}");
        // Faster than nominal (a request count that ends early) lowers it, never below zero.
        e.started = Instant::now() - Duration::from_secs(1);
        let eta = e.eta().as_secs_f64();
        assert!((2.9..3.1).contains(&eta), "3 x (3 - 2): {eta}");
        e.laps_left = 0;
        e.expected_left = 0.0;
        assert_eq!(e.eta(), Duration::ZERO);
    }
}
