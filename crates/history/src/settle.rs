//! What a check cannot decide, said plainly: how many laps per run would settle an
//! inconclusive interval, and whether a p99 was judged from too few latencies to mean much.
//!
//! **Laps to decide.** The bootstrap interval of a ratio of medians narrows about as 1/√n with
//! n laps per run (the standard error of a median is ∝ 1/√n: Wilcox, *Introduction to Robust
//! Estimation and Hypothesis Testing*, 4th ed., §3.5). An interval of half-width `w` around the
//! ratio `r` straddles a threshold `b` at distance `d = |r − b|`; it stops straddling once its
//! half-width is below `d`, that is after about `n·(w/d)²` laps per run. This is an estimate
//! from one pair of runs, not a promise: the next runs' spread may differ.
//!
//! **Too few latencies above a percentile.** A lap's p99 is set by the slowest 1% of its
//! requests; with k latencies above it, the count there is binomial and its position moves by
//! about ±√k samples between identical laps, so below [`MIN_TAIL_SAMPLES`] (±30% at 10) a p99
//! compares noise with noise. A lap of 230 requests holds about two.

use crate::series::Measure;
use serde::Serialize;

/// The fewest latencies above the p99, per lap, for the p99 to be judged.
pub const MIN_TAIL_SAMPLES: u64 = 10;

/// Laps per run beyond which an estimate is reported as "too close to the threshold".
pub const MAX_LAPS_ESTIMATE: u64 = 1000;

/// What would settle an inconclusive row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Settle {
    /// Laps per run now (the fewer of the two runs).
    pub laps_now: u64,
    /// About how many laps per run would decide, or `None` when the ratio sits so close to the
    /// threshold that more than [`MAX_LAPS_ESTIMATE`] would be needed.
    pub laps_needed: Option<u64>,
}

impl Settle {
    /// `about 14 laps per run would decide (now 3)`.
    pub fn text(&self) -> String {
        match self.laps_needed {
            Some(n) => format!(
                "about {n} laps per run would decide (now {})",
                self.laps_now
            ),
            None => format!(
                "the ratio is too close to the threshold: more than {MAX_LAPS_ESTIMATE} laps per \
                 run would be needed (now {})",
                self.laps_now
            ),
        }
    }
}

/// How many laps per run would make the interval `(low, high)` around `ratio` stop straddling
/// the thresholds `1 ± threshold`; `None` when it straddles neither.
pub fn settle(ratio: f64, (low, high): (f64, f64), threshold: f64, laps: u64) -> Option<Settle> {
    let half_width = (ratio - low).max(high - ratio);
    let straddled: Vec<f64> = [1.0 - threshold, 1.0 + threshold]
        .into_iter()
        .filter(|b| low < *b && *b < high)
        .collect();
    if straddled.is_empty() || laps == 0 || half_width <= 0.0 {
        return None;
    }
    let distance = straddled
        .iter()
        .map(|b| (ratio - b).abs())
        .fold(f64::INFINITY, f64::min);
    let needed = laps as f64 * (half_width / distance).powi(2);
    let laps_needed = (needed.is_finite() && needed <= MAX_LAPS_ESTIMATE as f64)
        .then(|| (needed.ceil() as u64).max(laps + 1));
    Some(Settle {
        laps_now: laps,
        laps_needed,
    })
}

/// The latencies above the p99 in a lap of `requests` requests (rounded down).
pub fn tail_samples(requests: u64) -> u64 {
    requests / 100
}

/// For a p99 row: the fewest latencies above the p99 in any lap of the two runs, when below
/// [`MIN_TAIL_SAMPLES`]; `None` for other measures, or when the request counts are unknown
/// (laps recorded before the history kept them).
pub fn thin_tail(m: Measure, fewest_requests: &[Option<u64>]) -> Option<u64> {
    if m != Measure::P99 {
        return None;
    }
    let fewest = fewest_requests.iter().flatten().min()?;
    let tail = tail_samples(*fewest);
    (tail < MIN_TAIL_SAMPLES).then_some(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_straddling_the_threshold_needs_more_laps_by_the_square_of_its_excess() {
        // The series: ratio ~1.032, interval [0.998, 1.067] against +5%, 3 laps.
        let s = settle(1.032, (0.998, 1.067), 0.05, 3).unwrap();
        assert_eq!(s.laps_now, 3);
        // half-width 0.035, distance to 1.05 is 0.018: 3 * (0.035/0.018)^2 = 11.3 -> 12.
        assert_eq!(s.laps_needed, Some(12));
        assert!(s.text().contains("about 12 laps per run"), "{}", s.text());
    }

    #[test]
    fn an_interval_inside_or_beyond_the_threshold_needs_nothing() {
        assert_eq!(settle(1.0, (0.97, 1.02), 0.05, 3), None);
        assert_eq!(settle(0.88, (0.85, 0.92), 0.05, 3), None);
    }

    #[test]
    fn a_ratio_on_the_threshold_cannot_be_settled_by_a_sane_number_of_laps() {
        let s = settle(1.0501, (1.02, 1.08), 0.05, 5).unwrap();
        assert_eq!(s.laps_needed, None);
        assert!(s.text().contains("too close"), "{}", s.text());
    }

    #[test]
    fn a_p99_from_two_latencies_per_lap_is_thin_and_one_from_a_thousand_is_not() {
        assert_eq!(thin_tail(Measure::P99, &[Some(230), Some(5000)]), Some(2));
        assert_eq!(thin_tail(Measure::P99, &[Some(100_000), Some(5000)]), None);
        assert_eq!(thin_tail(Measure::Rps, &[Some(230)]), None);
        assert_eq!(
            thin_tail(Measure::P99, &[None, None]),
            None,
            "unknown counts"
        );
    }
}
