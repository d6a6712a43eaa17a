//! Aligned tables for a terminal, one per scenario x profile, warnings below. The columns come
//! from [`crate::table`]; this file only lines them up. By default a table fits 120 columns
//! (versions are in the configuration block above it); `--wide` shows every column. The scaling
//! tables of a core sweep follow the summary tables, split into blocks of core counts when
//! they would be wider.

use crate::env::{config_block, versions};
use crate::table::{self, Grid, View};
use crate::text::{count, pad, widths};
use crate::{Comparison, Exporter, NoComparisonForm};
use serverbench_analysis::summary::{Summary, Table};
use serverbench_results::env::Env;

/// The terminal exporter.
pub struct TermExporter {
    pub view: View,
    /// Every warning's sentence, not one line per repeated kind.
    pub warnings: bool,
}

impl Exporter for TermExporter {
    fn render(&self, summary: &Summary, env: Option<&Env>) -> String {
        let mut out = config_block(env, &versions(env, summary), "");
        if !out.is_empty() {
            out.push('\n');
        }
        for t in &summary.tables {
            out.push_str(&title(t));
            out.push_str(&grid(&table::summary_grid(summary, t, env, self.view)));
            if let Some(line) = table::disturbed_line(summary, &t.scenario, &t.profile) {
                out.push_str(&textwrap::fill(&line, WIDTH));
                out.push('\n');
            }
            out.push_str(&hosts(summary, t, self.view));
            out.push('\n');
        }
        for (heading, g) in table::protocol_tables(summary) {
            out.push_str(&format!("{heading}\n"));
            out.push_str(&grid(&g));
            out.push('\n');
        }
        out.push_str(&paragraphs(&table::protocol_legend(summary)));
        for (heading, g) in table::database_tables(summary) {
            out.push_str(&format!("{heading}\n"));
            out.push_str(&grid(&g));
            out.push('\n');
        }
        out.push_str(&paragraphs(&table::database_legend(summary)));
        for (heading, g) in table::cost_tables(summary) {
            out.push_str(&format!("{heading}\n"));
            out.push_str(&grid(&g));
            out.push('\n');
        }
        out.push_str(&paragraphs(&table::cost_legend(summary)));
        for (heading, g) in table::capacity_tables(summary) {
            out.push_str(&format!("{heading}\n"));
            out.push_str(&grid(&g));
            out.push('\n');
        }
        out.push_str(&paragraphs(&table::capacity_legend(summary)));
        for (heading, g) in table::mix_tables(summary) {
            out.push_str(&format!("{heading}\n"));
            out.push_str(&grid(&g));
            out.push('\n');
        }
        out.push_str(&paragraphs(&table::mix_legend(summary)));
        out.push_str(&scaling(summary, self.view));
        if let Some(note) = table::latency_note(summary) {
            out.push_str(&textwrap::fill(&note, WIDTH));
            out.push_str("\n\n");
        }
        let until_ci = table::until_ci_lines(summary);
        if !until_ci.is_empty() {
            for line in until_ci {
                out.push_str(&textwrap::fill(&line, WIDTH));
                out.push('\n');
            }
            out.push('\n');
        }
        out.push_str(&crate::term_warnings::section(
            &summary.warnings,
            self.warnings,
        ));
        out
    }

    fn render_comparison(
        &self,
        c: &Comparison,
        old: &str,
        new: &str,
    ) -> Result<String, NoComparisonForm> {
        let mut out = format!("old: {old}\nnew: {new}\n\n");
        for (i, (heading, g)) in table::comparison_grids(c).into_iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if let Some(h) = heading {
                out.push_str(&format!("{h}\n"));
            }
            out.push_str(&grid(&g));
        }
        out.push('\n');
        out.push_str(&textwrap::fill(table::COMPARISON_LEGEND, WIDTH));
        out.push('\n');
        let extra = table::unmatched(c, old, new);
        if !extra.is_empty() {
            out.push_str("\nNot compared:\n");
            for line in extra {
                out.push_str(&format!("  - {line}\n"));
            }
        }
        Ok(out)
    }
}

pub use crate::text::{bullet, WIDTH};

/// Under a table whose laps ran over several machines: each client host's share of each lap,
/// then each lap's server host, start skew and controller CPU.
fn hosts(summary: &Summary, t: &Table, view: View) -> String {
    let (Some(h), Some(l)) = (
        table::hosts_grid(summary, t, view),
        table::host_laps_grid(summary, t),
    ) else {
        return String::new();
    };
    format!(
        "\n  per client host:\n{}\n  per lap:\n{}",
        grid(&h),
        grid(&l)
    )
}

/// The scaling tables of a core sweep, each split into several blocks when it would be wider
/// than [`WIDTH`] (in the ranking view), then what they show.
fn scaling(summary: &Summary, view: View) -> String {
    let mut out = String::new();
    for t in table::scaling_tables(summary) {
        out.push_str(&format!(
            "{} / {}: req/s by server cores (WORKERS = cores)\n",
            t.scenario, t.profile
        ));
        for counts in fitting(&t, view) {
            out.push_str(&grid(&table::scaling_grid_of(&t, view, &counts)));
        }
        out.push('\n');
    }
    out.push_str(&paragraphs(&table::scaling_legend(summary)));
    out
}

/// Legend lines wrapped at [`WIDTH`], one after the other, then an empty line; nothing without
/// a line.
fn paragraphs(lines: &[String]) -> String {
    let mut out = String::new();
    for line in lines {
        out.push_str(&textwrap::fill(line, WIDTH));
        out.push('\n');
    }
    if !lines.is_empty() {
        out.push('\n');
    }
    out
}

/// The core counts of `t` in groups whose tables fit [`WIDTH`] (one group in the wide view; a
/// single count too wide alone gets a group of its own).
fn fitting(t: &table::ScalingTable, view: View) -> Vec<Vec<u32>> {
    let counts = t.counts();
    if view == View::Wide {
        return vec![counts];
    }
    let width = |g: &Grid| grid(g).lines().map(|l| l.chars().count()).max();
    let mut groups: Vec<Vec<u32>> = vec![Vec::new()];
    for n in counts {
        let last = groups.last_mut().expect("never empty");
        last.push(n);
        let wider = width(&table::scaling_grid_of(t, view, last)).unwrap_or(0) > WIDTH;
        if wider && last.len() > 1 {
            last.pop();
            groups.push(vec![n]);
        }
    }
    groups
}

/// `hello / c50 (http, 50 connections), speed vs node/express`.
fn title(t: &Table) -> String {
    let baseline = t
        .baseline
        .as_ref()
        .map_or(String::new(), |b| format!(", speed vs {b}"));
    format!(
        "{} / {} ({}, {}){baseline}\n",
        t.scenario,
        t.profile,
        table::load(t),
        count(t.connections, "connection")
    )
}

/// The grid as aligned text: two spaces before each column, trailing spaces trimmed.
pub fn grid(g: &Grid) -> String {
    let header: Vec<&str> = g.columns.iter().map(|c| c.label.as_str()).collect();
    let rows: Vec<Vec<&str>> = g
        .rows
        .iter()
        .map(|r| r.cells.iter().map(|c| c.text.as_str()).collect())
        .collect();
    let widths = widths(&header, &rows);
    let line = |cells: &[&str]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&g.columns)
            .zip(&widths)
            .map(|((text, col), w)| pad(text, *w, col.align))
            .collect();
        format!("  {}\n", padded.join("  ").trim_end())
    };
    let mut out = line(&header);
    for r in &rows {
        out.push_str(&line(r));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_warning_wraps_under_its_bullet_without_splitting_words() {
        let text = format!("{} echo-stream{}", "word ".repeat(22), " end".repeat(10));
        let out = bullet(&text);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.len() > 1, "{out}");
        assert!(lines[0].starts_with("  - word") && lines[1].starts_with("    "));
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(out.contains("echo-stream"), "{out}");
    }

    #[test]
    fn a_scaling_table_wider_than_120_columns_is_split_into_blocks_of_core_counts() {
        use serverbench_analysis::scaling::{ScalePoint, Scaling};
        let points = (1..=12)
            .map(|n| ScalePoint {
                cpus: n,
                rps: 123_456.0 * f64::from(n),
                laps: 3,
                efficiency: 1.0,
                efficiency_interval: None,
                client_saturated: n == 12,
            })
            .collect();
        let mut summary = crate::full_summary(&[], None, None);
        summary.scaling = vec![Scaling {
            scenario: "hello".into(),
            profile: "c100".into(),
            server: "java/jdk-httpserver-vthreads".into(),
            points,
        }];
        let out = scaling(&summary, View::Ranking);
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        let headers = out.lines().filter(|l| l.starts_with("  server ")).count();
        assert!(headers > 1, "one block would be too wide: {out}");
        assert!(
            out.contains("1,481,472*"),
            "the 12-core figure, saturated: {out}"
        );
        let wide = scaling(&summary, View::Wide);
        assert_eq!(
            wide.lines().filter(|l| l.starts_with("  server ")).count(),
            1
        );
    }

    #[test]
    fn one_connection_is_singular() {
        let t = Table {
            scenario: "hello".into(),
            profile: "c1".into(),
            mode: serverbench_model::Mode::Http,
            connections: 1,
            transport: String::new(),
            body: String::new(),
            baseline: None,
            servers: Vec::new(),
        };
        assert_eq!(title(&t), "hello / c1 (http, 1 connection)\n");
    }

    #[test]
    fn a_scenario_body_is_named_in_the_title_after_the_transport() {
        let t = Table {
            scenario: "upload".into(),
            profile: "c4".into(),
            mode: serverbench_model::Mode::Http,
            connections: 4,
            transport: String::new(),
            body: "POST 500KB..20MB chunked (16KiB chunks)".into(),
            baseline: None,
            servers: Vec::new(),
        };
        assert_eq!(
            title(&t),
            "upload / c4 (http, POST 500KB..20MB chunked (16KiB chunks), 4 connections)\n"
        );
    }
}
