//! `--format svg`: every chart of the report as its own `.svg` file, named after the figure id
//! (`hello-c50-rps.svg`), for embedding in a README. The text this exporter renders is a
//! Markdown snippet that embeds those files.

use crate::figures::{self, Figure};
use crate::{Comparison, Exporter, Format, NoComparisonForm};
use serverbench_analysis::summary::Summary;
use serverbench_results::env::Env;
use serverbench_results::record::LapRecord;
use std::fmt::Write;

/// Renders the Markdown snippet; [`files`] gives the SVG documents themselves.
pub struct SvgExporter<'a> {
    pub records: &'a [LapRecord],
}

/// Every chart, the per-second timelines included, in the order of the HTML page.
pub fn charts(summary: &Summary, records: &[LapRecord]) -> Vec<Figure> {
    let mut out = Vec::new();
    for table in &summary.tables {
        out.extend(figures::for_table(table, records));
        for s in &table.servers {
            out.extend(figures::timelines(table, records, &s.server));
        }
    }
    out.extend(figures::echo_mbps(summary));
    out.extend(figures::scaling(summary));
    out.extend(crate::capacity_chart::capacity_charts(summary));
    out
}

/// `(file name, SVG document)` for every chart; file names are unique.
pub fn files(summary: &Summary, records: &[LapRecord]) -> Vec<(String, String)> {
    let mut seen: Vec<String> = Vec::new();
    charts(summary, records)
        .into_iter()
        .map(|f| {
            let mut name = format!("{}.svg", f.id);
            let mut n = 2;
            while seen.contains(&name) {
                name = format!("{}-{n}.svg", f.id);
                n += 1;
            }
            seen.push(name.clone());
            (name, format!("{}\n", f.svg))
        })
        .collect()
}

impl Exporter for SvgExporter<'_> {
    fn render(&self, summary: &Summary, _env: Option<&Env>) -> String {
        let mut out = String::new();
        let titles = charts(summary, self.records).into_iter().map(|f| f.title);
        for ((name, _), title) in files(summary, self.records).iter().zip(titles) {
            let _ = writeln!(out, "![{}]({name})", title.replace(['[', ']'], ""));
        }
        out
    }

    fn render_comparison(
        &self,
        _c: &Comparison,
        _old: &str,
        _new: &str,
    ) -> Result<String, NoComparisonForm> {
        Err(NoComparisonForm(Format::Svg))
    }
}
