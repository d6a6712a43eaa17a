//! `run --until-ci PCT`: keep adding laps until each cell's 95% interval of the median is
//! within ±PCT of the median, between `--min-laps` and `--max-laps` — the adaptive stopping of
//! hyperfine's `--min-runs`/`--max-runs` and pyperf's calibration, on the interval this crate
//! already reports ([`crate::stats::bootstrap_median_ci`], Efron & Tibshirani 1993, ch. 13).
//!
//! Stopping on the interval's width is a sequential procedure, so the nominal 95% coverage is
//! approximate (stopping when an interval happens to be narrow biases it narrow); the minimum
//! number of laps bounds that bias, and the report says how many laps each cell took.
//!
//! The interval is of the figure a cell is ranked by ([`crate::figure::lap_figure`]): req/s
//! closed loop, the capacity of a `find_max` search, the CPU per request of a lap at a fixed
//! rate (whose req/s is the rate asked for, narrow from the first lap whatever the server's
//! cost does).

use crate::figure::lap_figure;
use crate::stats::{self, DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES};
use serde::{Deserialize, Serialize};
use serverbench_results::record::{LapRecord, LapStatus};
use std::collections::BTreeMap;

/// The rule: a target half-width and the lap bounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UntilCi {
    /// Target half-width of the interval, in percent of the median.
    pub pct: f64,
    /// Laps every cell runs before the rule is looked at (at least 3: below that the
    /// interval is only the range).
    pub min_laps: u32,
    /// Laps after which a cell stops, clear or not.
    pub max_laps: u32,
}

/// Where a cell stands.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum CellState {
    /// The interval is within the target.
    Clear { laps: u32, half_width_pct: f64 },
    /// More laps are needed and allowed.
    NeedsMore {
        laps: u32,
        half_width_pct: Option<f64>,
    },
    /// The lap limit came first.
    LimitReached {
        laps: u32,
        half_width_pct: Option<f64>,
    },
}

impl CellState {
    /// True while the cell wants another lap.
    pub fn needs_more(&self) -> bool {
        matches!(self, CellState::NeedsMore { .. })
    }
}

/// The larger distance from the median to a bound of its 95% interval, in percent of the
/// median; `None` without laps or with a median of zero.
pub fn half_width_pct(samples: &[f64], seed: u64) -> Option<f64> {
    let m = stats::median(samples)?;
    if m <= 0.0 {
        return None;
    }
    let ci = stats::bootstrap_median_ci(samples, DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, seed)?;
    Some(100.0 * (m - ci.low).max(ci.high - m) / m)
}

impl From<serverbench_model::suite::until_ci::StopRule> for UntilCi {
    fn from(r: serverbench_model::suite::until_ci::StopRule) -> UntilCi {
        UntilCi::new(r.pct, r.min_laps, r.max_laps)
    }
}

impl UntilCi {
    /// The rule with its bounds made sane: at least 3 laps before judging, max ≥ min.
    pub fn new(pct: f64, min_laps: u32, max_laps: u32) -> UntilCi {
        let min_laps = min_laps.max(stats::MIN_LAPS_FOR_BOOTSTRAP as u32);
        UntilCi {
            pct,
            min_laps,
            max_laps: max_laps.max(min_laps),
        }
    }

    /// Where a cell with these per-lap values (req/s of its ok laps) stands; `laps` counts
    /// every lap run, failed ones included, against the limit.
    pub fn state(&self, samples: &[f64], laps: u32, seed: u64) -> CellState {
        let hw = half_width_pct(samples, seed);
        match hw {
            Some(h) if laps >= self.min_laps && h <= self.pct => CellState::Clear {
                laps,
                half_width_pct: h,
            },
            _ if laps >= self.max_laps => CellState::LimitReached {
                laps,
                half_width_pct: hw,
            },
            _ => CellState::NeedsMore {
                laps,
                half_width_pct: hw,
            },
        }
    }
}

/// Where one cell (server x scenario x profile) of a run stands under the rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellOutcome {
    pub server: String,
    pub scenario: String,
    pub profile: String,
    #[serde(flatten)]
    pub state: CellState,
}

impl CellState {
    /// Laps the cell took.
    pub fn laps(&self) -> u32 {
        match *self {
            CellState::Clear { laps, .. }
            | CellState::NeedsMore { laps, .. }
            | CellState::LimitReached { laps, .. } => laps,
        }
    }

    /// The half-width of its interval, percent of the median, when there is one.
    pub fn half_width(&self) -> Option<f64> {
        match *self {
            CellState::Clear { half_width_pct, .. } => Some(half_width_pct),
            CellState::NeedsMore { half_width_pct, .. }
            | CellState::LimitReached { half_width_pct, .. } => half_width_pct,
        }
    }
}

/// Every cell of `records` under `rule`: its laps (failed ones included) and the req/s of its
/// ok laps, in record order; cells sorted by server, scenario, profile.
pub fn cell_states(records: &[LapRecord], rule: &UntilCi) -> Vec<CellOutcome> {
    let mut cells: BTreeMap<(&str, &str, &str), (u32, Vec<f64>)> = BTreeMap::new();
    for r in records {
        let cell = cells
            .entry((&r.server, &r.scenario, &r.profile))
            .or_default();
        cell.0 += 1;
        if let (LapStatus::Ok, Some((_, v))) = (r.status, lap_figure(r)) {
            cell.1.push(v);
        }
    }
    cells
        .into_iter()
        .map(|((server, scenario, profile), (laps, figures))| {
            let seed = stats::seed_for(&format!("until-ci/{server}/{scenario}/{profile}"));
            CellOutcome {
                server: server.to_string(),
                scenario: scenario.to_string(),
                profile: profile.to_string(),
                state: rule.state(&figures, laps, seed),
            }
        })
        .collect()
}

/// The rule of a run `--until-ci` and where each of its cells ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UntilCiReport {
    pub rule: UntilCi,
    pub cells: Vec<CellOutcome>,
}

impl UntilCiReport {
    /// Cells whose interval got within the target.
    pub fn clear(&self) -> impl Iterator<Item = &CellOutcome> {
        self.cells
            .iter()
            .filter(|c| matches!(c.state, CellState::Clear { .. }))
    }

    /// Cells that stopped at the lap limit (or were cut short) with a wider interval.
    pub fn unclear(&self) -> impl Iterator<Item = &CellOutcome> {
        self.cells
            .iter()
            .filter(|c| !matches!(c.state, CellState::Clear { .. }))
    }

    /// `until-ci ±5%: 3 of 4 cells clear (3–5 laps); not clear at 8 laps: a (hello / c50) ±7.2%`.
    pub fn lines(&self) -> Vec<String> {
        let clear: Vec<&CellOutcome> = self.clear().collect();
        let laps = |cells: &[&CellOutcome]| {
            let n: Vec<u32> = cells.iter().map(|c| c.state.laps()).collect();
            match (n.iter().min(), n.iter().max()) {
                (Some(a), Some(b)) if a == b => format!("{a} laps"),
                (Some(a), Some(b)) => format!("{a}-{b} laps"),
                _ => "no laps".to_owned(),
            }
        };
        let took = match clear.is_empty() {
            true => String::new(),
            false => format!(" ({})", laps(&clear)),
        };
        let mut out = vec![format!(
            "until-ci ±{}% (laps {}..{}): {} of {} cells clear{took}",
            self.rule.pct,
            self.rule.min_laps,
            self.rule.max_laps,
            clear.len(),
            self.cells.len(),
        )];
        for c in self.unclear() {
            let hw = c
                .state
                .half_width()
                .map_or("no interval".to_owned(), |h| format!("±{h:.1}%"));
            out.push(format!(
                "not clear: {} ({} / {}) after {} laps, {hw}",
                c.server,
                c.scenario,
                c.profile,
                c.state.laps()
            ));
        }
        out
    }
}

/// Where each cell of `records` ended under the rule of the suite in `env` (`None` when the
/// suite was not run `--until-ci`).
pub fn report(
    records: &[LapRecord],
    env: Option<&serverbench_results::env::Env>,
) -> Option<UntilCiReport> {
    let s = env?.suite.as_ref()?;
    let pct = s.until_ci?;
    let laps = s.laps.unwrap_or(3);
    let rule = UntilCi::new(
        pct,
        s.min_laps.unwrap_or(laps),
        s.max_laps.unwrap_or(laps.saturating_mul(3)),
    );
    Some(UntilCiReport {
        rule,
        cells: cell_states(records, &rule),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_judged_on_their_ok_laps_and_count_failed_ones_against_the_limit() {
        let lap = |server: &str, n: u32, rps: Option<f64>| {
            let mut r = crate::fixture::lap();
            r.server = server.into();
            r.lap = n;
            match rps {
                Some(v) => {
                    r.load = Some(serverbench_results::record::Measurement {
                        rps: Some(v),
                        ..Default::default()
                    })
                }
                None => r.status = LapStatus::Failed,
            }
            r
        };
        let rule = UntilCi::new(5.0, 3, 4);
        let records = vec![
            lap("a", 1, Some(100.0)),
            lap("b", 1, Some(100.0)),
            lap("a", 2, Some(101.0)),
            lap("b", 2, Some(30.0)),
            lap("a", 3, Some(99.0)),
            lap("b", 3, None),
        ];
        let states = cell_states(&records, &rule);
        assert_eq!(states.len(), 2);
        assert!(matches!(states[0].state, CellState::Clear { laps: 3, .. }));
        assert!(states[1].state.needs_more() && states[1].state.laps() == 3);
    }

    const SEED: u64 = 7;

    #[test]
    fn a_steady_cell_is_clear_after_the_minimum_laps() {
        let rule = UntilCi::new(5.0, 3, 10);
        let s = rule.state(&[100_000.0, 101_000.0, 99_500.0], 3, SEED);
        assert!(matches!(s, CellState::Clear { laps: 3, .. }), "{s:?}");
    }

    #[test]
    fn no_cell_is_judged_before_the_minimum_even_when_steady() {
        let rule = UntilCi::new(5.0, 5, 10);
        let s = rule.state(&[100.0, 100.0, 100.0], 3, SEED);
        assert!(s.needs_more(), "{s:?}");
    }

    #[test]
    fn a_noisy_cell_asks_for_more_laps_then_stops_at_the_limit() {
        let rule = UntilCi::new(5.0, 3, 6);
        let noisy = [100_000.0, 66_000.0, 7_400.0, 90_000.0];
        assert!(rule.state(&noisy, 4, SEED).needs_more());
        let s = rule.state(&noisy, 6, SEED);
        assert!(
            matches!(s, CellState::LimitReached { laps: 6, .. }),
            "{s:?}"
        );
    }

    #[test]
    fn one_wild_lap_among_many_steady_ones_still_converges() {
        // The median's interval ignores a single outlier once there are enough laps.
        let rule = UntilCi::new(5.0, 3, 20);
        let mut laps = vec![100_000.0, 7_459.0, 101_000.0];
        assert!(rule.state(&laps, 3, SEED).needs_more());
        laps.extend([99_000.0, 100_500.0, 100_200.0, 99_800.0]);
        let s = rule.state(&laps, 7, SEED);
        assert!(matches!(s, CellState::Clear { .. }), "{s:?}");
    }

    #[test]
    fn a_cell_whose_laps_all_failed_is_never_clear() {
        let rule = UntilCi::new(5.0, 3, 4);
        assert!(rule.state(&[], 3, SEED).needs_more());
        assert!(matches!(
            rule.state(&[], 4, SEED),
            CellState::LimitReached {
                half_width_pct: None,
                ..
            }
        ));
    }

    #[test]
    fn bounds_are_made_sane() {
        let r = UntilCi::new(5.0, 1, 2);
        assert_eq!((r.min_laps, r.max_laps), (3, 3));
    }

    #[test]
    fn the_half_width_is_the_larger_side_in_percent_of_the_median() {
        // Fewer than 3 laps: the range, 90..110 around a median of 100.
        assert_eq!(half_width_pct(&[90.0, 110.0], SEED), Some(10.0));
        assert_eq!(half_width_pct(&[], SEED), None);
    }
}
