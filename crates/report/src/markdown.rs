//! Markdown tables in the style of the Node frameworks experiment (seed 003): a configuration
//! block, one table per scenario x profile, medals for the top three where not tied, the
//! scaling tables of a core sweep, warnings and a legend. The columns come from [`crate::table`]; this file only supplies the syntax.

use crate::env::{config_block, versions};
use crate::table::{self, Align, Grid, View};
use crate::text::{count, pad, widths};
use crate::{Comparison, Exporter, NoComparisonForm};
use serverbench_analysis::summary::{Summary, Table};
use serverbench_results::env::Env;

/// Medals for ranks 1, 2 and 3.
const MEDALS: [&str; 3] = ["🥇", "🥈", "🥉"];

/// The Markdown exporter.
pub struct MarkdownExporter {
    pub view: View,
}

impl Exporter for MarkdownExporter {
    fn render(&self, summary: &Summary, env: Option<&Env>) -> String {
        let mut out = String::new();
        let config = config_block(env, &versions(env, summary), "  ");
        if !config.is_empty() {
            out.push_str("```\nConfiguration:\n");
            out.push_str(&config);
            out.push_str("```\n\n");
        }
        for t in &summary.tables {
            out.push_str(&title(t));
            out.push_str(&grid(&table::summary_grid(summary, t, env, self.view)));
            if let Some(b) = &t.baseline {
                out.push_str(&format!("\nSpeed factor relative to {}.\n", escape(b)));
            }
            if let (Some(h), Some(l)) = (
                table::hosts_grid(summary, t, self.view),
                table::host_laps_grid(summary, t),
            ) {
                out.push_str("\nPer client host:\n\n");
                out.push_str(&grid(&h));
                out.push_str("\nPer lap:\n\n");
                out.push_str(&grid(&l));
            }
            out.push('\n');
        }
        for (heading, g) in table::protocol_tables(summary)
            .into_iter()
            .chain(table::database_tables(summary))
            .chain(table::cost_tables(summary))
            .chain(table::capacity_tables(summary))
            .chain(table::capacity_curve_tables(summary))
            .chain(table::mix_tables(summary))
        {
            out.push_str(&format!("### {}\n\n", escape(&heading)));
            out.push_str(&grid(&g));
            out.push('\n');
        }
        for line in table::cost_legend(summary)
            .into_iter()
            .chain(table::capacity_legend(summary))
        {
            out.push_str(&format!("{}\n\n", escape(&line)));
        }
        for t in table::scaling_tables(summary) {
            out.push_str(&format!(
                "### {} · {}: req/s by server cores\n\n",
                escape(t.scenario),
                escape(t.profile)
            ));
            out.push_str(&grid(&table::scaling_grid(&t, self.view)));
            out.push('\n');
        }
        if !summary.warnings.is_empty() {
            out.push_str("**Warnings**\n\n");
            for w in &summary.warnings {
                out.push_str(&format!("- {}\n", escape(&w.message)));
            }
            out.push('\n');
        }
        let noisy = table::noisy_lines(summary);
        if !noisy.is_empty() {
            out.push_str("**Disturbed laps and --until-ci**\n\n");
            for line in noisy {
                out.push_str(&format!("- {}\n", escape(&line)));
            }
            out.push('\n');
        }
        for line in table::legend(summary) {
            out.push_str(&format!("{line}\n"));
        }
        out.push_str("Medals go to the top three where the intervals do not overlap.\n");
        out
    }

    fn render_comparison(
        &self,
        c: &Comparison,
        old: &str,
        new: &str,
    ) -> Result<String, NoComparisonForm> {
        let mut out = format!("Comparing `{new}` (new) with `{old}` (old).\n\n");
        for (i, (heading, g)) in table::comparison_grids(c).into_iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if let Some(h) = heading {
                out.push_str(&format!("**{h}**\n\n"));
            }
            out.push_str(&grid(&g));
        }
        out.push_str(&format!("\n{}\n", table::COMPARISON_LEGEND));
        let extra = table::unmatched(c, old, new);
        if !extra.is_empty() {
            out.push_str("\nNot compared:\n\n");
            for line in extra {
                out.push_str(&format!("- {}\n", escape(&line)));
            }
        }
        Ok(out)
    }
}

/// `### hello · c50 (http, 50 connections)`.
fn title(t: &Table) -> String {
    format!(
        "### {} · {} ({}, {})\n\n",
        escape(&t.scenario),
        escape(&t.profile),
        escape(&table::load(t)),
        count(t.connections, "connection")
    )
}

/// Escapes what would break a table cell or start Markdown formatting.
fn escape(s: &str) -> String {
    s.replace('|', "\\|")
        .replace('*', "\\*")
        .replace('_', "\\_")
}

/// The grid as a GitHub-flavoured table, padded so that the source lines up too; the headline
/// cell of a medalled row starts with its medal.
fn grid(g: &Grid) -> String {
    let rows: Vec<Vec<String>> = g
        .rows
        .iter()
        .map(|r| {
            let mut cells: Vec<String> = r.cells.iter().map(|c| escape(&c.text)).collect();
            if let (Some(h), Some(m)) = (g.headline, r.medal) {
                cells[h] = format!("{} {}", MEDALS[m as usize - 1], cells[h]);
            }
            cells
        })
        .collect();
    let header: Vec<String> = g.columns.iter().map(|c| escape(&c.label)).collect();
    let header_strs: Vec<&str> = header.iter().map(String::as_str).collect();
    let row_strs: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    // At least 2 so that the separator (`:-` or `-:`) is as wide as its column.
    let widths: Vec<usize> = widths(&header_strs, &row_strs)
        .into_iter()
        .map(|w| w.max(2))
        .collect();
    let aligns: Vec<Align> = g.columns.iter().map(|c| c.align).collect();
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let padded = |cells: &[String]| {
        (0..cells.len())
            .map(|c| pad(&cells[c], widths[c], aligns[c]))
            .collect()
    };
    let mut out = line(padded(&header));
    out.push_str(&line(
        (0..header.len())
            .map(|c| match aligns[c] {
                Align::Left => format!(":{}", "-".repeat(widths[c] - 1)),
                Align::Right => format!("{}:", "-".repeat(widths[c] - 1)),
            })
            .collect(),
    ));
    for r in &rows {
        out.push_str(&line(padded(r)));
    }
    out
}
