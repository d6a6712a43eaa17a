//! `--format bmf`: Bencher Metric Format, `{benchmark: {measure: {value, lower_value,
//! upper_value}}}`, with Bencher's built-in measures: `throughput` (req/s) and `latency`
//! (nanoseconds, so the p99 in µs is scaled by 1,000), and `cpu-us-per-request` (a measure of
//! our own, the slug a Bencher project creates for it; lower is better). The bounds are the latest run's
//! bootstrap interval when the history has one.

use crate::check::CheckReport;
use crate::series::Measure;
use serde_json::{json, Map, Value};

/// The JSON, pretty, with a final newline.
pub fn render(report: &CheckReport) -> String {
    let mut root = Map::new();
    for r in &report.rows {
        let (name, scale) = match r.measure {
            Measure::Rps => ("throughput", 1.0),
            Measure::P99 => ("latency", 1_000.0),
            Measure::Cpu => ("cpu-us-per-request", 1.0),
        };
        let mut metric = json!({ "value": r.latest.median * scale });
        if let Some((lo, hi)) = r.latest_interval {
            metric["lower_value"] = json!(lo * scale);
            metric["upper_value"] = json!(hi * scale);
        }
        let bench = root
            .entry(r.series.label())
            .or_insert_with(|| Value::Object(Map::new()));
        bench[name] = metric;
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
    text.push('\n');
    text
}
