//! Markdown tables in the style of the Node frameworks experiment (seed 003): a configuration
//! block, one table per scenario x profile, medals for the top three where not tied, warnings.

use crate::env::{config_block, server_version};
use crate::text::{self, num, pad, rps_cell, speed_cell, Align};
use crate::Exporter;
use serverbench_analysis::summary::{ServerSummary, Summary, Table};
use serverbench_results::env::Env;

/// Medals for ranks 1, 2 and 3.
const MEDALS: [&str; 3] = ["🥇", "🥈", "🥉"];

/// The Markdown exporter.
pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn render(&self, summary: &Summary, env: Option<&Env>) -> String {
        let mut out = String::new();
        let config = config_block(env, "  ");
        if !config.is_empty() {
            out.push_str("```\nConfiguration:\n");
            out.push_str(&config);
            out.push_str("```\n\n");
        }
        for table in &summary.tables {
            out.push_str(&render_table(table, env));
            out.push('\n');
        }
        if !summary.warnings.is_empty() {
            out.push_str("**Warnings**\n\n");
            for w in &summary.warnings {
                out.push_str(&format!("- {}\n", escape(&w.message)));
            }
            out.push('\n');
        }
        out.push_str(
            "Requests/s: median of the laps ± the larger half of its 95% bootstrap interval. \
             Speed Factor: ratio of medians with its 95% interval. \
             Medals go to the top three where the intervals do not overlap; `=` marks a shared rank.\n",
        );
        if summary.tables.iter().any(text::is_stream) {
            out.push_str(
                "Mbps per connection ⇅: Mbps down plus up, divided by the connections \
                 (tcpkali's \"Bandwidth per channel\").\n",
            );
        }
        out
    }
}

/// The medal of a row: only for ranks 1-3 held by this row alone.
fn medal(t: &Table, s: &ServerSummary) -> Option<&'static str> {
    let r = s.rank?;
    if r > 3 || text::shared_rank(t, r) {
        return None;
    }
    Some(MEDALS[r as usize - 1])
}

/// Escapes what would break a table cell or start Markdown formatting.
fn escape(s: &str) -> String {
    s.replace('|', "\\|")
        .replace('*', "\\*")
        .replace('_', "\\_")
}

fn render_table(t: &Table, env: Option<&Env>) -> String {
    let tcp = text::is_tcp(t);
    let stream = text::is_stream(t);
    let mut cols: Vec<(&str, Align)> = vec![
        ("#", Align::Right),
        ("Name", Align::Left),
        ("Version", Align::Left),
        ("Errors", Align::Right),
        ("Speed Factor", Align::Right),
    ];
    if stream {
        cols.extend([
            ("Mbps down", Align::Right),
            ("Mbps up", Align::Right),
            ("Mbps per connection ⇅", Align::Right),
            ("Throughput (MB/s)", Align::Right),
        ]);
    } else {
        cols.extend([
            ("Requests/s", Align::Right),
            ("Latency p50 (µs)", Align::Right),
            ("Latency p99 (µs)", Align::Right),
            ("Throughput (MB/s)", Align::Right),
        ]);
        if tcp {
            cols.extend([("Mbps down", Align::Right), ("Mbps up", Align::Right)]);
        }
    }
    cols.extend([("Peak RSS (MB)", Align::Right), ("CPU cores", Align::Right)]);
    if !stream {
        cols.push(("CPU µs/req", Align::Right));
    }
    let header: Vec<String> = cols.iter().map(|(h, _)| (*h).to_owned()).collect();
    let rows: Vec<Vec<String>> = t.servers.iter().map(|s| row(t, s, env)).collect();
    // At least 2 so that the separator (`:-` or `-:`) is as wide as its column.
    let widths: Vec<usize> = text::widths(&header, &rows)
        .into_iter()
        .map(|w| w.max(2))
        .collect();
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut out = format!(
        "### {} · {} ({}, {} connections)\n\n",
        escape(&t.scenario),
        escape(&t.profile),
        t.mode,
        t.connections
    );
    out.push_str(&line(
        (0..cols.len())
            .map(|c| pad(&header[c], widths[c], cols[c].1))
            .collect(),
    ));
    out.push_str(&line(
        (0..cols.len())
            .map(|c| match cols[c].1 {
                Align::Left => format!(":{}", "-".repeat(widths[c] - 1)),
                Align::Right => format!("{}:", "-".repeat(widths[c] - 1)),
            })
            .collect(),
    ));
    for r in rows {
        out.push_str(&line(
            r.iter()
                .enumerate()
                .map(|(c, cell)| pad(cell, widths[c], cols[c].1))
                .collect(),
        ));
    }
    if let Some(b) = &t.baseline {
        out.push_str(&format!("\nSpeed factor relative to {}.\n", escape(b)));
    }
    out
}

fn row(t: &Table, s: &ServerSummary, env: Option<&Env>) -> Vec<String> {
    let mut cells = vec![
        text::rank_cell(t, s),
        escape(&s.server),
        escape(&server_version(env, &s.server)),
        s.errors.to_string(),
        speed_cell(s, "–"),
    ];
    if text::is_stream(t) {
        let down = match (s.mbps_down, text::mbps_half_width(s)) {
            (None, _) if s.rps.is_none() => "failed".to_owned(),
            (Some(d), Some(h)) => format!("{} ± {}", num(Some(d)), num(Some(h))),
            (d, _) => num(d),
        };
        let down = match medal(t, s) {
            Some(m) => format!("{m} {down}"),
            None => down,
        };
        cells.extend([
            down,
            num(s.mbps_up),
            num(text::mbps_per_connection(t, s)),
            num(s.throughput_mb_s),
            num(s.rss_peak_mb),
            num(s.cores_used),
        ]);
        return cells;
    }
    let rps = match medal(t, s) {
        Some(m) => format!("{m} {}", rps_cell(s, "±")),
        None => rps_cell(s, "±"),
    };
    cells.extend([
        rps,
        num(s.latency_p50_us),
        num(s.latency_p99_us),
        num(s.throughput_mb_s),
    ]);
    if text::is_tcp(t) {
        cells.extend([num(s.mbps_down), num(s.mbps_up)]);
    }
    cells.extend([
        num(s.rss_peak_mb),
        num(s.cores_used),
        num(s.cpu_us_per_request),
    ]);
    cells
}
