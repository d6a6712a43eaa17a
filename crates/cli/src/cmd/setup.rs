//! `serverbench setup [SERVER...]`: install what is missing and build, idempotent and cached.

use crate::exit::Exit;
use anyhow::Context;
use serverbench_catalog::paths::Paths;
use serverbench_catalog::setup::{setup_servers, Outcome, SetupEvent, SetupOptions};
use serverbench_catalog::{Catalog, Server};
use std::path::PathBuf;

/// Arguments of `serverbench setup`.
#[derive(clap::Args)]
pub struct Args {
    /// Servers to set up (`language/name`); all when none is given.
    #[arg(value_name = "SERVER")]
    pub servers: Vec<String>,
    #[command(flatten)]
    pub servers_flag: crate::flags::Servers,
    /// Run setup and build even when the stamp says the folder is unchanged.
    #[arg(long)]
    pub force: bool,
    /// Never run apt-get, even as root.
    #[arg(long)]
    pub no_apt: bool,
    /// The project root (default: SERVERBENCH_ROOT, else found above the current folder).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// Runs `serverbench setup`; `Exit::CheckFailed` when an available server failed to set up.
pub fn run(mut args: Args) -> anyhow::Result<Exit> {
    args.servers = args.servers_flag.merged(&args.servers);
    let paths = Paths::discover(args.root.as_deref())?;
    let catalog = Catalog::load(&paths.root)
        .with_context(|| format!("reading the catalog in {}", paths.servers_dir().display()))?;
    let servers = select(&catalog, &args.servers)?;
    if args.servers.is_empty() {
        for b in &catalog.broken {
            eprintln!("[{}] skipped: broken manifest: {}", b.id, b.error);
        }
    }
    let opts = SetupOptions {
        force: args.force,
        no_apt: args.no_apt,
    };
    let results = setup_servers(&servers, &paths, &opts, &mut print_event);
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
            eprintln!("  {} failed: {why}", r.server);
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

fn print_event(e: SetupEvent) {
    match e {
        SetupEvent::StepStarted {
            server,
            step,
            detail,
        } => println!("[{server}] {step}: {detail}"),
        SetupEvent::StepFinished {
            server,
            step,
            elapsed,
        } => println!("[{server}] {step} done ({:.1} s)", elapsed.as_secs_f64()),
        SetupEvent::Skipped { server, reason } => println!("[{server}] skipped: {reason}"),
        SetupEvent::Failed {
            server,
            step,
            error,
            log_tail,
        } => {
            eprintln!("[{server}] FAILED at {step}: {error}");
            for line in log_tail.lines() {
                eprintln!("[{server}]   | {line}");
            }
        }
    }
}
