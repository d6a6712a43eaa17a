//! The columns of a comparison of two results folders (`serverbench compare`), defined once.

use super::{build, Align, Cell, ColumnDef, Grid};
use crate::text::grouped;
use serverbench_analysis::compare::{CompareRow, Comparison, Verdict};
use serverbench_analysis::stats::IntervalMethod;

/// Every column a comparison can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Server,
    Scenario,
    Profile,
    OldMedian,
    NewMedian,
    Ratio,
    /// `1.078–1.122`: the interval of the ratio.
    Interval,
    RatioLow,
    RatioHigh,
    Verdict,
}

/// The table people read.
const HUMAN: [Col; 8] = {
    use Col::*;
    [
        Server, Scenario, Profile, OldMedian, NewMedian, Ratio, Interval, Verdict,
    ]
};

/// The CSV columns, in order. Scripts rely on them: only ever append.
const CSV: [Col; 9] = {
    use Col::*;
    [
        Server, Scenario, Profile, OldMedian, NewMedian, Ratio, RatioLow, RatioHigh, Verdict,
    ]
};

fn ratio(v: f64) -> String {
    format!("{v:.3}")
}

impl ColumnDef<CompareRow> for Col {
    fn key(&self) -> &'static str {
        match self {
            Col::Server => "server",
            Col::Scenario => "scenario",
            Col::Profile => "profile",
            Col::OldMedian => "old_median",
            Col::NewMedian => "new_median",
            Col::Ratio => "ratio",
            Col::Interval => "ratio_ci",
            Col::RatioLow => "ratio_low",
            Col::RatioHigh => "ratio_high",
            Col::Verdict => "verdict",
        }
    }

    fn label(&self) -> &'static str {
        match self {
            Col::OldMedian => "old req/s",
            Col::NewMedian => "new req/s",
            Col::Ratio => "new/old",
            Col::Interval => "95% CI",
            other => other.key(),
        }
    }

    fn align(&self) -> Align {
        match self {
            Col::Server | Col::Scenario | Col::Profile | Col::Verdict => Align::Left,
            _ => Align::Right,
        }
    }

    fn cell(&self, r: &CompareRow) -> Cell {
        let bound = |high: bool| r.interval.map(|i| if high { i.high } else { i.low });
        match self {
            Col::Server => Cell::plain(&r.server),
            Col::Scenario => Cell::plain(&r.scenario),
            Col::Profile => Cell::plain(&r.profile),
            Col::OldMedian => Cell::number(Some(r.old_median), grouped),
            Col::NewMedian => Cell::number(Some(r.new_median), grouped),
            Col::Ratio => Cell::number(Some(r.ratio), ratio),
            Col::Interval => match r.interval {
                Some(i) => Cell {
                    text: format!("{}–{}", ratio(i.low), ratio(i.high)),
                    raw: i.low.to_string(),
                    hint: None,
                },
                None => Cell::number(None, ratio),
            },
            Col::RatioLow => Cell::number(bound(false), ratio),
            Col::RatioHigh => Cell::number(bound(true), ratio),
            Col::Verdict => Cell {
                text: verdict(r.verdict).to_owned(),
                raw: r.verdict.label().replace(' ', "_"),
                hint: None,
            },
        }
    }

    fn interval(&self, r: &CompareRow) -> Option<IntervalMethod> {
        match self {
            Col::Interval => r.interval.map(|i| i.method),
            _ => None,
        }
    }
}

/// The verdict as the tables show it: `faster`, `slower`, `no change` (short, to keep the
/// table within 120 columns; CSV and JSON keep `no_significant_change`).
fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::NoSignificantChange => "no change",
        other => other.label(),
    }
}

/// What the verdicts mean, under the table.
pub const COMPARISON_LEGEND: &str = "verdict: faster or slower when the whole interval of \
    new/old lies above or below 1; no change when it includes 1 (or there is none).";

/// The comparison as the table people read.
pub fn comparison_grid(c: &Comparison) -> Grid {
    build(&HUMAN, &c.rows, |_| (None, false))
}

/// The comparison as CSV fields (the cells' raw values).
pub fn comparison_csv(c: &Comparison) -> Grid {
    build(&CSV, &c.rows, |_| (None, false))
}

/// `node/h2o (hello, c50) only in OLD`: what could not be compared, one line each.
pub fn unmatched(c: &Comparison, old: &str, new: &str) -> Vec<String> {
    let side = |list: &[serverbench_analysis::compare::Unmatched], label: &str| {
        list.iter()
            .map(|u| {
                format!(
                    "{} ({}, {}) only in {label}",
                    u.server, u.scenario, u.profile
                )
            })
            .collect::<Vec<_>>()
    };
    let mut out = side(&c.only_old, old);
    out.extend(side(&c.only_new, new));
    out
}
