//! serverbench exporters: one trait, one file per format (in the manner of hyperfine's
//! `src/export/`). Every exporter renders the same [`Summary`] and the optional free-form
//! `env.json` of the results folder; none of them computes statistics. The HTML page and the
//! SVG charts also need the laps themselves (latency curves, per-second timelines): build them
//! with [`exporter_with_laps`] or [`render_with_laps`].

mod comparison;
mod csv;
pub mod env;
pub mod figures;
mod html;
mod json;
mod markdown;
pub mod svg;
mod term;
mod text;

use serverbench_analysis::summary::Summary;
use serverbench_results::env::Env;
use serverbench_results::record::LapRecord;
use std::fmt;
use std::str::FromStr;

pub use comparison::render_comparison;
pub use serverbench_analysis::compare::Comparison;

/// Renders a summary in one format.
pub trait Exporter {
    /// The whole document, ending with a newline.
    fn render(&self, summary: &Summary, env: Option<&Env>) -> String;
}

/// The output formats of `serverbench report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned ASCII tables for a terminal.
    Term,
    /// GitHub-flavoured Markdown tables, like the Node frameworks experiment's README.
    Markdown,
    /// The summary (and env) as pretty JSON.
    Json,
    /// One row per server x scenario x profile.
    Csv,
    /// A self-contained HTML page: sortable tables, environment, diagnostics, inline SVG charts.
    Html,
    /// Each chart as its own SVG file (see [`svg::files`]); the text output is a Markdown
    /// snippet embedding them, for a README.
    Svg,
}

impl Format {
    /// The names `FromStr` accepts, for help texts and errors.
    pub const NAMES: &'static str = "term, md (markdown), json, csv, html, svg";

    /// Whether the format draws charts from the laps (use [`render_with_laps`]).
    pub fn needs_laps(self) -> bool {
        matches!(self, Format::Html | Format::Svg)
    }
}

/// An unknown format name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{0}`; valid formats: {names}", names = Format::NAMES)]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "term" | "terminal" | "text" => Ok(Format::Term),
            "md" | "markdown" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            "html" => Ok(Format::Html),
            "svg" => Ok(Format::Svg),
            _ => Err(UnknownFormat(s.to_owned())),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Term => "term",
            Format::Markdown => "md",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Html => "html",
            Format::Svg => "svg",
        })
    }
}

/// The exporter of a format; the HTML and SVG ones get no laps, so they draw only the charts
/// the summary alone gives (use [`exporter_with_laps`] for the full page).
pub fn exporter(format: Format) -> Box<dyn Exporter> {
    exporter_with_laps(format, &[])
}

/// The exporter of a format, with the laps the charts are drawn from.
pub fn exporter_with_laps(format: Format, records: &[LapRecord]) -> Box<dyn Exporter + '_> {
    match format {
        Format::Term => Box::new(term::TermExporter),
        Format::Markdown => Box::new(markdown::MarkdownExporter),
        Format::Json => Box::new(json::JsonExporter),
        Format::Csv => Box::new(csv::CsvExporter),
        Format::Html => Box::new(html::HtmlExporter { records }),
        Format::Svg => Box::new(svg::SvgExporter { records }),
    }
}

/// Renders `summary` (and `env`, the results folder's `env.json`, when there is one).
pub fn render(format: Format, summary: &Summary, env: Option<&Env>) -> String {
    exporter(format).render(summary, env)
}

/// Renders `summary` with the laps it was made from (needed by the HTML page and SVG charts).
pub fn render_with_laps(
    format: Format,
    summary: &Summary,
    env: Option<&Env>,
    records: &[LapRecord],
) -> String {
    exporter_with_laps(format, records).render(summary, env)
}

/// The summary every report shows, with every warning: [`serverbench_analysis::analyze`] (the
/// report computes nothing itself). `env` is the results folder's `env.json`.
pub fn full_summary(records: &[LapRecord], baseline: Option<&str>, env: Option<&Env>) -> Summary {
    serverbench_analysis::analyze(records, baseline, env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_parse_case_insensitively() {
        assert_eq!("MD".parse::<Format>(), Ok(Format::Markdown));
        assert_eq!("markdown".parse::<Format>(), Ok(Format::Markdown));
        assert_eq!("term".parse::<Format>(), Ok(Format::Term));
        assert_eq!("csv".parse::<Format>(), Ok(Format::Csv));
        assert_eq!("json".parse::<Format>(), Ok(Format::Json));
        assert_eq!("HTML".parse::<Format>(), Ok(Format::Html));
        assert_eq!("svg".parse::<Format>(), Ok(Format::Svg));
    }

    #[test]
    fn an_unknown_format_lists_the_valid_names() {
        let err = "pdf".parse::<Format>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown format `pdf`; valid formats: term, md (markdown), json, csv, html, svg"
        );
    }
}
