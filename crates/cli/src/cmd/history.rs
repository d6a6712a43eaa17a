//! `serverbench history import|list|show|trend|check` and `run --record`: glue over
//! serverbench-history (the SQLite index of results folders, series, change points, formats).

use crate::exit::Exit;
use anyhow::{bail, Context};
use serverbench_analysis::compare::parse_threshold;
use serverbench_history::check::{check, Baseline, CheckOptions, Status};
use serverbench_history::format::{render, Format};
use serverbench_history::{changepoint, show, trend, History, ImportOutcome, Measure, Source};
use std::path::{Path, PathBuf};

/// Arguments of `serverbench history`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
    /// The history file (default: `<root>/.serverbench/history.db`).
    #[arg(long, global = true, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// The project root (default: SERVERBENCH_ROOT, else found above the current folder, else
    /// the current folder).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// The subcommands.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Record results folders in the history (idempotent; a half-written folder gives its
    /// finished laps).
    Import {
        /// Results folders.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// One line per series (testbed x settings x server x scenario x profile x transport).
    List,
    /// The runs of the series whose cell matches every word of CELL (`"mine hello c64"`).
    Show {
        /// Words naming the cell's server, scenario, profile or transport.
        cell: String,
        /// The newest N runs.
        #[arg(long, default_value_t = 40, value_name = "N")]
        last: usize,
    },
    /// A self-contained HTML page with one chart per series.
    Trend {
        /// Where to write the page.
        #[arg(long, value_name = "FILE")]
        html: PathBuf,
    },
    /// Judge each series' newest run: exit 0 ok (an inconclusive row too, with a warning),
    /// 4 regression, 9 inconclusive with --strict, 1 error.
    Check(CheckArgs),
}

/// `--commit` and `--branch`: what the run measured, when git cannot tell.
#[derive(clap::Args, Clone, Default)]
pub struct SourceArgs {
    /// The commit the run measured.
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,
    /// The branch the run measured.
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
}

/// Arguments of `history check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// term, github-summary, junit, bmf (Bencher) or gab (github-action-benchmark).
    #[arg(long, short = 'f', default_value = "term")]
    pub format: Format,
    /// Write the output to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A change smaller than this is not a regression.
    #[arg(long, default_value = "5%", value_name = "PERCENT", value_parser = parse_threshold)]
    pub threshold: f64,
    /// Compare with this run (an id from `history show`) instead of the previous one.
    #[arg(long, value_name = "RUN", conflicts_with = "baseline_branch")]
    pub baseline: Option<i64>,
    /// Compare with the newest earlier run recorded on this branch.
    #[arg(long, value_name = "NAME")]
    pub baseline_branch: Option<String>,
    /// Change points among the newest N runs count as regressions.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub recent: usize,
    /// Change points: runs per search window (Otava's default).
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub window: usize,
    /// Change points: the t-test's largest p-value.
    #[arg(long, default_value_t = 0.001, value_name = "P")]
    pub max_pvalue: f64,
    /// Change points: the smallest shift of the mean kept (e.g. `2%`).
    #[arg(long, default_value = "0%", value_name = "PERCENT", value_parser = parse_threshold)]
    pub min_magnitude: f64,
    /// Only the series whose cell matches every word.
    #[arg(long, value_name = "WORDS")]
    pub cell: Option<String>,
    /// Only this measure: rps, p99 or cpu (µs per request: laps at a fixed rate and capacity
    /// searches). gab holds one direction: rps unless the report has none.
    #[arg(long, value_parser = parse_measure)]
    pub measure: Option<Measure>,
    /// Exit 9 when a row is inconclusive (by default it warns and exits 0: an interval that
    /// straddles the threshold is not evidence of a change).
    #[arg(long)]
    pub strict: bool,
}

/// `run --record`: add the run to the history when it ends.
#[derive(clap::Args, Clone, Default)]
pub struct RecordArgs {
    /// Record the run in the history (`--history FILE`, default `<root>/.serverbench/history.db`).
    #[arg(long, help_heading = "History")]
    pub record: bool,
    /// The history file `--record` writes.
    #[arg(
        long,
        value_name = "FILE",
        requires = "record",
        help_heading = "History"
    )]
    pub history: Option<PathBuf>,
    /// The commit measured (default: the current folder's git checkout).
    #[arg(
        long,
        value_name = "SHA",
        requires = "record",
        help_heading = "History"
    )]
    pub commit: Option<String>,
    /// The branch measured (default: the current folder's git checkout).
    #[arg(
        long,
        value_name = "NAME",
        requires = "record",
        help_heading = "History"
    )]
    pub branch: Option<String>,
}

fn parse_measure(s: &str) -> Result<Measure, String> {
    Measure::ALL
        .into_iter()
        .find(|m| m.key() == s)
        .ok_or_else(|| {
            let known: Vec<&str> = Measure::ALL.iter().map(|m| m.key()).collect();
            format!("unknown measure `{s}` (one of {})", known.join(", "))
        })
}

fn history_path(flag: Option<&Path>, root: Option<&Path>) -> PathBuf {
    if let Some(f) = flag {
        return f.to_path_buf();
    }
    let root = serverbench_catalog::paths::Paths::discover(root)
        .ok()
        .and_then(|p| p.root)
        .unwrap_or_else(|| root.map_or_else(|| PathBuf::from("."), Path::to_path_buf));
    serverbench_history::default_path(&root)
}

/// Runs `serverbench history`.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let path = history_path(args.history.as_deref(), args.root.as_deref());
    let mut h = History::open(&path)?;
    match args.command {
        Command::Import { dirs, source } => {
            let source = Source {
                commit: source.commit,
                branch: source.branch,
                dirty: None,
            };
            for dir in &dirs {
                import_one(&mut h, dir, &source)?;
            }
        }
        Command::List => print!("{}", show::list(&h)?),
        Command::Show { cell, last } => {
            for key in h.find_series(&cell)? {
                print!("{}", show::show(&h, &key, last)?);
            }
        }
        Command::Trend { html } => {
            let page = trend::html(&h)?;
            std::fs::write(&html, page).with_context(|| format!("writing {}", html.display()))?;
            eprintln!("wrote {}", html.display());
        }
        Command::Check(c) => return run_check(&h, c),
    }
    Ok(Exit::Ok)
}

fn import_one(h: &mut History, dir: &Path, source: &Source) -> anyhow::Result<()> {
    let r = h.import(dir, source)?;
    let what = match r.outcome {
        ImportOutcome::Added => "added",
        ImportOutcome::Updated => "updated",
        ImportOutcome::Unchanged => "already recorded",
    };
    eprintln!(
        "{}: {what} as run {} ({} cells, {} laps)",
        dir.display(),
        r.run,
        r.cells,
        r.laps
    );
    for s in &r.skipped {
        eprintln!("{}: skipped {s}", dir.display());
    }
    Ok(())
}

fn run_check(h: &History, c: CheckArgs) -> anyhow::Result<Exit> {
    let baseline = match (c.baseline, c.baseline_branch) {
        (Some(id), _) => Baseline::Run(id),
        (None, Some(b)) => Baseline::Branch(b),
        (None, None) => Baseline::Previous,
    };
    if c.window < 4 {
        bail!(
            "--window {} is too small: change points need at least 4 runs",
            c.window
        );
    }
    let opts = CheckOptions {
        threshold: c.threshold,
        baseline,
        recent: c.recent,
        changepoints: changepoint::Options {
            window: c.window,
            max_pvalue: c.max_pvalue,
            min_magnitude: c.min_magnitude,
        },
        cell: c.cell,
        measure: c.measure,
    };
    let report = check(h, &opts)?;
    if report.rows.is_empty() {
        bail!(
            "{}: no runs to check (serverbench run --record, or history import)",
            h.path().display()
        );
    }
    let text = render(c.format, &report);
    match &c.output {
        Some(file) => {
            std::fs::write(file, text).with_context(|| format!("writing {}", file.display()))?
        }
        None => print!("{text}"),
    }
    Ok(check_exit(&report, c.strict))
}

/// The exit of a check: a regression fails; an inconclusive row fails only with `--strict`,
/// and otherwise says so on stderr with what would decide it.
fn check_exit(report: &serverbench_history::check::CheckReport, strict: bool) -> Exit {
    match report.worst() {
        Status::Regression => Exit::Regression,
        Status::Inconclusive if strict => Exit::Inconclusive,
        Status::Inconclusive => {
            let rows: Vec<_> = report
                .rows
                .iter()
                .filter(|r| r.status == Status::Inconclusive)
                .collect();
            eprintln!(
                "warning: {} row(s) inconclusive (exit 0; --strict exits 9):",
                rows.len()
            );
            for r in rows {
                let how = r.settle.map_or_else(|| "-".to_owned(), |s| s.text());
                eprintln!("  {} {}: {how}", r.series.label(), r.measure);
            }
            Exit::Ok
        }
        _ => Exit::Ok,
    }
}

/// `run --record`: adds the finished run's folder to the history.
pub fn record_run(args: &RecordArgs, root: Option<&Path>, dir: &Path) -> anyhow::Result<()> {
    if !args.record {
        return Ok(());
    }
    let path = args
        .history
        .clone()
        .unwrap_or_else(|| serverbench_history::default_path(root.unwrap_or(Path::new("."))));
    let mut h = History::open(&path)?;
    let git = |a: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git").args(a).output().ok()?;
        let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success()).then_some(s)
    };
    let source = Source {
        commit: args.commit.clone().or_else(|| git(&["rev-parse", "HEAD"])),
        branch: args
            .branch
            .clone()
            .or_else(|| git(&["rev-parse", "--abbrev-ref", "HEAD"])),
        dirty: if args.commit.is_some() {
            None
        } else {
            git(&["status", "--porcelain"]).map(|s| !s.is_empty())
        },
    };
    import_one(&mut h, dir, &source).with_context(|| format!("recording into {}", path.display()))
}
