//! Aligned ASCII tables for a terminal, one per scenario x profile, warnings below.

use crate::env::{config_block, server_version};
use crate::text::{self, int, num, pad, rps_cell, speed_cell, Align};
use crate::Exporter;
use serverbench_analysis::summary::{ServerSummary, Summary, Table};
use serverbench_results::env::Env;

/// The terminal exporter.
pub struct TermExporter;

impl Exporter for TermExporter {
    fn render(&self, summary: &Summary, env: Option<&Env>) -> String {
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

fn render_table(t: &Table, env: Option<&Env>) -> String {
    let stream = text::is_stream(t);
    let tcp = text::is_tcp(t);
    let mut header: Vec<&str> = vec!["#", "server", "version"];
    if stream {
        header.extend(["Mbps down", "+-95%", "Mbps up", "Mbps/conn", "cv%", "MB/s"]);
    } else {
        header.extend(["req/s", "+-95%", "best", "cv%", "p50 us", "p99 us", "MB/s"]);
        if tcp {
            header.extend(["Mbps down", "Mbps up"]);
        }
    }
    header.extend(["RSS MB", "cores"]);
    if !stream {
        header.push("us/req");
    }
    header.extend(["errors", "laps", "speed"]);
    let header: Vec<String> = header.into_iter().map(str::to_owned).collect();
    let rows: Vec<Vec<String>> = t
        .servers
        .iter()
        .map(|s| {
            let mut cells = vec![
                text::rank_cell(t, s),
                s.server.clone(),
                server_version(env, &s.server),
            ];
            cells.extend(if stream {
                stream_cells(t, s)
            } else {
                request_cells(s, tcp)
            });
            cells.extend([
                s.errors.to_string(),
                format!("{}/{}", s.laps - s.failed_laps, s.laps),
                speed_cell(s, "-"),
            ]);
            cells
        })
        .collect();
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

/// Requests and latency (HTTP, TCP ping-pong), then memory and CPU.
fn request_cells(s: &ServerSummary, tcp: bool) -> Vec<String> {
    let median = s.rps.map(|r| r.median);
    let pm = match (median, s.rps_ci) {
        (Some(m), Some(ci)) => int(Some(text::half_width(m, &ci))),
        _ => text::MISSING.to_owned(),
    };
    let mut cells = vec![
        if s.rps.is_some() {
            int(median)
        } else {
            rps_cell(s, "+-")
        },
        pm,
        int(s.rps_best),
        cv_cell(s),
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
    ]);
    cells
}

/// A TCP stream: Mbps both ways and per connection (tcpkali's figure), then memory and CPU.
fn stream_cells(t: &Table, s: &ServerSummary) -> Vec<String> {
    let down = match s.mbps_down {
        None if s.rps.is_none() => "failed".to_owned(),
        d => num(d),
    };
    vec![
        down,
        num(text::mbps_half_width(s)),
        num(s.mbps_up),
        num(text::mbps_per_connection(t, s)),
        cv_cell(s),
        num(s.throughput_mb_s),
        num(s.rss_peak_mb),
        num(s.cores_used),
    ]
}

fn cv_cell(s: &ServerSummary) -> String {
    s.rps
        .map_or(text::MISSING.to_owned(), |r| format!("{:.1}", r.cv * 100.0))
}
