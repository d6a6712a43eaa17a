//! `--format term`: one line per series and measure, within 120 columns.

use super::{caveats, percent, ratio_text, shift_text, value};
use crate::check::CheckReport;
use std::fmt::Write;

const CELL: usize = 30;

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

/// The table, then one line per change point of each series, oldest first: `regression:` for
/// those that are, `change:` for the others.
pub fn render(report: &CheckReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<CELL$} {:<4} {:>4} {:>12} {:>12} {:<22} {:<17} status",
        "cell", "", "runs", "baseline", "latest", "latest/baseline", "shift"
    );
    for r in &report.rows {
        let base = r
            .baseline
            .as_ref()
            .map_or("-".into(), |b| value(r.measure, b.median));
        let _ = writeln!(
            out,
            "{:<CELL$} {:<4} {:>4} {:>12} {:>12} {:<22} {:<17} {}",
            clip(&r.series.label(), CELL),
            r.measure.key(),
            r.runs,
            base,
            value(r.measure, r.latest.median),
            ratio_text(r),
            clip(&shift_text(r), 17),
            r.status.label()
        );
    }
    for r in &report.rows {
        for s in &r.shifts {
            let _ = writeln!(
                out,
                "{:<11} {} {} changed {} at {} (run {}): mean {} -> {} (p = {:.1e})",
                if s.regression {
                    "regression:"
                } else {
                    "change:"
                },
                clip(&r.series.label(), CELL),
                r.measure,
                percent(s.magnitude),
                s.at.label,
                s.at.run,
                value(r.measure, s.mean_before),
                value(r.measure, s.mean_after),
                s.p
            );
        }
    }
    for r in &report.rows {
        for c in caveats(r) {
            let _ = writeln!(
                out,
                "{:<11} {} {}: {c}",
                "note:",
                clip(&r.series.label(), CELL),
                r.measure
            );
        }
    }
    let _ = writeln!(
        out,
        "threshold {:.1}%; {} series x measure; worst: {}",
        report.threshold * 100.0,
        report.rows.len(),
        report.worst().label()
    );
    out
}
