//! serverbench exporters: one trait, one file per format (in the manner of hyperfine's
//! `src/export/`). Every exporter renders the same [`Summary`] and the optional `env.json` of
//! the results folder, or a [`Comparison`] of two folders; none of them computes statistics.
//! What the tables hold (columns, headings, order, the text of each cell) is decided once in
//! [`table`]; the exporters only supply syntax. The HTML page and the SVG charts also need the
//! laps themselves (latency curves, per-second timelines): pass them to [`render_with`].
//! One load's text (`serverbench load`: its summary, live line, per-host breakdown and capacity
//! curve) is in [`load`].
//!
//! It reads nothing and prints nothing: the CLI loads the folder and writes the output.

mod capacity_chart;
mod csv;
pub mod env;
pub mod figures;
mod html;
mod json;
pub mod load;
mod markdown;
pub mod svg;
pub mod table;
mod term;
mod term_warnings;
mod text;

use serverbench_analysis::summary::Summary;
use serverbench_results::env::Env;
use serverbench_results::record::LapRecord;
use std::fmt;
use std::str::FromStr;

use serverbench_analysis::compare::Comparison;
/// The terminal layout of any [`table::Grid`] (two spaces before each column), a wrapped
/// bullet, and the width both keep to: for the CLI's own listings (`run --dry-run`).
pub use term::{bullet, grid as term_grid, WIDTH as TERM_WIDTH};
/// Thousands separators, as every report writes numbers: `150,500`.
pub use text::grouped;

/// Renders a summary, or a comparison, in one format.
pub trait Exporter {
    /// The whole document, ending with a newline.
    fn render(&self, summary: &Summary, env: Option<&Env>) -> String;

    /// The comparison of the folders labelled `old` and `new`, ending with a newline; an error
    /// for a format that has no comparison form.
    fn render_comparison(
        &self,
        c: &Comparison,
        old: &str,
        new: &str,
    ) -> Result<String, NoComparisonForm>;
}

/// How much the tables show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Every column, server versions included, in the terminal and Markdown tables (by
    /// default they fit 120 columns and versions are listed in the configuration block).
    pub wide: bool,
    /// The terminal lists every warning's sentence (`report --warnings`) instead of one line
    /// per kind that repeats across servers.
    pub warnings: bool,
}

impl Options {
    /// The columns of the terminal and Markdown tables.
    pub fn view(self) -> table::View {
        if self.wide {
            table::View::Wide
        } else {
            table::View::Ranking
        }
    }
}

/// A format with no comparison form (HTML, SVG): `serverbench compare` refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a comparison has no {0} form; compare renders {names}", names = Format::COMPARISON_NAMES)]
pub struct NoComparisonForm(pub Format);

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

    /// The names of the formats a comparison can be rendered in.
    pub const COMPARISON_NAMES: &'static str = "term, md, json or csv";

    /// Whether the format draws charts from the laps (pass them to [`render_with`]).
    pub fn needs_laps(self) -> bool {
        matches!(self, Format::Html | Format::Svg)
    }

    /// Whether a comparison of two folders can be rendered in this format.
    pub fn renders_comparison(self) -> bool {
        !matches!(self, Format::Html | Format::Svg)
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

/// The exporter of a format, with the laps the charts are drawn from (the HTML page and the SVG
/// charts draw only what the summary alone gives without them).
pub fn exporter(format: Format, records: &[LapRecord], options: Options) -> Box<dyn Exporter + '_> {
    let view = options.view();
    match format {
        Format::Term => Box::new(term::TermExporter {
            view,
            warnings: options.warnings,
        }),
        Format::Markdown => Box::new(markdown::MarkdownExporter { view }),
        Format::Json => Box::new(json::JsonExporter),
        Format::Csv => Box::new(csv::CsvExporter),
        Format::Html => Box::new(html::HtmlExporter { records }),
        Format::Svg => Box::new(svg::SvgExporter { records }),
    }
}

/// Renders `summary` (and `env`, the results folder's `env.json`, when there is one) with the
/// default options and no laps: the table `serverbench run` prints at its end.
pub fn render(format: Format, summary: &Summary, env: Option<&Env>) -> String {
    render_with(format, summary, env, &[], Options::default())
}

/// Renders `summary` with the laps it was made from (the HTML page and SVG charts need them).
pub fn render_with(
    format: Format,
    summary: &Summary,
    env: Option<&Env>,
    records: &[LapRecord],
    options: Options,
) -> String {
    exporter(format, records, options).render(summary, env)
}

/// Renders the comparison of the folders labelled `old` and `new`; HTML and SVG have no
/// comparison form and are an error.
pub fn render_comparison(
    format: Format,
    c: &Comparison,
    old: &str,
    new: &str,
) -> Result<String, NoComparisonForm> {
    exporter(format, &[], Options::default()).render_comparison(c, old, new)
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
    fn html_and_svg_have_no_comparison_form() {
        let c = Comparison {
            rows: Vec::new(),
            only_old: Vec::new(),
            only_new: Vec::new(),
        };
        for format in [Format::Html, Format::Svg] {
            let err = render_comparison(format, &c, "a", "b").unwrap_err();
            assert_eq!(err, NoComparisonForm(format));
            assert!(err.to_string().contains("term, md, json or csv"), "{err}");
        }
        for format in [Format::Term, Format::Markdown, Format::Json, Format::Csv] {
            assert!(format.renders_comparison());
            assert!(render_comparison(format, &c, "a", "b").is_ok(), "{format}");
        }
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
