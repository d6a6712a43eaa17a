//! `serverbench setup [SERVER...]`: install what is missing and build, idempotent and cached.

use crate::exit::Exit;
use serverbench_catalog::paths::Paths;
use serverbench_catalog::setup::{setup_servers, Outcome, SetupEvent, SetupOptions, Step};
use serverbench_catalog::{Catalog, Server};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `serverbench setup`.
#[derive(clap::Args)]
pub struct Args {
    /// Servers to set up (`language/name`); all when none is given.
    #[arg(value_name = "SERVER")]
    pub servers: Vec<String>,
    #[command(flatten)]
    pub servers_flag: crate::flags::Servers,
    /// Only the servers this suite would run (its list, or every server, that implements what
    /// one of its scenarios needs); `make bench` sets up its suite's this way.
    #[arg(long, value_name = "SUITE.toml", conflicts_with_all = ["servers", "list"])]
    pub suite: Option<PathBuf>,
    /// Run setup and build even when the stamp says the folder is unchanged.
    #[arg(long)]
    pub force: bool,
    /// Never run apt-get, even as root.
    #[arg(long)]
    pub no_apt: bool,
    /// The serverbench checkout whose catalog to use (default: SERVERBENCH_ROOT, else found
    /// above the current folder).
    #[arg(long, value_name = "DIR", long_help = crate::cmd::ROOT_HELP)]
    pub root: Option<PathBuf>,
}

/// Runs `serverbench setup`; `Exit::CheckFailed` when an available server failed to set up.
pub fn run(mut args: Args) -> anyhow::Result<Exit> {
    args.servers = args.servers_flag.merged(&args.servers);
    let (paths, catalog) = super::catalog(args.root.as_deref(), "serverbench setup")?;
    let servers = match &args.suite {
        Some(file) => {
            let suite = serverbench_model::suite::Suite::load(file)
                .map_err(|e| anyhow::anyhow!("--suite {}: {e}", file.display()))?;
            serverbench_harness::run::plan::wanted(&suite, &catalog)
        }
        None => select(&catalog, &args.servers)?,
    };
    if args.servers.is_empty() && args.suite.is_none() {
        for b in &catalog.broken {
            let error = b.error.to_string();
            let error = error.lines().next().unwrap_or_default();
            eprintln!(
                "{}",
                fit(&format!("[{}] skipped: broken manifest: {error}", b.id))
            );
        }
    }
    let opts = SetupOptions {
        force: args.force,
        no_apt: args.no_apt,
    };
    let mut screen = Screen {
        paths: &paths,
        live: std::io::stdout().is_terminal(),
        steps: Vec::new(),
        skipped: None,
    };
    let results = setup_servers(&servers, &paths, &opts, &mut |e| screen.event(e));
    let count = |f: fn(&Outcome) -> bool| results.iter().filter(|r| f(&r.outcome)).count();
    let failed = count(|o| matches!(o, Outcome::Failed(_)));
    println!(
        "setup: {} built, {} up to date, {} skipped, {} failed",
        count(|o| matches!(o, Outcome::Built)),
        count(|o| matches!(o, Outcome::UpToDate)),
        count(|o| matches!(o, Outcome::Skipped(_))),
        failed
    );
    for r in results.iter().filter(|r| r.failed()) {
        if let Outcome::Failed(why) = &r.outcome {
            eprintln!("{}", fit(&format!("  {} failed: {why}", r.server)));
        }
    }
    Ok(Exit::unless(failed > 0, Exit::CheckFailed))
}

/// The named servers (an unknown or broken one is an error), or every valid server.
pub fn select<'a>(catalog: &'a Catalog, names: &[String]) -> anyhow::Result<Vec<&'a Server>> {
    if names.is_empty() {
        return Ok(catalog.servers.iter().collect());
    }
    names
        .iter()
        .map(|n| catalog.get(n).map_err(anyhow::Error::from))
        .collect()
}

/// The widest line `setup` prints: the commands themselves are in each server's setup log.
pub const WIDTH: usize = 120;

/// Lines of a failed step's log shown under it.
const TAIL_LINES: usize = 10;

/// `setup`'s screen: one line per server when its setup ends (its steps and their times, or
/// why it was skipped); a failure adds its error and the end of its log. Nothing is wider
/// than [`WIDTH`]: the commands and their output are in the server's setup log. On a
/// terminal, the step under way shows on the line the server's result then replaces.
struct Screen<'a> {
    paths: &'a Paths,
    /// stdout is a terminal.
    live: bool,
    /// The steps of the server being set up, with their times.
    steps: Vec<(Step, Duration)>,
    /// Why it was skipped.
    skipped: Option<String>,
}

impl Screen<'_> {
    fn event(&mut self, e: SetupEvent) {
        match e {
            SetupEvent::StepStarted { server, step, .. } if self.live => {
                print!("\r\x1b[K{}", fit(&format!("[{server}] {step}…")));
                let _ = std::io::stdout().flush();
            }
            SetupEvent::StepStarted { .. } => {}
            SetupEvent::StepFinished { step, elapsed, .. } => self.steps.push((step, elapsed)),
            SetupEvent::Skipped { reason, .. } => self.skipped = Some(reason),
            SetupEvent::Failed {
                server,
                step,
                error,
                log_tail,
            } => {
                self.clear();
                let log = self.paths.setup_log(&server);
                eprintln!("{}", fit(&format!("[{server}] FAILED at {step}: {error}")));
                eprintln!("{}", fit(&format!("[{server}]   log: {}", log.display())));
                let lines: Vec<&str> = log_tail.lines().collect();
                for line in &lines[lines.len().saturating_sub(TAIL_LINES)..] {
                    eprintln!("{}", fit(&format!("[{server}]   | {line}")));
                }
            }
            SetupEvent::Finished {
                server,
                outcome,
                elapsed,
            } => {
                self.clear();
                let steps = std::mem::take(&mut self.steps);
                let skipped = self.skipped.take();
                println!(
                    "{}",
                    fit(&server_line(&server, &outcome, &steps, skipped, elapsed))
                );
            }
        }
    }
}

impl Screen<'_> {
    /// Clears the line of the step under way (on a terminal).
    fn clear(&self) {
        if self.live {
            print!("\r\x1b[K");
            let _ = std::io::stdout().flush();
        }
    }
}

/// `[c/nginx] ok: setup 2.1 s, build 14.3 s`, `[python/x] skipped: up to date`...
fn server_line(
    server: &str,
    outcome: &Outcome,
    steps: &[(Step, Duration)],
    skipped: Option<String>,
    elapsed: Duration,
) -> String {
    let times: Vec<String> = steps
        .iter()
        .map(|(step, t)| format!("{step} {:.1} s", t.as_secs_f64()))
        .collect();
    let what = match outcome {
        Outcome::Built => format!("ok: {}", times.join(", ")),
        Outcome::UpToDate => format!("ok: {}", skipped.unwrap_or_else(|| "up to date".into())),
        Outcome::Skipped(why) => format!("skipped: {why}"),
        Outcome::Failed(_) => format!("FAILED after {:.1} s", elapsed.as_secs_f64()),
    };
    format!("[{server}] {what}")
}

/// `line` cut to [`WIDTH`] characters, the cut marked with `…`.
fn fit(line: &str) -> String {
    match line.char_indices().nth(WIDTH - 1) {
        Some((i, _)) if line[i..].chars().count() > 1 => format!("{}…", &line[..i]),
        _ => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_cut_to_the_width_with_a_mark() {
        let long = "x".repeat(561);
        let cut = fit(&long);
        assert_eq!(cut.chars().count(), WIDTH);
        assert!(cut.ends_with('…'));
        let exact = "y".repeat(WIDTH);
        assert_eq!(fit(&exact), exact);
    }

    #[test]
    fn a_built_server_is_one_line_with_each_step_and_its_time() {
        let steps = [
            (Step::Setup, Duration::from_millis(2100)),
            (Step::Build, Duration::from_millis(14_300)),
        ];
        let line = server_line(
            "c/nginx",
            &Outcome::Built,
            &steps,
            None,
            Duration::from_secs(17),
        );
        assert_eq!(line, "[c/nginx] ok: setup 2.1 s, build 14.3 s");
    }
}
