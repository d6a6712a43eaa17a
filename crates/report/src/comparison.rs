//! Rendering a [`Comparison`] of two results folders (`serverbench compare`).

use crate::csv::quote;
use crate::text::{self, pad, Align};
use crate::Format;
use serde::Serialize;
use serverbench_analysis::compare::{CompareRow, Comparison, Unmatched};

/// The JSON document of a comparison.
#[derive(Serialize)]
struct Document<'a> {
    old: &'a str,
    new: &'a str,
    comparison: &'a Comparison,
}

/// Renders the comparison of `old` and `new` (folder labels shown in the heading). A comparison
/// has no HTML or SVG form: those formats render the terminal table.
pub fn render_comparison(format: Format, c: &Comparison, old: &str, new: &str) -> String {
    match format {
        Format::Json => crate::json::pretty(&Document {
            old,
            new,
            comparison: c,
        }),
        Format::Csv => csv(c),
        Format::Markdown => markdown(c, old, new),
        Format::Term | Format::Html | Format::Svg => term(c, old, new),
    }
}

fn cells(r: &CompareRow, dash: &str) -> Vec<String> {
    let interval = r.interval.map_or_else(
        || text::MISSING.to_owned(),
        |i| format!("{:.3}{dash}{:.3}", i.low, i.high),
    );
    vec![
        r.server.clone(),
        r.scenario.clone(),
        r.profile.clone(),
        text::int(Some(r.old_median)),
        text::int(Some(r.new_median)),
        format!("{:.3}", r.ratio),
        interval,
        r.verdict.label().to_owned(),
    ]
}

const HEADER: [&str; 8] = [
    "server",
    "scenario",
    "profile",
    "old req/s",
    "new req/s",
    "new/old",
    "95% interval",
    "verdict",
];

fn unmatched_lines(c: &Comparison, bullet: &str, old: &str, new: &str) -> String {
    let fmt = |u: &Unmatched, side: &str| {
        format!(
            "{bullet}{} ({}, {}) only in {side}\n",
            u.server, u.scenario, u.profile
        )
    };
    let mut out = String::new();
    for u in &c.only_old {
        out.push_str(&fmt(u, old));
    }
    for u in &c.only_new {
        out.push_str(&fmt(u, new));
    }
    out
}

fn term(c: &Comparison, old: &str, new: &str) -> String {
    let header: Vec<String> = HEADER.iter().map(|h| (*h).to_owned()).collect();
    let rows: Vec<Vec<String>> = c.rows.iter().map(|r| cells(r, "-")).collect();
    let w = text::widths(&header, &rows);
    let align = |i: usize| {
        if (3..=6).contains(&i) {
            Align::Right
        } else {
            Align::Left
        }
    };
    let line = |cells: &[String]| {
        let padded: Vec<String> = (0..cells.len())
            .map(|i| pad(&cells[i], w[i], align(i)))
            .collect();
        format!("  {}\n", padded.join("  ").trim_end())
    };
    let mut out = format!("old: {old}\nnew: {new}\n\n");
    out.push_str(&line(&header));
    for r in &rows {
        out.push_str(&line(r));
    }
    let extra = unmatched_lines(c, "  - ", old, new);
    if !extra.is_empty() {
        out.push_str("\nNot compared:\n");
        out.push_str(&extra);
    }
    out
}

fn markdown(c: &Comparison, old: &str, new: &str) -> String {
    let mut out = format!("Comparing `{new}` (new) with `{old}` (old).\n\n");
    out.push_str(&format!("| {} |\n", HEADER.join(" | ")));
    out.push_str("| :--- | :--- | :--- | ---: | ---: | ---: | ---: | :--- |\n");
    for r in &c.rows {
        let cells: Vec<String> = cells(r, "–")
            .iter()
            .map(|s| s.replace('|', "\\|"))
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    let extra = unmatched_lines(c, "- ", old, new);
    if !extra.is_empty() {
        out.push_str("\nNot compared:\n\n");
        out.push_str(&extra);
    }
    out
}

fn csv(c: &Comparison) -> String {
    let mut out = String::from(
        "server,scenario,profile,old_median,new_median,ratio,ratio_low,ratio_high,verdict\n",
    );
    for r in &c.rows {
        let f = |x: Option<f64>| x.map_or_else(String::new, |v| v.to_string());
        let cells = [
            quote(&r.server),
            quote(&r.scenario),
            quote(&r.profile),
            r.old_median.to_string(),
            r.new_median.to_string(),
            r.ratio.to_string(),
            f(r.interval.map(|i| i.low)),
            f(r.interval.map(|i| i.high)),
            r.verdict.label().replace(' ', "_"),
        ];
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}
