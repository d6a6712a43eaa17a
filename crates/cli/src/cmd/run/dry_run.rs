//! `run --dry-run`: prints the harness's [`DryRun`] — each server's scenario x profile laps,
//! what is skipped and why, the number of laps and the time they should take — as text laid
//! out by the report's terminal tables (at most 120 columns), or as JSON.

use super::progress::hms;
use serverbench_harness::run::{DryRun, PlannedRun, FIRST_OVERHEAD_S};
use serverbench_model::format_duration;
use serverbench_report::table::{Align, Cell, Column, Grid, Row};
use serverbench_report::{bullet, term_grid};
use std::time::Duration;

/// How `--dry-run` prints the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum PlanFormat {
    /// Aligned text.
    #[default]
    Text,
    /// The plan as pretty JSON.
    Json,
}

/// The plan in `format`.
pub fn render(plan: &DryRun, format: PlanFormat) -> String {
    match format {
        PlanFormat::Text => text(plan),
        PlanFormat::Json => {
            let mut out = serde_json::to_string_pretty(plan).expect("a plan serializes to JSON");
            out.push('\n');
            out
        }
    }
}

/// Why the run would not start, if it would not: the exit code is then an error.
pub fn blocked(plan: &DryRun) -> Option<String> {
    match (&plan.refusal, plan.servers.is_empty()) {
        (Some(why), _) => Some(format!("the run would stop before its first lap: {why}")),
        (None, true) => Some(format!("no server of suite `{}` would run", plan.suite)),
        (None, false) => None,
    }
}

/// `500ms`, `2s`, `0s`.
fn seconds(s: f64) -> String {
    match Duration::try_from_secs_f64(s).unwrap_or_default() {
        Duration::ZERO => "0s".to_owned(),
        d => format_duration(d),
    }
}

fn cpus(list: &[usize]) -> String {
    match list {
        [] => "any CPU".to_owned(),
        l => {
            let ids: Vec<String> = l.iter().map(usize::to_string).collect();
            format!("CPUs {}", ids.join(","))
        }
    }
}

fn text(plan: &DryRun) -> String {
    let check = if plan.quick_verify {
        ", a quick contract check before each server's first lap"
    } else {
        ""
    };
    let p = &plan.pinning;
    let mut out = format!("Dry run of suite `{}`: nothing is started.\n", plan.suite);
    let laps = match plan.until_ci {
        Some(r) => format!(
            "{} to {} laps (until the 95% interval is within ±{}%)",
            r.min_laps, r.max_laps, r.pct
        ),
        None => format!("{} lap(s)", plan.laps),
    };
    out.push_str(&bullet(&format!(
        "{laps} of each server x scenario x profile with {}, {} warm-up{check}",
        plan.tool,
        seconds(plan.warmup_s),
    )));
    out.push_str(&bullet(&format!(
        "server on {}, client on {}, WORKERS={} ({})",
        cpus(&p.server_cpus),
        cpus(&p.client_cpus),
        p.workers,
        p.how
    )));
    if !plan.servers.is_empty() {
        out.push('\n');
        out.push_str(&term_grid(&grid(plan)));
    }
    let skips = skips(plan);
    if !skips.is_empty() {
        out.push_str("\nSkipped:\n");
        for s in skips {
            out.push_str(&bullet(&s));
        }
    }
    out.push_str("\nIn all:\n");
    out.push_str(&total(plan));
    out
}

/// The servers, scenarios and CPU counts left out, one sentence each.
fn skips(plan: &DryRun) -> Vec<String> {
    let servers = plan
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.server, s.why.lines().next().unwrap_or("")));
    let scenarios = plan
        .scenario_skips
        .iter()
        .map(|s| format!("{} x {}: {}", s.server, s.scenario, s.why));
    let sweeps = plan.sweep_skips.iter().map(|s| format!("core sweep: {s}"));
    servers.chain(scenarios).chain(sweeps).collect()
}

/// `12 laps to run, about 1m 5s (...)`.
fn total(plan: &DryRun) -> String {
    let left = plan.total_laps - plan.already_recorded;
    let recorded = match plan.already_recorded {
        0 => String::new(),
        n => format!(" ({n} already recorded)"),
    };
    bullet(&format!(
        "{left} lap(s) to run{recorded}, about {}: each lap's warm-up and length, plus {} per \
         lap to start, check and stop servers (the progress bar refines it as laps end)",
        hms(plan.estimate),
        seconds(FIRST_OVERHEAD_S),
    ))
}

fn column(key: &'static str, label: &str, align: Align) -> Column {
    Column {
        key,
        label: label.to_owned(),
        align,
    }
}

/// One row per server x scenario x profile.
fn grid(plan: &DryRun) -> Grid {
    let sweep = plan
        .servers
        .iter()
        .flat_map(|s| &s.runs)
        .any(|r| r.server_cpus.is_some());
    let mut columns = vec![
        column("server", "server", Align::Left),
        column("scenario", "scenario", Align::Left),
        column("protocol", "protocol", Align::Left),
        column("profile", "profile", Align::Left),
    ];
    if sweep {
        columns.push(column("server_cpus", "server CPUs", Align::Right));
    }
    columns.extend([
        column("laps", "laps", Align::Right),
        column("warmup", "warm-up", Align::Right),
        column("length", "length", Align::Right),
    ]);
    let rows = plan
        .servers
        .iter()
        .flat_map(|s| s.runs.iter().map(move |r| row(&s.server, r, sweep)))
        .collect();
    Grid {
        columns,
        rows,
        headline: None,
    }
}

fn row(server: &str, r: &PlannedRun, sweep: bool) -> Row {
    let protocol = match r.transport.as_str() {
        "" => r.mode.to_string(),
        t => t.to_owned(),
    };
    let laps = match r.already {
        0 => r.laps.to_string(),
        n => format!("{} (+{n} recorded)", r.laps),
    };
    let length = match (r.duration_s, r.requests) {
        (Some(d), _) => seconds(d),
        (None, Some(n)) => format!("{n} req"),
        (None, None) => "-".to_owned(),
    };
    let mut cells = vec![
        Cell::plain(server),
        Cell::plain(&r.scenario),
        Cell::plain(protocol),
        Cell::plain(&r.profile),
    ];
    if sweep {
        cells.push(Cell::plain(
            r.server_cpus.map_or("-".to_owned(), |n| n.to_string()),
        ));
    }
    cells.extend([
        Cell::plain(laps),
        Cell::plain(seconds(r.warmup_s)),
        Cell::plain(length),
    ]);
    Row {
        cells,
        ..Row::default()
    }
}
