//! Comparing two results folders: for every server x scenario x profile present in both, the
//! ratio NEW/OLD of the median of its figure ([`crate::figure`]: req/s, a search's capacity, or
//! at a fixed rate the CPU a request cost) with a bootstrap interval, and a verdict.
//!
//! The interval resamples each side's laps independently ([`stats::bootstrap_ratio_ci`]); with
//! fewer than three laps on a side it is the widest ratio the laps allow. A change is
//! significant when the interval excludes 1.0.

use crate::figure::{lap_figure, Figure};
use crate::stats::{self, Interval};
use serde::Serialize;
use serverbench_results::record::{LapRecord, LapStatus};

/// What the interval says about NEW against OLD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval is above 1.0.
    Faster,
    /// The whole interval is below 1.0.
    Slower,
    /// CPU per request: the whole interval is below 1.0.
    Cheaper,
    /// CPU per request: the whole interval is above 1.0.
    Costlier,
    /// The interval contains 1.0 (or there is none).
    NoSignificantChange,
}

impl Verdict {
    /// Words for tables: `faster`, `slower`, `cheaper`, `costlier`, `no significant change`.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Cheaper => "cheaper",
            Verdict::Costlier => "costlier",
            Verdict::NoSignificantChange => "no significant change",
        }
    }
}

/// One server x scenario x profile present in both folders.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareRow {
    pub scenario: String,
    pub profile: String,
    pub server: String,
    /// What the medians are of.
    pub figure: Figure,
    pub old_laps: usize,
    pub new_laps: usize,
    pub old_median: f64,
    pub new_median: f64,
    /// `new_median / old_median`.
    pub ratio: f64,
    pub interval: Option<Interval>,
    pub verdict: Verdict,
}

/// A server x scenario x profile with successful laps on one side only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmatched {
    pub scenario: String,
    pub profile: String,
    pub server: String,
}

/// The comparison of two sets of laps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub rows: Vec<CompareRow>,
    pub only_old: Vec<Unmatched>,
    pub only_new: Vec<Unmatched>,
}

impl Comparison {
    /// Rows worse by more than `threshold` (0.05 for "5%") over their whole interval: below
    /// `1 - threshold` for req/s and capacity, above `1 + threshold` for CPU per request.
    pub fn regressions_above(&self, threshold: f64) -> Vec<&CompareRow> {
        self.rows
            .iter()
            .filter(|r| {
                r.interval
                    .is_some_and(|i| match r.figure.bigger_is_better() {
                        true => i.high < 1.0 - threshold,
                        false => i.low > 1.0 + threshold,
                    })
            })
            .collect()
    }
}

/// Scenario, profile, server and what the figures are of: a cell compared on different figures
/// on the two sides (CPU read on one only) is not compared.
type Key = (String, String, String, Figure);

/// Successful laps' figures per key, keys in order of first appearance.
fn figures_by_key(records: &[LapRecord]) -> Vec<(Key, Vec<f64>)> {
    let mut out: Vec<(Key, Vec<f64>)> = Vec::new();
    for r in records.iter().filter(|r| r.status == LapStatus::Ok) {
        let Some((figure, v)) = lap_figure(r) else {
            continue;
        };
        let key = (
            r.scenario.clone(),
            r.profile.clone(),
            r.server.clone(),
            figure,
        );
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, laps)) => laps.push(v),
            None => out.push((key, vec![v])),
        }
    }
    out
}

fn verdict(figure: Figure, interval: Option<Interval>) -> Verdict {
    let Some(i) = interval else {
        return Verdict::NoSignificantChange;
    };
    match (figure.bigger_is_better(), i.low > 1.0, i.high < 1.0) {
        (true, true, _) => Verdict::Faster,
        (true, _, true) => Verdict::Slower,
        (false, true, _) => Verdict::Costlier,
        (false, _, true) => Verdict::Cheaper,
        _ => Verdict::NoSignificantChange,
    }
}

fn unmatched((scenario, profile, server, _): &Key) -> Unmatched {
    Unmatched {
        scenario: scenario.clone(),
        profile: profile.clone(),
        server: server.clone(),
    }
}

/// Compares NEW against OLD, in the order the keys appear in OLD.
pub fn compare(old: &[LapRecord], new: &[LapRecord]) -> Comparison {
    let (old, new) = (figures_by_key(old), figures_by_key(new));
    let mut rows = Vec::new();
    let mut only_old = Vec::new();
    for (key, o) in &old {
        let Some((_, n)) = new.iter().find(|(k, _)| k == key) else {
            only_old.push(unmatched(key));
            continue;
        };
        let (Some(om), Some(nm)) = (stats::median(o), stats::median(n)) else {
            continue;
        };
        let seed = stats::seed_for(&format!("compare/{}/{}/{}", key.0, key.1, key.2));
        let interval = stats::bootstrap_ratio_ci(
            o,
            n,
            stats::DEFAULT_CONFIDENCE,
            stats::DEFAULT_RESAMPLES,
            seed,
        );
        rows.push(CompareRow {
            scenario: key.0.clone(),
            profile: key.1.clone(),
            server: key.2.clone(),
            figure: key.3,
            old_laps: o.len(),
            new_laps: n.len(),
            old_median: om,
            new_median: nm,
            ratio: if om > 0.0 { nm / om } else { f64::NAN },
            interval,
            verdict: verdict(key.3, interval),
        });
    }
    let only_new = new
        .iter()
        .filter(|(k, _)| !old.iter().any(|(o, _)| o == k))
        .map(|(k, _)| unmatched(k))
        .collect();
    Comparison {
        rows,
        only_old,
        only_new,
    }
}

/// Why a `--fail-above` (or `--fail-on-regression`) threshold was refused, naming the value given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ThresholdError {
    /// Not a number, with or without `%`.
    #[error("`{0}` is not a percentage (try `5%`)")]
    NotAPercentage(String),
    /// A number outside [0%, 100%).
    #[error("`{0}` must be between 0% and 100%")]
    OutOfRange(String),
}

/// Parses a `--fail-above` threshold: `5%`, `5` (percent) or `0.05` (a fraction below 1).
pub fn parse_threshold(text: &str) -> Result<f64, ThresholdError> {
    let t = text.trim();
    let (number, percent) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (t, false),
    };
    let x: f64 = number
        .parse()
        .map_err(|_| ThresholdError::NotAPercentage(text.to_string()))?;
    let fraction = if percent || x >= 1.0 { x / 100.0 } else { x };
    if !(0.0..1.0).contains(&fraction) {
        return Err(ThresholdError::OutOfRange(text.to_string()));
    }
    Ok(fraction)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::Tool;
    use serverbench_results::record::{LoadParams, Measurement};

    fn lap(server: &str, n: u32, rps: f64) -> LapRecord {
        LapRecord {
            suite: "t".into(),
            server: server.into(),
            scenario: "hello".into(),
            profile: "c50".into(),
            lap: n,
            status: LapStatus::Ok,
            failure: None,
            tool: Tool::Serverbench,
            started_at: "2026-01-01T00:00:00Z".into(),
            wall_s: 1.0,
            params: LoadParams::default(),
            load: Some(Measurement {
                rps: Some(rps),
                ..Measurement::default()
            }),
            server_stats: None,
            roles: Default::default(),
            database: None,
            hosts: None,
            disturbance: None,
        }
    }

    fn laps(server: &str, rps: &[f64]) -> Vec<LapRecord> {
        rps.iter()
            .enumerate()
            .map(|(i, r)| lap(server, i as u32 + 1, *r))
            .collect()
    }

    #[test]
    fn a_clear_slowdown_is_slower_and_a_regression_above_five_percent() {
        let old = laps("a", &[100.0, 101.0, 102.0]);
        let new = laps("a", &[80.0, 81.0, 82.0]);
        let c = compare(&old, &new);
        assert_eq!(c.rows[0].verdict, Verdict::Slower);
        assert!((c.rows[0].ratio - 81.0 / 101.0).abs() < 1e-12);
        assert_eq!(c.regressions_above(0.05).len(), 1);
        assert!(c.regressions_above(0.25).is_empty());
    }

    #[test]
    fn overlapping_laps_are_no_significant_change() {
        let c = compare(
            &laps("a", &[100.0, 90.0, 110.0]),
            &laps("a", &[95.0, 105.0, 100.0]),
        );
        assert_eq!(c.rows[0].verdict, Verdict::NoSignificantChange);
        assert!(c.regressions_above(0.0).is_empty());
    }

    #[test]
    fn servers_on_one_side_only_are_listed_not_compared() {
        let c = compare(&laps("a", &[1.0, 1.0, 1.0]), &laps("b", &[1.0, 1.0, 1.0]));
        assert!(c.rows.is_empty());
        assert_eq!(c.only_old[0].server, "a");
        assert_eq!(c.only_new[0].server, "b");
    }

    #[test]
    fn thresholds_accept_percent_and_fractions() {
        assert_eq!(parse_threshold("5%"), Ok(0.05));
        assert_eq!(parse_threshold("5"), Ok(0.05));
        assert_eq!(parse_threshold("0.05"), Ok(0.05));
        assert!(parse_threshold("abc").is_err());
        assert!(parse_threshold("150%").is_err());
    }

    #[test]
    fn at_a_fixed_rate_the_cpu_per_request_is_compared_and_more_of_it_is_a_regression() {
        let at_rate = |cpu: &[f64]| -> Vec<LapRecord> {
            let mut laps = laps("a", &[1000.0, 1000.0, 1000.0]);
            for (l, c) in laps.iter_mut().zip(cpu) {
                l.params.rate = Some(1000.0);
                l.server_stats = Some(serverbench_results::ProcessStats {
                    cpu_us_per_request: Some(*c),
                    ..Default::default()
                });
            }
            laps
        };
        let c = compare(&at_rate(&[40.0, 41.0, 42.0]), &at_rate(&[50.0, 51.0, 52.0]));
        let row = &c.rows[0];
        assert_eq!(
            (row.figure, row.verdict),
            (Figure::CpuPerRequest, Verdict::Costlier)
        );
        assert_eq!(c.regressions_above(0.05).len(), 1);
        let c = compare(&at_rate(&[50.0, 51.0, 52.0]), &at_rate(&[40.0, 41.0, 42.0]));
        assert_eq!(c.rows[0].verdict, Verdict::Cheaper);
        assert!(c.regressions_above(0.0).is_empty());
    }
}
