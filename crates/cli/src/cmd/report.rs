//! `serverbench report DIR`: renders a results folder as a terminal table, Markdown, JSON, CSV,
//! a self-contained HTML page (`DIR/report.html` by default) or one SVG file per chart
//! (`DIR/charts/` by default).

use crate::exit::Exit;
use anyhow::{bail, Context};
use serverbench_analysis::summary::Summary;
use serverbench_report::{env::suite_baseline, render_with, svg, Format, Options};
use serverbench_results::env::Env;
use serverbench_results::record::LapRecord;
use serverbench_results::{self as results, RESULTS_FILE};
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
    /// Show every column in the terminal and Markdown tables, server versions included (by
    /// default the terminal table fits 120 columns and versions are listed above it).
    #[arg(long)]
    pub wide: bool,
    /// Leave laps that something else disturbed (steal, other processes on the pinned CPUs...)
    /// out of the statistics; they are listed with the reason.
    #[arg(long)]
    pub drop_disturbed: bool,
    /// List every warning's sentence in the terminal (by default a warning that repeats across
    /// servers, such as noise, is one line naming them).
    #[arg(long)]
    pub warnings: bool,
}

/// Reads the laps of `DIR/results.jsonl` through serverbench-results, warning on standard error
/// when a trailing partial line (a lap cut short by a crash) was ignored.
pub fn load_laps(dir: &Path) -> anyhow::Result<Vec<LapRecord>> {
    let loaded = results::load_laps(dir)?;
    if loaded.partial_tail {
        eprintln!(
            "serverbench: warning: {} ends with a partial line (a lap cut short); it was ignored",
            dir.join(RESULTS_FILE).display()
        );
    }
    Ok(loaded.records)
}

/// Reads `DIR/env.json` when it exists; an unreadable or invalid one is a warning, not an error.
pub fn read_env(dir: &Path) -> Option<Env> {
    match results::read_env(dir) {
        Ok(env) => env,
        Err(e) => {
            eprintln!("serverbench: warning: {e}; reporting without it");
            None
        }
    }
}

/// Runs `serverbench report`.
pub fn run(args: Args) -> anyhow::Result<Exit> {
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
    let analysis = serverbench_analysis::Options {
        drop_disturbed: args.drop_disturbed,
    };
    let summary =
        serverbench_analysis::analyze_with(&records, baseline.as_deref(), env.as_ref(), analysis);
    let options = Options {
        wide: args.wide,
        warnings: args.warnings,
    };
    match args.format {
        Format::Svg => write_svgs(&args, &summary, &records),
        Format::Html => {
            let file = args
                .output
                .clone()
                .unwrap_or_else(|| args.dir.join("report.html"));
            let html = render_with(Format::Html, &summary, env.as_ref(), &records, options);
            std::fs::write(&file, html)
                .with_context(|| format!("cannot write the HTML report to {}", file.display()))?;
            println!("{}", file.display());
            Ok(Exit::Ok)
        }
        format => {
            let text = render_with(format, &summary, env.as_ref(), &records, options);
            match &args.output {
                Some(file) => std::fs::write(file, text).with_context(|| {
                    format!("cannot write the report to {} (-o)", file.display())
                })?,
                None => print!("{text}"),
            }
            Ok(Exit::Ok)
        }
    }
}

/// `--format svg`: one file per chart in `-o DIR` (default `DIR/charts/`); prints each path.
fn write_svgs(args: &Args, summary: &Summary, records: &[LapRecord]) -> anyhow::Result<Exit> {
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
    Ok(Exit::Ok)
}
