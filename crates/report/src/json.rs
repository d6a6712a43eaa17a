//! The summary (and env.json) as pretty JSON: `{"summary": ..., "env": ...}`; a comparison as
//! `{"old": ..., "new": ..., "comparison": ...}`.

use crate::{Comparison, Exporter, NoComparisonForm};
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

/// The document of a comparison: the folder labels, then the comparison.
#[derive(Serialize)]
struct ComparisonDocument<'a> {
    old: &'a str,
    new: &'a str,
    comparison: &'a Comparison,
}

impl Exporter for JsonExporter {
    fn render(&self, summary: &Summary, env: Option<&Env>) -> String {
        pretty(&Document { summary, env })
    }

    fn render_comparison(
        &self,
        comparison: &Comparison,
        old: &str,
        new: &str,
    ) -> Result<String, NoComparisonForm> {
        Ok(pretty(&ComparisonDocument {
            old,
            new,
            comparison,
        }))
    }
}

/// Pretty JSON with a final newline. Plain data with string keys always serializes; NaN and
/// infinities become `null`.
pub fn pretty<T: Serialize>(value: &T) -> String {
    let mut out = serde_json::to_string_pretty(value).unwrap_or_default();
    out.push('\n');
    out
}
