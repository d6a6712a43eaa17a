//! Number formatting and column alignment shared by the exporters.

use serverbench_analysis::stats::Interval;
use serverbench_analysis::summary::{ServerSummary, Table};

/// `-` stands for a figure that was not measured.
pub const MISSING: &str = "-";

/// A whole number, no separators (`165935`), or `-`.
pub fn int(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite())
        .map_or_else(|| MISSING.to_owned(), |v| format!("{v:.0}"))
}

/// Three significant figures or more: `1094`, `13.4`, `0.98`, or `-`.
pub fn num(x: Option<f64>) -> String {
    match x.filter(|v| v.is_finite()) {
        None => MISSING.to_owned(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// The half-width shown after `±`: the larger distance from the median to a bound, so the
/// printed range always covers the (possibly asymmetric) interval.
pub fn half_width(median: f64, ci: &Interval) -> f64 {
    (ci.high - median).max(median - ci.low).max(0.0)
}

/// `150000 ± 1500` (or just the median without an interval), `failed` when no lap succeeded.
pub fn rps_cell(s: &ServerSummary, plus_minus: &str) -> String {
    match (s.rps, s.rps_ci) {
        (None, _) => "failed".to_owned(),
        (Some(r), Some(ci)) => format!(
            "{} {plus_minus} {}",
            int(Some(r.median)),
            int(Some(half_width(r.median, &ci)))
        ),
        (Some(r), None) => int(Some(r.median)),
    }
}

/// `16.58x (16.31-16.80)`, `1.00x` for the baseline, `-` without a baseline.
pub fn speed_cell(s: &ServerSummary, dash: &str) -> String {
    match s.speed_factor {
        None => MISSING.to_owned(),
        Some(f) => match f.interval {
            Some(i) => format!("{:.2}x ({:.2}{dash}{:.2})", f.ratio, i.low, i.high),
            None => format!("{:.2}x", f.ratio),
        },
    }
}

/// Whether the table is a TCP echo table (Mbps columns instead of nothing).
pub fn is_tcp(t: &Table) -> bool {
    t.mode.is_tcp()
}

/// Whether the table is a TCP echo stream: Mbps instead of requests and latency.
pub fn is_stream(t: &Table) -> bool {
    t.mode.is_stream()
}

/// Mbps per connection, both directions added, as tcpkali's "Bandwidth per channel" (⇅).
pub fn mbps_per_connection(t: &Table, s: &ServerSummary) -> Option<f64> {
    Some((s.mbps_down? + s.mbps_up?) / f64::from(t.connections.max(1)))
}

/// The half-width of the req/s interval carried over to Mbps down (both scale with the bytes
/// echoed in a stream).
pub fn mbps_half_width(s: &ServerSummary) -> Option<f64> {
    let (rps, ci, down) = (s.rps?, s.rps_ci?, s.mbps_down?);
    (rps.median > 0.0).then(|| half_width(rps.median, &ci) * down / rps.median)
}

/// The rank as printed: `1`, or `=1` when shared with another row of the table.
pub fn rank_cell(t: &Table, s: &ServerSummary) -> String {
    match s.rank {
        None => MISSING.to_owned(),
        Some(r) if shared_rank(t, r) => format!("={r}"),
        Some(r) => r.to_string(),
    }
}

/// True when more than one row of `t` has rank `r`.
pub fn shared_rank(t: &Table, r: u32) -> bool {
    t.servers.iter().filter(|s| s.rank == Some(r)).count() > 1
}

/// How a column is aligned.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// Pads `cell` to `width` characters.
pub fn pad(cell: &str, width: usize, align: Align) -> String {
    let fill = " ".repeat(width.saturating_sub(cell.chars().count()));
    match align {
        Align::Left => format!("{cell}{fill}"),
        Align::Right => format!("{fill}{cell}"),
    }
}

/// The width of each column: the longest cell, header included.
pub fn widths(header: &[String], rows: &[Vec<String>]) -> Vec<usize> {
    (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_analysis::stats::IntervalMethod;
    use serverbench_results::Mode;

    #[test]
    fn numbers_keep_three_significant_figures() {
        assert_eq!(num(Some(1094.4)), "1094");
        assert_eq!(num(Some(13.44)), "13.4");
        assert_eq!(num(Some(0.984)), "0.98");
        assert_eq!(num(None), "-");
        assert_eq!(int(Some(f64::NAN)), "-");
    }

    #[test]
    fn half_width_covers_the_longer_side_of_an_asymmetric_interval() {
        let ci = Interval {
            low: 90.0,
            high: 130.0,
            method: IntervalMethod::Bootstrap,
        };
        assert_eq!(half_width(100.0, &ci), 30.0);
    }

    #[test]
    fn mbps_per_connection_adds_both_directions_like_tcpkali() {
        let t = Table {
            scenario: "echo-stream".into(),
            profile: "100conn".into(),
            mode: Mode::TcpStream,
            connections: 100,
            baseline: None,
            servers: Vec::new(),
        };
        let s = ServerSummary {
            mbps_down: Some(7907.0),
            mbps_up: Some(7916.0),
            ..ServerSummary::default()
        };
        assert!((mbps_per_connection(&t, &s).unwrap() - 158.23).abs() < 1e-9);
    }

    #[test]
    fn padding_counts_characters_not_bytes() {
        assert_eq!(pad("µs", 4, Align::Right), "  µs");
        assert_eq!(pad("ab", 3, Align::Left), "ab ");
    }
}
