//! `serverbench doctor`: is this machine set up for benchmarking? Glue over
//! `serverbench_machine::doctor`.

use anyhow::Context;
use serverbench_catalog::paths::Paths;
use serverbench_harness::run;
use serverbench_machine::doctor::{self, Options};
use serverbench_machine::{Live, Recorded, Source};
use serverbench_model::doctor::{Check, Status};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `serverbench doctor`.
#[derive(clap::Args)]
pub struct Args {
    /// The server's CPUs, as `run --server-cpus` (default: the first half of the CPUs).
    #[arg(long, value_name = "LIST", value_parser = crate::cpus::parse)]
    pub server_cpus: Option<serverbench_model::CpuList>,
    /// The client's CPUs, as `run --client-cpus` (default: the second half).
    #[arg(long, value_name = "LIST", value_parser = crate::cpus::parse)]
    pub client_cpus: Option<serverbench_model::CpuList>,
    /// How long to watch the CPUs for other processes and steal.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    pub probe: Duration,
    /// Write the fixes the warnings print (sysctl and sysfs files; needs root), saving the old
    /// values so that `--revert` restores them.
    #[arg(long, conflicts_with = "revert")]
    pub apply: bool,
    /// Restore what `--apply` changed.
    #[arg(long)]
    pub revert: bool,
    /// Output: `term` (a table) or `json`.
    #[arg(short = 'f', long = "format", default_value = "term")]
    pub format: Format,
    /// The serverbench checkout whose cache to use (default: SERVERBENCH_ROOT, else found
    /// above the current folder).
    #[arg(long, value_name = "DIR", long_help = crate::cmd::ROOT_HELP)]
    pub root: Option<PathBuf>,
    /// The folder that stands for `/` when reading and writing sysfs and procfs (tests).
    #[arg(long, value_name = "DIR", default_value = "/", hide = true)]
    pub sysroot: PathBuf,
}

/// `doctor`'s output formats.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Term,
    Json,
}

/// Runs `serverbench doctor`: exit 0 whatever it finds (the warnings are advice).
pub fn run(args: Args) -> anyhow::Result<crate::exit::Exit> {
    let record = undo_record(args.root.as_deref())?;
    if args.revert {
        let undone = doctor::revert(&args.sysroot, &record)
            .with_context(|| format!("doctor --revert from {}", record.display()))?;
        for a in &undone {
            println!("restored {} to {}", a.setting, a.old);
        }
        if undone.is_empty() {
            println!("nothing to revert ({} is absent)", record.display());
            let legacy = record.with_file_name("doctor-applied.json");
            if legacy.exists() {
                println!(
                    "{} is an older serverbench's record: it is not read (restore its values by hand)",
                    legacy.display()
                );
            }
        }
        return Ok(crate::exit::Exit::Ok);
    }
    let checks = diagnose(&args);
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&checks)?),
        Format::Term => print!("{}", table(&checks)),
    }
    if args.apply {
        let (done, failure) = match doctor::apply(&checks, &args.sysroot, &record) {
            Ok(done) => (done, None),
            Err(f) => (f.done, Some(f.error)),
        };
        for a in &done {
            println!("set {} to {} (was {})", a.setting, a.new, a.old);
        }
        if !done.is_empty() {
            println!(
                "undo record: {}; serverbench doctor --revert restores them",
                record.display()
            );
        }
        if let Some(e) = failure {
            return Err(e).context(format!(
                "doctor --apply stopped after changing {} settings (run as root)",
                done.len()
            ));
        }
    }
    Ok(crate::exit::Exit::Ok)
}

/// Every check on this machine, with the CPUs a run would use.
pub fn diagnose(args: &Args) -> Vec<Check> {
    let pinning = run::pinning(
        crate::cpus::of(&args.server_cpus),
        crate::cpus::of(&args.client_cpus),
        &serverbench_machine::affinity::affinity_cpus(),
    );
    let opts = Options {
        server_cpus: pinning.server_cpus,
        client_cpus: pinning.client_cpus,
    };
    let probe = doctor::probe_live(args.probe.as_secs_f64());
    let src: Box<dyn Source> = if args.sysroot == Path::new("/") {
        Box::new(Live)
    } else {
        Box::new(Recorded {
            root: args.sysroot.clone(),
        })
    };
    doctor::diagnose(src.as_ref(), &probe, &opts)
}

/// The undo record: in the project's cache, else (no project found, as after `cargo install`)
/// in the user's state folder (`$XDG_STATE_HOME/serverbench`, else `~/.local/state/serverbench`),
/// never a shared folder. A root given that is not one is an error.
fn undo_record(root: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match Paths::discover(root).context("doctor")? {
        Paths {
            root: Some(_),
            cache,
        } => cache,
        Paths { root: None, .. } => doctor::state_folder(
            std::env::var("XDG_STATE_HOME").ok().as_deref(),
            std::env::var("HOME").ok().as_deref(),
        )
        .context("doctor: no project cache and neither XDG_STATE_HOME nor HOME is set")?,
    };
    Ok(dir.join(doctor::RECORD_NAME))
}

/// The checks as a table within 120 columns: a warning's fix goes on the line below it.
pub fn table(checks: &[Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let found: String = c.found.chars().take(88).collect();
        out.push_str(&format!(
            "{:<11}  {:<17}  {found}\n",
            c.status.to_string(),
            c.kind.label()
        ));
        if let (Status::Warn, Some(fix)) = (c.status, &c.fix) {
            let fix: String = fix.chars().take(83).collect();
            out.push_str(&format!("{:<32}fix: {fix}\n", ""));
        }
    }
    if let Some(line) = doctor::one_line(checks) {
        out.push_str(&format!("\n{line}\n"));
    }
    out
}
