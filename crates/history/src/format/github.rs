//! `--format github-summary`: Markdown for `$GITHUB_STEP_SUMMARY`, under GitHub's cap of
//! 1 MiB per step: rows past the cap are counted, not written.

use super::{caveats, percent, ratio_text, shift_text, value};
use crate::check::{CheckReport, Status};
use std::fmt::Write;

/// GitHub's limit on one step's summary (1024 KiB), with room for the closing line.
pub const SUMMARY_CAP: usize = 1024 * 1024 - 1024;

/// The summary.
pub fn render(report: &CheckReport) -> String {
    let worst = report.worst();
    let icon = match worst {
        Status::Regression => ":x:",
        Status::Inconclusive => ":warning:",
        _ => ":white_check_mark:",
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## serverbench history check: {icon} {}\n",
        worst.label()
    );
    let _ = writeln!(
        out,
        "Threshold {:.1}%. Ratio: latest / baseline median with its 95% bootstrap interval; \
         shift: the newest change point (E-divisive means, t-test).\n",
        report.threshold * 100.0
    );
    out.push_str(
        "| cell | measure | runs | baseline | latest | ratio [95% CI] | shift | status |\n",
    );
    out.push_str("|---|---|--:|--:|--:|---|---|---|\n");
    let mut left = 0;
    for r in &report.rows {
        let base = r
            .baseline
            .as_ref()
            .map_or("-".into(), |b| value(r.measure, b.median));
        let status = match r.status {
            Status::Regression => format!("**{}**", r.status.label()),
            s => s.label().to_string(),
        };
        let line = format!(
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
            r.series.label(),
            r.measure,
            r.runs,
            base,
            value(r.measure, r.latest.median),
            ratio_text(r),
            shift_text(r),
            status
        );
        if out.len() + line.len() > SUMMARY_CAP {
            left += 1;
            continue;
        }
        out.push_str(&line);
    }
    if left > 0 {
        let _ = writeln!(
            out,
            "\n{left} more rows left out (GitHub's 1 MiB summary cap)."
        );
    }
    for r in &report.rows {
        for s in r.shifts.iter().filter(|s| s.regression) {
            let _ = writeln!(
                out,
                "\n- `{}` {}: {} at {} (mean {} → {}, p = {:.1e})",
                r.series.label(),
                r.measure,
                percent(s.magnitude),
                s.at.label,
                value(r.measure, s.mean_before),
                value(r.measure, s.mean_after),
                s.p
            );
        }
    }
    for r in &report.rows {
        for c in caveats(r) {
            let _ = writeln!(out, "\n- `{}` {}: {c}", r.series.label(), r.measure);
        }
    }
    out
}
