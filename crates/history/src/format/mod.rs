//! The formats of `history check --format`: one file per format, all over the one table of a
//! [`CheckReport`] (as hyperfine keeps one exporter per file over one result).
//!
//! - `term`: a table within 120 columns.
//! - `github-summary`: Markdown for a CI job page (`$GITHUB_STEP_SUMMARY`), under its 1 MiB cap.
//! - `junit`: JUnit XML, one test case per cell and measure, failing on a regression.
//! - `bmf`: Bencher Metric Format JSON (`bencher run --adapter json`).
//! - `gab`: github-action-benchmark's `customBiggerIsBetter` (req/s) or
//!   `customSmallerIsBetter` (p99 latency) JSON: one direction per file, so one measure.

mod bmf;
mod gab;
mod github;
mod junit;
mod term;

use crate::check::{CheckReport, Row};
use crate::series::Measure;
use std::fmt;
use std::str::FromStr;

pub use github::SUMMARY_CAP;

/// An output format of `history check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Term,
    GithubSummary,
    Junit,
    Bmf,
    Gab,
}

impl Format {
    /// Every format, in help order.
    pub const ALL: [Format; 5] = [
        Format::Term,
        Format::GithubSummary,
        Format::Junit,
        Format::Bmf,
        Format::Gab,
    ];

    fn name(self) -> &'static str {
        match self {
            Format::Term => "term",
            Format::GithubSummary => "github-summary",
            Format::Junit => "junit",
            Format::Bmf => "bmf",
            Format::Gab => "gab",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a format.
#[derive(Debug, thiserror::Error)]
#[error("unknown format `{0}` (term, github-summary, junit, bmf or gab)")]
pub struct UnknownFormat(String);

impl FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// Renders `report` in `format`.
pub fn render(format: Format, report: &CheckReport) -> String {
    match format {
        Format::Term => term::render(report),
        Format::GithubSummary => github::render(report),
        Format::Junit => junit::render(report),
        Format::Bmf => bmf::render(report),
        Format::Gab => gab::render(report),
    }
}

/// `+3.2%`, `-12.0%`.
pub(crate) fn percent(fraction: f64) -> String {
    format!("{:+.1}%", fraction * 100.0)
}

/// `0.912 [0.880, 0.941]`, or `-` without a baseline.
pub(crate) fn ratio_text(row: &Row) -> String {
    match (row.ratio, row.interval) {
        (Some(r), Some((lo, hi))) => format!("{r:.3} [{lo:.3}, {hi:.3}]"),
        (Some(r), None) => format!("{r:.3}"),
        _ => "-".into(),
    }
}

/// `-15.0% at c000024`, or `-`.
pub(crate) fn shift_text(row: &Row) -> String {
    row.shift().map_or("-".into(), |s| {
        format!("{} at {}", percent(s.magnitude), s.at.label)
    })
}

/// What a row's verdict cannot say by itself: what would settle an inconclusive row, and a
/// p99 judged from too few latencies (see [`crate::settle`]).
pub(crate) fn caveats(row: &Row) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(s) = &row.settle {
        out.push(s.text());
    }
    if let Some(k) = row.thin_tail {
        let what = if k == 1 { "latency" } else { "latencies" };
        out.push(format!(
            "p99 from about {k} {what} above it per lap (fewer than {}): too few to judge",
            crate::settle::MIN_TAIL_SAMPLES
        ));
    }
    out
}

/// A value with its unit: `98.2k req/s`, `1.63k µs`.
pub(crate) fn value(m: Measure, v: f64) -> String {
    format!("{} {}", serverbench_charts::format_number(v), m.unit())
}

#[cfg(test)]
pub(crate) mod fixture {
    use crate::check::{CheckReport, Row, RunRef, Shift, Status};
    use crate::series::{CellKey, Measure, SeriesKey};
    use crate::settle::Settle;

    fn key(server: &str) -> SeriesKey {
        SeriesKey {
            testbed: "0123456789abcdef".into(),
            cell: CellKey {
                server: server.into(),
                scenario: "hello".into(),
                profile: "c64".into(),
                transport: "h1".into(),
            },
            settings: "fedcba9876543210".into(),
        }
    }

    fn run(run: i64, median: f64) -> RunRef {
        RunRef {
            run,
            label: format!("c{run:06}"),
            median,
        }
    }

    /// A fixed report: one regression (with a change point), one ok, one inconclusive.
    pub fn report() -> CheckReport {
        CheckReport {
            threshold: 0.05,
            rows: vec![
                Row {
                    series: key("mine"),
                    measure: Measure::Rps,
                    runs: 30,
                    latest: run(30, 85_120.0),
                    latest_interval: Some((84_200.0, 86_010.0)),
                    baseline: Some(run(29, 84_900.0)),
                    ratio: Some(1.0026),
                    interval: Some((0.981, 1.022)),
                    shifts: vec![Shift {
                        at: run(25, 85_300.0),
                        mean_before: 100_050.0,
                        mean_after: 85_040.0,
                        magnitude: -0.15,
                        p: 1.2e-9,
                        regression: true,
                    }],
                    status: Status::Regression,
                    settle: None,
                    thin_tail: None,
                },
                Row {
                    series: key("mine"),
                    measure: Measure::P99,
                    runs: 30,
                    latest: run(30, 1880.0),
                    latest_interval: None,
                    baseline: Some(run(29, 1875.0)),
                    ratio: Some(1.0027),
                    interval: Some((0.98, 1.03)),
                    shifts: vec![],
                    status: Status::Ok,
                    settle: None,
                    thin_tail: Some(2),
                },
                Row {
                    series: key("node/http"),
                    measure: Measure::Rps,
                    runs: 30,
                    latest: run(30, 41_000.0),
                    latest_interval: Some((40_100.0, 41_900.0)),
                    baseline: Some(run(29, 42_500.0)),
                    ratio: Some(0.9647),
                    interval: Some((0.93, 0.99)),
                    shifts: vec![],
                    status: Status::Inconclusive,
                    settle: Some(Settle {
                        laps_now: 3,
                        laps_needed: Some(12),
                    }),
                    thin_tail: None,
                },
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_parses_from_its_name() {
        for f in Format::ALL {
            assert_eq!(f.to_string().parse::<Format>().unwrap(), f);
        }
        assert!("html".parse::<Format>().is_err());
    }

    #[test]
    fn the_term_table_fits_in_120_columns() {
        let text = render(Format::Term, &fixture::report());
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "{line}");
        }
        insta::assert_snapshot!(text);
    }

    #[test]
    fn the_github_summary_is_a_markdown_table() {
        insta::assert_snapshot!(render(Format::GithubSummary, &fixture::report()));
    }

    #[test]
    fn the_bmf_json_keys_measures_by_cell() {
        insta::assert_snapshot!(render(Format::Bmf, &fixture::report()));
    }

    #[test]
    fn the_gab_json_holds_one_direction() {
        insta::assert_snapshot!(render(Format::Gab, &fixture::report()));
    }

    #[test]
    fn the_junit_xml_fails_the_regression_only() {
        insta::assert_snapshot!(render(Format::Junit, &fixture::report()));
    }
}
