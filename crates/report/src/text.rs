//! Number formatting shared by the table model: thousands separators, three significant
//! figures, plurals. Every human-readable number of a report goes through here.

use serverbench_analysis::stats::Interval;
use serverbench_analysis::summary::{ServerSummary, Table};

/// How a column is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// `-` stands for a figure that was not measured.
pub const MISSING: &str = "-";

/// `value` rounded to a whole number, with a comma every three digits: `150,500`, `-1,234`.
pub fn grouped(value: f64) -> String {
    let digits = format!("{:.0}", value.abs());
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if value.round() < 0.0 {
        out.push('-');
    }
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// Two or three significant figures or more: `1,094`, `13.4`, `2.50`, `0.98`, `0.00070`, or
/// `-`.
pub fn num(x: Option<f64>) -> String {
    match x.filter(|v| v.is_finite()) {
        None => MISSING.to_owned(),
        Some(v) if v.abs() >= 100.0 => grouped(v),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) if v == 0.0 || v.abs() >= 0.1 => format!("{v:.2}"),
        Some(v) => {
            // Below 0.1, keep two significant figures: 0.0007 is not 0.00.
            let decimals = (-v.abs().log10()).floor() as usize + 2;
            format!("{v:.prec$}", prec = decimals.min(9))
        }
    }
}

/// `1 connection`, `50 connections`.
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    match n.into() {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// The half-width shown after `±`: the larger distance from the median to a bound, so the
/// printed range always covers the (possibly asymmetric) interval.
pub fn half_width(median: f64, ci: &Interval) -> f64 {
    (ci.high - median).max(median - ci.low).max(0.0)
}

/// Mbps per connection, both directions added, as tcpkali's "Bandwidth per channel" (⇅).
pub fn mbps_per_connection(t: &Table, s: &ServerSummary) -> Option<f64> {
    Some((s.mbps_down? + s.mbps_up?) / f64::from(t.connections.max(1)))
}

/// The req/s interval carried over to Mbps down (both scale with the bytes echoed in a stream):
/// `(low, high)`.
pub fn mbps_interval(s: &ServerSummary) -> Option<(f64, f64)> {
    let (rps, ci, down) = (s.rps?, s.rps_ci?, s.mbps_down?);
    (rps.median > 0.0).then(|| {
        let scale = down / rps.median;
        (ci.low * scale, ci.high * scale)
    })
}

/// True when more than one row of `t` has rank `r`.
pub fn shared_rank(t: &Table, r: u32) -> bool {
    t.servers.iter().filter(|s| s.rank == Some(r)).count() > 1
}

/// Pads `cell` to `width` characters.
pub fn pad(cell: &str, width: usize, align: Align) -> String {
    let fill = " ".repeat(width.saturating_sub(cell.chars().count()));
    match align {
        Align::Left => format!("{cell}{fill}"),
        Align::Right => format!("{fill}{cell}"),
    }
}

/// The width in characters of each column: its longest cell, header included.
pub fn widths(header: &[&str], rows: &[Vec<&str>]) -> Vec<usize> {
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

/// The width prose is wrapped to, like the tables at their default width.
pub const WIDTH: usize = 120;

/// `  - text`, wrapped at [`WIDTH`] with a hanging indent; words are never split.
pub fn bullet(text: &str) -> String {
    let options = textwrap::Options::new(WIDTH)
        .initial_indent("  - ")
        .subsequent_indent("    ")
        .break_words(false)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    let mut out = textwrap::fill(text, options);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_analysis::stats::IntervalMethod;
    use serverbench_model::Mode;

    #[test]
    fn numbers_keep_three_significant_figures_and_group_thousands() {
        assert_eq!(num(Some(1094.4)), "1,094");
        assert_eq!(num(Some(13.44)), "13.4");
        assert_eq!(num(Some(0.984)), "0.98");
        assert_eq!(num(Some(0.0)), "0.00");
        assert_eq!(num(Some(0.0701)), "0.070");
        assert_eq!(num(Some(0.000_701_6)), "0.00070");
        assert_eq!(num(Some(-0.05)), "-0.050");
        assert_eq!(num(None), "-");
        assert_eq!(num(Some(f64::NAN)), "-");
    }

    #[test]
    fn thousands_are_separated_by_commas_whatever_the_sign() {
        assert_eq!(grouped(0.0), "0");
        assert_eq!(grouped(999.4), "999");
        assert_eq!(grouped(999.6), "1,000");
        assert_eq!(grouped(150_500.0), "150,500");
        assert_eq!(grouped(1_234_567.0), "1,234,567");
        assert_eq!(grouped(-1_234.0), "-1,234");
        assert_eq!(grouped(-0.2), "0");
    }

    #[test]
    fn padding_counts_characters_not_bytes() {
        assert_eq!(pad("µs", 4, Align::Right), "  µs");
        assert_eq!(pad("ab", 3, Align::Left), "ab ");
    }

    #[test]
    fn one_is_singular() {
        assert_eq!(count(1u32, "thread"), "1 thread");
        assert_eq!(count(2u32, "thread"), "2 threads");
        assert_eq!(count(0u32, "lap"), "0 laps");
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
            transport: String::new(),
            body: String::new(),
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
}
