//! `--format gab`: github-action-benchmark's custom JSON, `[{name, unit, value, range,
//! extra}]`. One file holds one direction: `customBiggerIsBetter` for req/s, or
//! `customSmallerIsBetter` when the report holds no req/s (`--measure p99`, `--measure cpu`).

use crate::check::CheckReport;
use crate::series::Measure;
use serde_json::json;

/// The JSON, pretty, with a final newline.
pub fn render(report: &CheckReport) -> String {
    let bigger = report.rows.iter().any(|r| r.measure == Measure::Rps);
    let entries: Vec<_> = report
        .rows
        .iter()
        .filter(|r| r.measure.bigger_is_better() == bigger)
        .map(|r| {
            let mut e = json!({
                "name": format!("{} {}", r.series.label(), r.measure),
                "unit": r.measure.unit(),
                "value": r.latest.median,
                "extra": format!("run {} ({}); {}", r.latest.run, r.latest.label, r.status.label()),
            });
            if let Some((lo, hi)) = r.latest_interval {
                e["range"] = json!(format!("{lo:.1}..{hi:.1}"));
            }
            e
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&entries).unwrap_or_default();
    text.push('\n');
    text
}
