//! `history check`: every series' newest run judged two ways, in one table that every output
//! format renders.
//!
//! 1. Against a baseline run (the previous run of the series, a given run, or the newest run of
//!    a branch): the interval of the ratio NEW/BASELINE of the lap medians, by the bootstrap
//!    `compare` uses ([`stats::bootstrap_ratio_ci`]). A regression, or an improvement, only when
//!    the whole interval is beyond the threshold; inconclusive when the interval straddles it.
//! 2. Over the whole series: change points ([`crate::changepoint`]); a shift for the worse at
//!    least as large as the threshold within the newest `recent` runs is a regression, reported
//!    with the run where it happened and the means before and after.

use crate::changepoint::{self, ChangePoint};
use crate::db::{History, HistoryError};
use crate::series::{Measure, Point, SeriesKey};
use crate::settle::{self, Settle};
use serde::Serialize;
use serverbench_analysis::stats;

/// What the newest run is compared with.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Baseline {
    /// The run before it in the series.
    #[default]
    Previous,
    /// A run of the history, by id.
    Run(i64),
    /// The newest earlier run recorded on this branch.
    Branch(String),
}

/// The options of a check.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOptions {
    /// A change smaller than this fraction is not a regression (0.05 for 5%).
    pub threshold: f64,
    /// The baseline of the interval test.
    pub baseline: Baseline,
    /// Change points in the newest `recent` runs count.
    pub recent: usize,
    /// The change-point detector.
    pub changepoints: changepoint::Options,
    /// Only series whose cell matches (see [`SeriesKey::matches`]).
    pub cell: Option<String>,
    /// Only this measure.
    pub measure: Option<Measure>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            threshold: 0.05,
            baseline: Baseline::Previous,
            recent: 10,
            changepoints: changepoint::Options::default(),
            cell: None,
            measure: None,
        }
    }
}

/// A row's verdict, from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Better beyond the threshold.
    Improved,
    /// Within the threshold.
    Ok,
    /// A single run, or no baseline found: nothing to compare.
    NoBaseline,
    /// The interval straddles the threshold.
    Inconclusive,
    /// Worse beyond the threshold.
    Regression,
}

impl Status {
    /// Words for tables.
    pub fn label(self) -> &'static str {
        match self {
            Status::Improved => "improved",
            Status::Ok => "ok",
            Status::NoBaseline => "no baseline",
            Status::Inconclusive => "inconclusive",
            Status::Regression => "REGRESSION",
        }
    }
}

/// A run as rows show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRef {
    /// Its id in the history.
    pub run: i64,
    /// Its commit (short) or `run N`.
    pub label: String,
    /// The median of the measure.
    pub median: f64,
}

/// A change point as rows show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shift {
    /// The first run after the shift.
    pub at: RunRef,
    /// Means of the run medians before and after.
    pub mean_before: f64,
    pub mean_after: f64,
    /// `mean_after / mean_before - 1`.
    pub magnitude: f64,
    /// The t-test's p-value.
    pub p: f64,
    /// Within the newest `recent` runs and worse beyond the threshold.
    pub regression: bool,
}

/// One series and measure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub series: SeriesKey,
    pub measure: Measure,
    /// Runs in the series.
    pub runs: usize,
    pub latest: RunRef,
    /// The bootstrap interval of the latest run's median.
    pub latest_interval: Option<(f64, f64)>,
    pub baseline: Option<RunRef>,
    /// `latest / baseline` of the medians and its bootstrap interval.
    pub ratio: Option<f64>,
    pub interval: Option<(f64, f64)>,
    /// Every change point of the series, oldest first.
    pub shifts: Vec<Shift>,
    pub status: Status,
    /// An inconclusive row: about how many laps per run would decide it.
    pub settle: Option<Settle>,
    /// A p99 row whose laps hold fewer than [`settle::MIN_TAIL_SAMPLES`] latencies above the
    /// p99: that many (the fewest of any lap of the two runs).
    pub thin_tail: Option<u64>,
}

impl Row {
    /// The newest change point that is a regression, else the newest one.
    pub fn shift(&self) -> Option<&Shift> {
        self.shifts
            .iter()
            .rev()
            .find(|s| s.regression)
            .or(self.shifts.last())
    }
}

/// The table of a check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    pub threshold: f64,
    pub rows: Vec<Row>,
}

impl CheckReport {
    /// The worst status of any row (`Ok` for none).
    pub fn worst(&self) -> Status {
        self.rows
            .iter()
            .map(|r| r.status)
            .max()
            .unwrap_or(Status::Ok)
            .max(Status::Ok)
    }
}

/// Checks every series of `history`.
pub fn check(history: &History, opts: &CheckOptions) -> Result<CheckReport, HistoryError> {
    let keys = match &opts.cell {
        Some(p) => history.find_series(p)?,
        None => history.series_keys()?,
    };
    let mut rows = Vec::new();
    for key in keys {
        let points = history.series(&key)?;
        for m in Measure::ALL {
            if opts.measure.is_some_and(|only| only != m) {
                continue;
            }
            if let Some(row) = judge(&key, m, &points, opts) {
                rows.push(row);
            }
        }
    }
    Ok(CheckReport {
        threshold: opts.threshold,
        rows,
    })
}

fn run_ref(p: &Point, m: Measure) -> Option<RunRef> {
    Some(RunRef {
        run: p.run,
        label: p.label(),
        median: p.stats.get(m)?.median,
    })
}

fn find_baseline<'a>(points: &'a [Point], b: &Baseline) -> Option<&'a Point> {
    let (_, earlier) = points.split_last()?;
    match b {
        Baseline::Previous => earlier.last(),
        Baseline::Run(id) => earlier.iter().find(|p| p.run == *id),
        Baseline::Branch(name) => earlier
            .iter()
            .rev()
            .find(|p| p.branch.as_deref() == Some(name)),
    }
}

/// Positive when worse: how far `ratio` is on the bad side of 1.
fn worse_by(m: Measure, ratio: f64) -> f64 {
    if m.bigger_is_better() {
        1.0 - ratio
    } else {
        ratio - 1.0
    }
}

fn interval_status(m: Measure, (low, high): (f64, f64), t: f64) -> Status {
    let (best, worst) = if m.bigger_is_better() {
        (worse_by(m, high), worse_by(m, low))
    } else {
        (worse_by(m, low), worse_by(m, high))
    };
    if best > t {
        Status::Regression
    } else if worst > t {
        Status::Inconclusive
    } else if worst < -t {
        Status::Improved
    } else if best < -t {
        Status::Inconclusive
    } else {
        Status::Ok
    }
}

fn judge(key: &SeriesKey, m: Measure, points: &[Point], opts: &CheckOptions) -> Option<Row> {
    let with: Vec<&Point> = points.iter().filter(|p| p.stats.get(m).is_some()).collect();
    let latest_point = *with.last()?;
    let latest = run_ref(latest_point, m)?;
    let owned: Vec<Point> = with.iter().map(|p| (*p).clone()).collect();
    let base = find_baseline(&owned, &opts.baseline);
    let seed = stats::seed_for(&format!("check/{}/{m}", key.label()));
    let interval = base.and_then(|b| {
        stats::bootstrap_ratio_ci(
            b.laps(m),
            latest_point.laps(m),
            stats::DEFAULT_CONFIDENCE,
            stats::DEFAULT_RESAMPLES,
            seed,
        )
        .map(|i| (i.low, i.high))
    });
    let baseline = base.and_then(|b| run_ref(b, m));
    let ratio = baseline.as_ref().map(|b| latest.median / b.median);
    let mut status = match interval {
        Some(i) => interval_status(m, i, opts.threshold),
        None => Status::NoBaseline,
    };
    let medians: Vec<f64> = owned
        .iter()
        .filter_map(|p| p.stats.get(m))
        .map(|e| e.median)
        .collect();
    let recent_from = medians.len().saturating_sub(opts.recent);
    let shifts: Vec<Shift> = changepoint::detect(&medians, &opts.changepoints)
        .into_iter()
        .filter_map(|c: ChangePoint| {
            let regression =
                c.index >= recent_from && worse_by(m, 1.0 + c.magnitude()) > opts.threshold;
            Some(Shift {
                at: run_ref(&owned[c.index], m)?,
                mean_before: c.mean_before,
                mean_after: c.mean_after,
                magnitude: c.magnitude(),
                p: c.p,
                regression,
            })
        })
        .collect();
    if shifts.iter().any(|s| s.regression) {
        status = Status::Regression;
    }
    let settle = match (status, ratio, interval, base) {
        (Status::Inconclusive, Some(r), Some(i), Some(b)) => {
            let laps = b.laps(m).len().min(latest_point.laps(m).len()) as u64;
            settle::settle(r, i, opts.threshold, laps)
        }
        _ => None,
    };
    let thin_tail = settle::thin_tail(
        m,
        &[
            latest_point.fewest_requests,
            base.and_then(|b| b.fewest_requests),
        ],
    );
    Some(Row {
        series: key.clone(),
        measure: m,
        runs: owned.len(),
        latest_interval: latest_point.stats.get(m).map(|e| (e.low, e.high)),
        latest,
        baseline,
        ratio,
        interval,
        shifts,
        status,
        settle,
        thin_tail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_wholly_beyond_the_threshold_is_a_regression_and_one_straddling_it_inconclusive()
    {
        let t = 0.05;
        assert_eq!(
            interval_status(Measure::Rps, (0.85, 0.92), t),
            Status::Regression
        );
        assert_eq!(
            interval_status(Measure::Rps, (0.92, 0.99), t),
            Status::Inconclusive
        );
        assert_eq!(interval_status(Measure::Rps, (0.97, 1.02), t), Status::Ok);
        assert_eq!(
            interval_status(Measure::Rps, (1.08, 1.12), t),
            Status::Improved
        );
        assert_eq!(
            interval_status(Measure::P99, (1.08, 1.12), t),
            Status::Regression
        );
        assert_eq!(
            interval_status(Measure::P99, (1.01, 1.07), t),
            Status::Inconclusive
        );
        assert_eq!(
            interval_status(Measure::P99, (0.85, 0.9), t),
            Status::Improved
        );
    }

    #[test]
    fn an_improvement_needs_the_whole_interval_past_the_threshold() {
        let t = 0.05;
        assert_eq!(
            interval_status(Measure::Rps, (1.02, 1.08), t),
            Status::Inconclusive
        );
        assert_eq!(
            interval_status(Measure::P99, (0.92, 0.98), t),
            Status::Inconclusive
        );
        assert_eq!(
            interval_status(Measure::Rps, (1.06, 1.08), t),
            Status::Improved
        );
    }
}
