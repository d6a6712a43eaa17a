//! `serverbench hosts check --hosts FILE`: is every host of an inventory usable?

use crate::exit::Exit;
use anyhow::Context;
use serverbench_catalog::paths::Paths;
use serverbench_harness::sampler::{Sampler, INTERVAL};
use serverbench_hosts::check::{self, Probe};
use serverbench_hosts::{
    Host, HostError, Inventory, Local, Transport, SAMPLER_ARMED, SAMPLER_SAMPLING, SAMPLER_START,
};
use std::path::{Path, PathBuf};

/// Arguments of `serverbench hosts`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Per host: whether ssh works, the serverbench version there, its CPUs, its clock offset.
    Check(CheckArgs),
    /// Samples a process tree from /proc between a `start` and a `stop [REQUESTS]` line on
    /// stdin, then prints its figures as one JSON line: the server host's side of `run --hosts`.
    #[command(hide = true)]
    Sample(SampleArgs),
}

/// Arguments of `serverbench hosts sample`.
#[derive(clap::Args)]
struct SampleArgs {
    /// The root of the process tree.
    #[arg(long)]
    pid: u32,
}

/// Arguments of `serverbench hosts check`.
#[derive(clap::Args)]
struct CheckArgs {
    /// The inventory (spec/hosts.md).
    #[arg(long, value_name = "FILE")]
    hosts: PathBuf,
    /// Only these hosts (default: all), e.g. `sb-client1,sb-client2`.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    only: Vec<String>,
}

/// Runs `serverbench hosts ...`.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    match args.command {
        Command::Check(a) => check(a),
        Command::Sample(a) => sample(a),
    }
}

fn sample(args: SampleArgs) -> anyhow::Result<Exit> {
    use std::io::{BufRead, Write};
    let mut stdin = std::io::stdin().lock();
    let say = |line: &str| -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .context("writing to stdout")
    };
    say(SAMPLER_ARMED)?;
    let mut line = String::new();
    if stdin.read_line(&mut line).context("reading stdin")? == 0 || line.trim() != SAMPLER_START {
        return Ok(Exit::Ok);
    }
    let sampler = Sampler::start(args.pid, INTERVAL, Vec::new());
    say(SAMPLER_SAMPLING)?;
    line.clear();
    stdin.read_line(&mut line).context("reading stdin")?;
    let requests = line
        .trim()
        .strip_prefix("stop")
        .and_then(|n| n.trim().parse().ok());
    let stats = sampler.finish(requests);
    say(&serde_json::to_string(&stats).context("serializing the figures")?)?;
    Ok(Exit::Ok)
}

/// Where this controller runs from: the checkout (if found) and the running binary.
pub fn local() -> anyhow::Result<Local> {
    let binary = std::env::current_exe().context("locating the serverbench binary")?;
    let checkout = match Paths::discover(None).ok().and_then(|p| p.root) {
        Some(root) => root,
        None => std::env::current_dir().context("reading the current folder")?,
    };
    Ok(Local { checkout, binary })
}

/// Reads the inventory named by `--hosts`.
pub fn inventory(file: &Path) -> anyhow::Result<Inventory> {
    Ok(Inventory::load(file, &local()?)?)
}

/// Probes `hosts` before a run on them: their probes in order, each clock too far off warned
/// about on stderr; or every unusable host's error, one line each.
pub fn usable_probes(transport: &Transport, hosts: &[Host]) -> Result<Vec<Probe>, Vec<String>> {
    let mut probes = Vec::new();
    let mut failed = Vec::new();
    for (host, probe) in hosts.iter().zip(check::probe_all(transport, hosts)) {
        match probe.and_then(|p| p.usable(host).map(|()| p)) {
            Ok(p) => {
                if let Some(w) = check::clock_warning(host, &p) {
                    eprintln!("warning: {w}");
                }
                probes.push(p);
            }
            Err(e) => failed.push(e.to_string()),
        }
    }
    if failed.is_empty() {
        Ok(probes)
    } else {
        Err(failed)
    }
}

fn check(args: CheckArgs) -> anyhow::Result<Exit> {
    let inv = inventory(&args.hosts)?;
    let hosts = if args.only.is_empty() {
        inv.hosts.clone()
    } else {
        inv.select(&args.only)?
    };
    let transport = Transport::new().context("creating the ssh control folder")?;
    let probes = check::probe_all(&transport, &hosts);
    let width = hosts.iter().map(|h| h.name.len()).max().unwrap_or(4).max(4);
    println!(
        "{:width$}  {:3}  {:22}  {:>4}  clock offset",
        "host", "ssh", "serverbench", "cpus"
    );
    let mut failed = 0;
    for (host, probe) in hosts.iter().zip(probes) {
        let p = match probe {
            Ok(p) => p,
            Err(e) => {
                failed += 1;
                let ssh = if matches!(e, HostError::Missing { .. }) {
                    "ok"
                } else {
                    "no"
                };
                println!("{:width$}  {ssh}", host.name);
                eprintln!("serverbench hosts check: {e}");
                continue;
            }
        };
        print_row(&host.name, width, &p);
        if let Err(e) = p.usable(host) {
            failed += 1;
            eprintln!("serverbench hosts check: {e}");
        } else if let Some(w) = check::clock_warning(host, &p) {
            eprintln!("warning: {w}");
        }
    }
    Ok(Exit::unless(failed > 0, Exit::CheckFailed))
}

fn print_row(name: &str, width: usize, p: &Probe) {
    println!(
        "{name:width$}  {:3}  {:22}  {:>4}  {:+.2} ms (±{:.2})",
        "ok",
        p.version.as_deref().unwrap_or("missing"),
        p.cpus,
        p.clock_offset_ms,
        p.rtt_ms / 2.0
    );
}
