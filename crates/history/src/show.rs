//! `history list` and `history show`: the series in the terminal, within 120 columns, each
//! with a sparkline of its run medians.

use crate::changepoint::{self, ChangePoint};
use crate::db::{History, HistoryError};
use crate::series::{Measure, Point, SeriesKey};
use serverbench_charts::format_number;
use std::fmt::Write;

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// At most the last `width` values as bars from the lowest to the highest.
pub fn sparkline(values: &[f64], width: usize) -> String {
    let v = &values[values.len().saturating_sub(width)..];
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    v.iter()
        .map(|x| {
            if hi - lo <= f64::EPSILON * hi.abs() {
                BARS[3]
            } else {
                BARS[(((x - lo) / (hi - lo)) * 7.0).round() as usize]
            }
        })
        .collect()
}

fn medians(points: &[Point], m: Measure) -> Vec<f64> {
    points
        .iter()
        .filter_map(|p| p.stats.get(m))
        .map(|e| e.median)
        .collect()
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n - 1).collect();
    t.push('…');
    t
}

/// One line per series: testbed, cell, settings, runs, the newest median and a sparkline.
pub fn list(history: &History) -> Result<String, HistoryError> {
    let keys = history.series_keys()?;
    let mut out = String::new();
    if keys.is_empty() {
        let _ = writeln!(
            out,
            "{}: no runs yet (serverbench run --record, or serverbench history import DIR)",
            history.path().display()
        );
        return Ok(out);
    }
    let _ = writeln!(
        out,
        "{:<8} {:<36} {:<8} {:>4} {:<20} {:>9} req/s (last 30 runs)",
        "testbed", "cell", "settings", "runs", "newest", "req/s"
    );
    for k in &keys {
        let points = history.series(k)?;
        let m = medians(&points, Measure::Rps);
        let newest = points.last().map_or("-", |p| p.started_at.as_str());
        let _ = writeln!(
            out,
            "{:<8} {:<36} {:<8} {:>4} {:<20} {:>9} {}",
            &k.testbed[..8.min(k.testbed.len())],
            clip(&k.label(), 36),
            &k.settings[..8.min(k.settings.len())],
            points.len(),
            clip(newest, 20),
            m.last().map_or("-".into(), |v| format_number(*v)),
            sparkline(&m, 30)
        );
    }
    Ok(out)
}

/// The runs of one series: a sparkline, then one line per run (newest `limit`), change points
/// marked with `◆` and described below.
pub fn show(history: &History, key: &SeriesKey, limit: usize) -> Result<String, HistoryError> {
    let points = history.series(key)?;
    let rps = medians(&points, Measure::Rps);
    let cps = changepoint::detect(&rps, &changepoint::Options::default());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}  (testbed {}, settings {}, {} runs)",
        key.label(),
        &key.testbed[..8.min(key.testbed.len())],
        &key.settings[..8.min(key.settings.len())],
        points.len()
    );
    let _ = writeln!(out, "req/s {}", sparkline(&rps, 100));
    // A series at a fixed rate or of capacity searches has a cost: CPU µs per request.
    let cost = points.iter().any(|p| p.stats.cpu.is_some());
    let _ = writeln!(
        out,
        "  {:>5} {:<20} {:<8} {:<12} {:>4} {:>9} {:<19} {:>9} {}",
        "run",
        "started",
        "commit",
        "branch",
        "laps",
        "req/s",
        "95% interval",
        "p99 µs",
        if cost { "   µs/req" } else { "" }
    );
    let first = points.len().saturating_sub(limit);
    for (i, p) in points.iter().enumerate().skip(first) {
        let mark = if cps.iter().any(|c| c.index == i) {
            '◆'
        } else {
            ' '
        };
        let (med, interval) = match p.stats.rps {
            Some(e) => (
                format_number(e.median),
                format!("{} .. {}", format_number(e.low), format_number(e.high)),
            ),
            None => ("-".into(), String::new()),
        };
        let dirty = if p.dirty == Some(true) { "+" } else { "" };
        let _ = writeln!(
            out,
            "{mark} {:>5} {:<20} {:<8} {:<12} {:>4} {:>9} {:<19} {:>9}{}",
            p.run,
            clip(&p.started_at, 20),
            format!("{}{dirty}", p.label()),
            clip(p.branch.as_deref().unwrap_or("-"), 12),
            p.laps.rps.len(),
            med,
            interval,
            p.stats.p99.map_or("-".into(), |e| format_number(e.median)),
            match (cost, p.stats.cpu) {
                (false, _) => String::new(),
                (true, Some(e)) => format!(" {:>9.1}", e.median),
                (true, None) => format!(" {:>9}", "-"),
            },
        );
    }
    for c in &cps {
        describe(&mut out, c, &points);
    }
    Ok(out)
}

fn describe(out: &mut String, c: &ChangePoint, points: &[Point]) {
    let _ = writeln!(
        out,
        "◆ change at run {} ({}): {:+.1}%, mean {} -> {} req/s (p = {:.1e})",
        points[c.index].run,
        points[c.index].label(),
        c.magnitude() * 100.0,
        format_number(c.mean_before),
        format_number(c.mean_after),
        c.p
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{record_series, RunSpec};

    #[test]
    fn a_sparkline_spans_the_lowest_to_the_highest_value() {
        assert_eq!(sparkline(&[1.0, 2.0, 3.0, 8.0], 10), "▁▂▃█");
        assert_eq!(sparkline(&[5.0, 5.0], 10), "▄▄");
        assert_eq!(sparkline(&[1.0, 2.0, 3.0], 2), "▁█");
        assert_eq!(sparkline(&[], 2), "");
    }

    #[test]
    fn list_and_show_fit_in_120_columns_and_mark_the_change() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("h.db")).unwrap();
        let mut levels = vec![1.0; 12];
        levels.extend([0.8; 6]);
        let base = RunSpec {
            servers: vec![("a-server-with-a-rather-long-name/and-a-variant".into(), 9e4)],
            ..RunSpec::default()
        };
        record_series(&mut h, dir.path(), &levels, &base).unwrap();
        let listed = list(&h).unwrap();
        let key = &h.find_series("hello").unwrap()[0];
        let shown = show(&h, key, 50).unwrap();
        for line in listed.lines().chain(shown.lines()) {
            assert!(line.chars().count() <= 120, "{line}");
        }
        assert!(
            shown.contains("◆ change at run 13 (c000012): -20."),
            "{shown}"
        );
    }

    #[test]
    fn an_empty_history_says_how_to_fill_it() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::open(&dir.path().join("h.db")).unwrap();
        assert!(list(&h).unwrap().contains("no runs yet"));
    }

    #[test]
    fn a_series_at_a_fixed_rate_shows_each_runs_cpu_per_request() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("h.db")).unwrap();
        let base = RunSpec::at_rate(40.0, 2_000.0, 1);
        record_series(&mut h, dir.path(), &[1.0, 1.5], &base).unwrap();
        let key = &h.find_series("mine").unwrap()[0];
        let shown = show(&h, key, 10).unwrap();
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines[2].ends_with("µs/req"), "{shown}");
        let cost = |line: &str| -> f64 { line.rsplit(' ').next().unwrap().parse().unwrap() };
        assert!((cost(lines[3]) - 40.0).abs() < 4.0, "{shown}");
        assert!((cost(lines[4]) - 60.0).abs() < 6.0, "{shown}");
    }
}
