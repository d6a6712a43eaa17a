//! Comparing two results folders: for every server x scenario x profile present in both, the
//! ratio NEW/OLD of the median req/s with a bootstrap interval, and a verdict.
//!
//! The interval resamples each side's laps independently ([`stats::bootstrap_ratio_ci`]); with
//! fewer than three laps on a side it is the widest ratio the laps allow. A change is
//! significant when the interval excludes 1.0.

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
    /// The interval contains 1.0 (or there is none).
    NoSignificantChange,
}

impl Verdict {
    /// Words for tables: `faster`, `slower`, `no significant change`.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
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
    /// Rows whose whole interval lies below `1 - threshold`: a significant regression larger
    /// than `threshold` (0.05 for "5%").
    pub fn regressions_above(&self, threshold: f64) -> Vec<&CompareRow> {
        self.rows
            .iter()
            .filter(|r| r.interval.is_some_and(|i| i.high < 1.0 - threshold))
            .collect()
    }
}

type Key = (String, String, String);

/// Successful laps' req/s per key, keys in order of first appearance.
fn rps_by_key(records: &[LapRecord]) -> Vec<(Key, Vec<f64>)> {
    let mut out: Vec<(Key, Vec<f64>)> = Vec::new();
    for r in records.iter().filter(|r| r.status == LapStatus::Ok) {
        let Some(m) = &r.load else { continue };
        let rps = m.rps.or_else(|| {
            let d = m.duration_s.filter(|d| *d > 0.0)?;
            Some(m.requests? as f64 / d)
        });
        let Some(rps) = rps.filter(|x| x.is_finite()) else {
            continue;
        };
        let key = (r.scenario.clone(), r.profile.clone(), r.server.clone());
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(rps),
            None => out.push((key, vec![rps])),
        }
    }
    out
}

fn unmatched((scenario, profile, server): &Key) -> Unmatched {
    Unmatched {
        scenario: scenario.clone(),
        profile: profile.clone(),
        server: server.clone(),
    }
}

/// Compares NEW against OLD, in the order the keys appear in OLD.
pub fn compare(old: &[LapRecord], new: &[LapRecord]) -> Comparison {
    let (old, new) = (rps_by_key(old), rps_by_key(new));
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
        let verdict = match interval {
            Some(i) if i.low > 1.0 => Verdict::Faster,
            Some(i) if i.high < 1.0 => Verdict::Slower,
            _ => Verdict::NoSignificantChange,
        };
        rows.push(CompareRow {
            scenario: key.0.clone(),
            profile: key.1.clone(),
            server: key.2.clone(),
            old_laps: o.len(),
            new_laps: n.len(),
            old_median: om,
            new_median: nm,
            ratio: if om > 0.0 { nm / om } else { f64::NAN },
            interval,
            verdict,
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

/// Parses a `--fail-above` threshold: `5%`, `5` (percent) or `0.05` (a fraction below 1).
pub fn parse_threshold(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (number, percent) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (t, false),
    };
    let x: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a percentage (try `5%`)"))?;
    let fraction = if percent || x >= 1.0 { x / 100.0 } else { x };
    if !(0.0..1.0).contains(&fraction) {
        return Err(format!("`{text}` must be between 0% and 100%"));
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
}
