//! `serverbench report DIR`: renders a results folder as a terminal table, Markdown, JSON, CSV,
//! a self-contained HTML page (`DIR/report.html` by default) or one SVG file per chart
//! (`DIR/charts/` by default).

use anyhow::{bail, Context};
use serverbench_harness::results::record::LapRecord;
use serverbench_harness::results::{read_records, RESULTS_FILE};
use serverbench_harness::summary::Summary;
use serverbench_report::{env::suite_baseline, full_summary, render_with_laps, svg, Format};
use std::path::{Path, PathBuf};

/// Arguments of `serverbench report`.
#[derive(clap::Args)]
pub struct Args {
    /// The results folder (holds results.jsonl and, optionally, env.json).
    pub dir: PathBuf,
    /// Output format: term, md, json, csv, html or svg.
    #[arg(long, short = 'f', default_value = "term")]
    pub format: Format,
    /// Write the report to FILE instead of standard output (html: default DIR/report.html;
    /// svg: a folder, default DIR/charts/).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The server speed factors are relative to (default: the suite's baseline from env.json,
    /// else the slowest server of each table).
    #[arg(long, value_name = "SERVER")]
    pub baseline: Option<String>,
}

/// Reads the laps of `DIR/results.jsonl`: an error naming the folder when the file is missing or
/// holds no lap; a warning when a trailing partial line (a lap cut short by a crash) is ignored.
pub fn load_laps(dir: &Path) -> anyhow::Result<Vec<LapRecord>> {
    let path = dir.join(RESULTS_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!(
                "{}: no {RESULTS_FILE} in this folder (is it a serverbench results folder?)",
                dir.display()
            )
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let records = read_records(&path)?;
    let tail = bytes.rsplit(|b| *b == b'\n').next().unwrap_or_default();
    if !tail.iter().all(u8::is_ascii_whitespace) {
        eprintln!(
            "serverbench: warning: {} ends with a partial line (a lap cut short); it was ignored",
            path.display()
        );
    }
    if records.is_empty() {
        bail!("{}: holds no laps", path.display());
    }
    Ok(records)
}

/// Reads `DIR/env.json` when it exists; an unreadable or invalid one is a warning, not an error.
pub fn read_env(dir: &Path) -> Option<serde_json::Value> {
    let path = dir.join("env.json");
    let text = std::fs::read_to_string(&path).ok()?;
    match serde_json::from_str(&text) {
        Ok(v) => Some(v),
        Err(e) => {
            eprintln!(
                "serverbench: warning: {} is not valid JSON ({e}); reporting without it",
                path.display()
            );
            None
        }
    }
}

/// Runs `serverbench report`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let records = load_laps(&args.dir)?;
    let env = read_env(&args.dir);
    if let Some(b) = &args.baseline {
        if !records.iter().any(|r| &r.server == b) {
            let mut known: Vec<&str> = records.iter().map(|r| r.server.as_str()).collect();
            known.sort_unstable();
            known.dedup();
            bail!(
                "--baseline {b}: no such server in {} (servers: {})",
                args.dir.join(RESULTS_FILE).display(),
                known.join(", ")
            );
        }
    }
    let baseline = args
        .baseline
        .clone()
        .or_else(|| suite_baseline(env.as_ref()));
    let summary = full_summary(&records, baseline.as_deref(), env.as_ref());
    match args.format {
        Format::Svg => write_svgs(&args, &summary, &records),
        Format::Html => {
            let file = args
                .output
                .clone()
                .unwrap_or_else(|| args.dir.join("report.html"));
            let html = render_with_laps(Format::Html, &summary, env.as_ref(), &records);
            std::fs::write(&file, html)
                .with_context(|| format!("cannot write the HTML report to {}", file.display()))?;
            println!("{}", file.display());
            Ok(0)
        }
        format => {
            let text = render_with_laps(format, &summary, env.as_ref(), &records);
            match &args.output {
                Some(file) => std::fs::write(file, text).with_context(|| {
                    format!("cannot write the report to {} (-o)", file.display())
                })?,
                None => print!("{text}"),
            }
            Ok(0)
        }
    }
}

/// `--format svg`: one file per chart in `-o DIR` (default `DIR/charts/`); prints each path.
fn write_svgs(args: &Args, summary: &Summary, records: &[LapRecord]) -> anyhow::Result<u8> {
    let dir = args
        .output
        .clone()
        .unwrap_or_else(|| args.dir.join("charts"));
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the chart folder {} (-o)", dir.display()))?;
    for (name, svg) in svg::files(summary, records) {
        let path = dir.join(name);
        std::fs::write(&path, svg)
            .with_context(|| format!("cannot write the chart {}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(0)
}
