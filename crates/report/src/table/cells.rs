//! The cells of a summary row that need only the row and its table: rank, req/s with each
//! lap in the hint, the intervals and the speed factor.

use super::Cell;
use crate::text::{self, count, grouped, num};
use serverbench_analysis::stats::IntervalMethod;
use serverbench_analysis::summary::{ServerSummary, Table};

pub(super) fn method_name(m: IntervalMethod) -> String {
    format!("{m:?}").to_lowercase()
}

pub(super) fn failed() -> Cell {
    Cell {
        text: "failed".to_owned(),
        raw: String::new(),
        hint: None,
    }
}

/// `1`, or `=1` when shared with another row of the table.
pub(super) fn rank(t: &Table, s: &ServerSummary) -> Cell {
    match s.rank {
        None => Cell::number(None, grouped),
        Some(r) => Cell {
            text: if text::shared_rank(t, r) {
                format!("={r}")
            } else {
                r.to_string()
            },
            raw: r.to_string(),
            hint: None,
        },
    }
}

/// The median req/s, `failed` when no lap succeeded; the hint lists each lap's figure.
pub(super) fn rps(s: &ServerSummary) -> Cell {
    let Some(r) = s.rps else { return failed() };
    let laps: Vec<String> = s
        .lap_rps
        .iter()
        .map(|l| format!("lap {}: {}", l.lap, grouped(l.rps)))
        .collect();
    Cell::number(Some(r.median), grouped).with_hint((!laps.is_empty()).then(|| laps.join(", ")))
}

/// What an interval is, for a hint.
pub(super) fn interval_kind(m: IntervalMethod, laps: usize) -> String {
    match m {
        IntervalMethod::Bootstrap => "95% bootstrap interval of the median".to_owned(),
        IntervalMethod::Range => format!("min..max of {}", count(laps as u64, "lap")),
    }
}

/// `±3,000`: the larger half of the req/s interval; its bounds in the hint.
pub(super) fn rps_interval(s: &ServerSummary) -> Cell {
    let (Some(r), Some(ci)) = (s.rps, s.rps_ci) else {
        return Cell::number(None, grouped);
    };
    let hint = format!(
        "{}–{}: {}",
        grouped(ci.low),
        grouped(ci.high),
        interval_kind(ci.method, r.n)
    );
    Cell {
        text: format!("±{}", grouped(text::half_width(r.median, &ci))),
        raw: ci.low.to_string(),
        hint: Some(hint),
    }
}

/// The req/s interval carried over to Mbps down.
pub(super) fn mbps_interval(s: &ServerSummary) -> Cell {
    let (Some(r), Some(ci), Some(down), Some((low, high))) =
        (s.rps, s.rps_ci, s.mbps_down, text::mbps_interval(s))
    else {
        return Cell::number(None, grouped);
    };
    let half = (high - down).max(down - low).max(0.0);
    Cell {
        text: format!("±{}", num(Some(half))),
        raw: low.to_string(),
        hint: Some(format!(
            "{}–{} Mbps: {}",
            num(Some(low)),
            num(Some(high)),
            interval_kind(ci.method, r.n)
        )),
    }
}

/// `16.63x (16.21–16.78)`, `1.00x` for the baseline, `-` without a baseline.
pub(super) fn speed_with_interval(s: &ServerSummary) -> Cell {
    let Some(f) = s.speed_factor else {
        return Cell::number(None, grouped);
    };
    let text = match f.interval {
        Some(i) => format!("{:.2}x ({:.2}–{:.2})", f.ratio, i.low, i.high),
        None => format!("{:.2}x", f.ratio),
    };
    Cell {
        text,
        raw: f.ratio.to_string(),
        hint: None,
    }
}
