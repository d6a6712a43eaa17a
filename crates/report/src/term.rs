//! Aligned ASCII tables for a terminal, one per scenario x profile, warnings below.

use crate::env::{config_block, server_version};
use crate::text::{self, int, num, pad, rps_cell, speed_cell, Align};
use crate::Exporter;
use serde_json::Value;
use serverbench_harness::summary::{ServerSummary, Summary, Table};

/// The terminal exporter.
pub struct TermExporter;

impl Exporter for TermExporter {
    fn render(&self, summary: &Summary, env: Option<&Value>) -> String {
        let mut out = String::new();
        let config = config_block(env, "");
        if !config.is_empty() {
            out.push_str(&config);
            out.push('\n');
        }
        for table in &summary.tables {
            out.push_str(&render_table(table, env));
            out.push('\n');
        }
        if !summary.warnings.is_empty() {
            out.push_str("Warnings:\n");
            for w in &summary.warnings {
                out.push_str(&format!("  - {}\n", w.message));
            }
        }
        out
    }
}

fn render_table(t: &Table, env: Option<&Value>) -> String {
    let tcp = text::is_tcp(t);
    let mut header: Vec<&str> = vec![
        "#", "server", "version", "req/s", "+-95%", "best", "cv%", "p50 us", "p99 us", "MB/s",
    ];
    if tcp {
        header.extend(["Mbps down", "Mbps up"]);
    }
    header.extend(["RSS MB", "cores", "us/req", "errors", "laps", "speed"]);
    let header: Vec<String> = header.into_iter().map(str::to_owned).collect();
    let rows: Vec<Vec<String>> = t.servers.iter().map(|s| row(t, s, tcp, env)).collect();
    let widths = text::widths(&header, &rows);
    let align = |c: usize| {
        if c == 1 || c == 2 {
            Align::Left
        } else {
            Align::Right
        }
    };
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(c, cell)| pad(cell, widths[c], align(c)))
            .collect();
        format!("  {}\n", padded.join("  ").trim_end())
    };
    let mut out = format!(
        "{} / {} ({}, {} connections){}\n",
        t.scenario,
        t.profile,
        t.mode,
        t.connections,
        t.baseline
            .as_ref()
            .map_or(String::new(), |b| format!(", speed vs {b}"))
    );
    out.push_str(&line(&header));
    for r in &rows {
        out.push_str(&line(r));
    }
    out
}

fn row(t: &Table, s: &ServerSummary, tcp: bool, env: Option<&Value>) -> Vec<String> {
    let median = s.rps.map(|r| r.median);
    let pm = match (median, s.rps_ci) {
        (Some(m), Some(ci)) => int(Some(text::half_width(m, &ci))),
        _ => text::MISSING.to_owned(),
    };
    let mut cells = vec![
        text::rank_cell(t, s),
        s.server.clone(),
        server_version(env, &s.server),
        if s.rps.is_some() {
            int(median)
        } else {
            rps_cell(s, "+-")
        },
        pm,
        int(s.rps_best),
        s.rps
            .map_or(text::MISSING.to_owned(), |r| format!("{:.1}", r.cv * 100.0)),
        num(s.latency_p50_us),
        num(s.latency_p99_us),
        num(s.throughput_mb_s),
    ];
    if tcp {
        cells.extend([num(s.mbps_down), num(s.mbps_up)]);
    }
    cells.extend([
        num(s.rss_peak_mb),
        num(s.cores_used),
        num(s.cpu_us_per_request),
        s.errors.to_string(),
        format!("{}/{}", s.laps - s.failed_laps, s.laps),
        speed_cell(s, "-"),
    ]);
    cells
}
