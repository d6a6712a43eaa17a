//! The summary (and env.json) as pretty JSON: `{"summary": ..., "env": ...}`.

use crate::Exporter;
use serde::Serialize;
use serverbench_analysis::summary::Summary;
use serverbench_results::env::Env;

/// The JSON exporter.
pub struct JsonExporter;

/// The document: the summary first, then env.json as it was found (`null` without one).
#[derive(Serialize)]
struct Document<'a> {
    summary: &'a Summary,
    env: Option<&'a Env>,
}

impl Exporter for JsonExporter {
    fn render(&self, summary: &Summary, env: Option<&Env>) -> String {
        pretty(&Document { summary, env })
    }
}

/// Pretty JSON with a final newline. Plain data with string keys always serializes; NaN and
/// infinities become `null`.
pub fn pretty<T: Serialize>(value: &T) -> String {
    let mut out = serde_json::to_string_pretty(value).unwrap_or_default();
    out.push('\n');
    out
}
