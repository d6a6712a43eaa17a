//! The columns of a comparison of two results folders (`serverbench compare`), defined once.

use super::{build, Align, Cell, ColumnDef, Grid};
use crate::text::grouped;
use serverbench_analysis::compare::{CompareRow, Comparison, Verdict};
use serverbench_analysis::figure::Figure;
use serverbench_analysis::stats::IntervalMethod;

/// Every column a comparison can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Server,
    Scenario,
    Profile,
    /// What the medians are of: `req/s`, `capacity/s`, `µs/req`.
    Measure,
    OldMedian,
    NewMedian,
    Ratio,
    /// `1.078–1.122`: the interval of the ratio.
    Interval,
    RatioLow,
    RatioHigh,
    Verdict,
}

/// The table people read (one per measure: see [`comparison_grids`]).
const HUMAN: [Col; 8] = {
    use Col::*;
    [
        Server, Scenario, Profile, OldMedian, NewMedian, Ratio, Interval, Verdict,
    ]
};

/// The CSV columns, in order. Scripts rely on them: only ever append.
const CSV: [Col; 10] = {
    use Col::*;
    [
        Server, Scenario, Profile, OldMedian, NewMedian, Ratio, RatioLow, RatioHigh, Verdict,
        Measure,
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
            Col::Measure => "measure",
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
            Col::OldMedian => "old",
            Col::NewMedian => "new",
            Col::Ratio => "new/old",
            Col::Interval => "95% CI",
            other => other.key(),
        }
    }

    fn align(&self) -> Align {
        match self {
            Col::Server | Col::Scenario | Col::Profile | Col::Measure | Col::Verdict => Align::Left,
            _ => Align::Right,
        }
    }

    fn cell(&self, r: &CompareRow) -> Cell {
        let bound = |high: bool| r.interval.map(|i| if high { i.high } else { i.low });
        match self {
            Col::Server => Cell::plain(&r.server),
            Col::Scenario => Cell::plain(&r.scenario),
            Col::Profile => Cell::plain(&r.profile),
            Col::Measure => Cell::plain(r.figure.unit()),
            Col::OldMedian => median(r, r.old_median),
            Col::NewMedian => median(r, r.new_median),
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

/// A median: whole req/s grouped, CPU µs per request to a tenth.
fn median(r: &CompareRow, v: f64) -> Cell {
    match r.figure {
        Figure::CpuPerRequest => Cell::number(Some(v), |v| format!("{v:.1}")),
        _ => Cell::number(Some(v), grouped),
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
pub const COMPARISON_LEGEND: &str = "verdict: faster or slower (cheaper or costlier for CPU \
    µs per request) when the whole interval of new/old lies above or below 1; no change when it \
    includes 1 (or there is none).";

/// The comparison as the tables people read: one per measure present, in the order req/s,
/// capacity, CPU per request, its old and new columns naming the unit; with a heading each
/// when there is more than req/s.
pub fn comparison_grids(c: &Comparison) -> Vec<(Option<&'static str>, Grid)> {
    let figures = [Figure::Rps, Figure::Capacity, Figure::CpuPerRequest];
    let present: Vec<Figure> = figures
        .into_iter()
        .filter(|f| c.rows.iter().any(|r| r.figure == *f))
        .collect();
    let only_rps = present == [Figure::Rps];
    present
        .into_iter()
        .map(|f| {
            let rows: Vec<CompareRow> = c.rows.iter().filter(|r| r.figure == f).cloned().collect();
            let mut g = build(&HUMAN, &rows, |_| (None, false));
            let unit = match f {
                Figure::Capacity => "cap/s",
                other => other.unit(),
            };
            for col in g.columns.iter_mut() {
                match col.key {
                    "old_median" => col.label = format!("old {unit}"),
                    "new_median" => col.label = format!("new {unit}"),
                    _ => {}
                }
            }
            let heading = match f {
                _ if only_rps => None,
                Figure::Rps => Some("req/s, closed loop"),
                Figure::Capacity => Some("capacity: the highest rate a search found within its goal"),
                Figure::CpuPerRequest => {
                    Some("cost: CPU µs per request (server and database) at a fixed rate, lower is better")
                }
            };
            (heading, g)
        })
        .collect()
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
