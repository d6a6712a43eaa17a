//! `serverbench compare OLD NEW`: the ratio NEW/OLD of each server's median req/s (a search's
//! capacity; at a fixed rate, CPU µs per request) with its interval; `--fail-above 5%` exits 4
//! on a significant regression larger than 5%.

use super::report::load_laps;
use crate::exit::Exit;
use anyhow::{bail, Context};
use serverbench_analysis::compare::{compare, parse_threshold, CompareRow};
use serverbench_report::{render_comparison, Format, NoComparisonForm};
use std::path::PathBuf;

/// Arguments of `serverbench compare`.
#[derive(clap::Args)]
pub struct Args {
    /// The results folder to compare against (the reference).
    pub old: PathBuf,
    /// The results folder to judge.
    pub new: PathBuf,
    /// Exit 4 when a server is significantly slower by more than this (e.g. `5%`): the upper
    /// bound of its NEW/OLD interval is below 1 - PERCENT.
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold)]
    pub fail_above: Option<f64>,
    /// Output format: term, md, json or csv (a comparison has no HTML or SVG form).
    #[arg(long, short = 'f', default_value = "term", value_parser = comparison_format)]
    pub format: Format,
}

/// A format a comparison can be rendered in; HTML and SVG are refused as bad usage, before
/// any folder is read.
fn comparison_format(s: &str) -> Result<Format, String> {
    let format: Format = s
        .parse()
        .map_err(|e: serverbench_report::UnknownFormat| e.to_string())?;
    if format.renders_comparison() {
        Ok(format)
    } else {
        Err(NoComparisonForm(format).to_string())
    }
}

/// Runs `serverbench compare`.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let old = load_laps(&args.old)?;
    let new = load_laps(&args.new)?;
    let c = compare(&old, &new);
    if c.rows.is_empty() {
        bail!(
            "{} and {} have no server x scenario x profile with successful laps in common",
            args.old.display(),
            args.new.display()
        );
    }
    let (old_label, new_label) = (
        args.old.display().to_string(),
        args.new.display().to_string(),
    );
    let text = render_comparison(args.format, &c, &old_label, &new_label)
        .with_context(|| format!("compare --format {}", args.format))?;
    print!("{text}");
    let Some(threshold) = args.fail_above else {
        return Ok(Exit::Ok);
    };
    let regressions = c.regressions_above(threshold);
    for r in &regressions {
        eprintln!(
            "serverbench: regression: {} ({}, {}) {}, more than --fail-above {:.1}%",
            r.server,
            r.scenario,
            r.profile,
            worse(r),
            threshold * 100.0
        );
    }
    Ok(if regressions.is_empty() {
        Exit::Ok
    } else {
        Exit::Regression
    })
}

/// How a row got worse: `is 20.0% slower (new/old 0.800, at best 0.813)`, or for CPU per
/// request `costs 25.0% more CPU per request (new/old 1.250, at best 1.230)`.
fn worse(r: &CompareRow) -> String {
    match r.figure.bigger_is_better() {
        true => format!(
            "is {:.1}% slower (new/old {:.3}, at best {:.3})",
            (1.0 - r.ratio) * 100.0,
            r.ratio,
            r.interval.map_or(r.ratio, |i| i.high)
        ),
        false => format!(
            "costs {:.1}% more CPU per request (new/old {:.3}, at best {:.3})",
            (r.ratio - 1.0) * 100.0,
            r.ratio,
            r.interval.map_or(r.ratio, |i| i.low)
        ),
    }
}
