//! `serverbench run SUITE.toml` (or the ad-hoc `--servers a,b --scenario hello -c 100 -d 10s`):
//! runs the suite through the harness, renders its events as a progress bar, prints the table.

mod dry_run;
mod noisy;
mod on_hosts;
mod progress;
mod yours;

use crate::exit::Exit;
use anyhow::{bail, Context};
use progress::Progress;
use serverbench_catalog::paths::Paths;
use serverbench_catalog::Catalog;
use serverbench_harness::process::{self, OnInterrupt};
use serverbench_harness::run::database::DbOptions;
use serverbench_harness::run::{self, RunOptions, RunOutcome};
use serverbench_machine::affinity::affinity_cpus;
use serverbench_model::failure::FailureKind;
use serverbench_model::failure::LapFailure;
use serverbench_model::parse_duration;
use serverbench_model::suite::{CpuCount, Profile, Scenario, ServerSelection, Suite};
use serverbench_model::Tool;
use serverbench_results::env::{Git, Pinning};
use serverbench_results::record::{LapRecord, LapStatus, Measurement};
use std::path::PathBuf;

/// Arguments of `serverbench run`.
#[derive(clap::Args)]
pub struct Args {
    /// The suite (`suites/*.toml`); omit it for the ad-hoc form (`--servers` and `--scenario`)
    /// or with `--resume`.
    #[arg(value_name = "SUITE.toml")]
    pub suite: Option<PathBuf>,
    /// Shorten the suite for a smoke run: 2 laps of at most 2 s, 0.5 s warm-up, requests / 10
    /// (`--laps`, `-d` and `--warmup` given too still win).
    #[arg(long)]
    pub quick: bool,
    /// Laps per server x scenario x profile (overrides the suite).
    #[arg(long, value_name = "N")]
    pub laps: Option<u32>,
    /// Servers to run (`a,b`; overrides the suite's list, `all` for every server).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub servers: Option<Vec<String>>,
    /// Pin the servers to these CPUs (default: the first half of the CPUs; `0` here).
    #[arg(long, value_name = "LIST", value_parser = crate::cpus::parse)]
    pub server_cpus: Option<serverbench_model::CpuList>,
    /// Pin the load tool to these CPUs (default: the second half of the CPUs; `1` here).
    #[arg(long, value_name = "LIST", value_parser = crate::cpus::parse)]
    pub client_cpus: Option<serverbench_model::CpuList>,
    /// Database laps: pin the database to these CPUs (default: the servers' CPUs; with
    /// --db-host, that host's inventory `cpus`).
    #[arg(long, value_name = "LIST", value_parser = crate::cpus::parse)]
    pub db_cpus: Option<serverbench_model::CpuList>,
    /// Database laps: the private PostgreSQL's port.
    #[arg(long, value_name = "PORT", default_value_t = serverbench_database::DEFAULT_PORT)]
    pub db_port: u16,
    /// Load tool: serverbench (default), wrk, ab, autocannon, h2load, hey or oha (installed when missing).
    #[arg(long)]
    pub tool: Option<Tool>,
    /// Continue this results folder, skipping laps already recorded.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// With --resume: continue even though the settings differ from the recorded ones.
    #[arg(long, requires = "resume")]
    pub force: bool,
    /// Folder in which `<timestamp>-<suite>/` is created (default: `<root>/results` in a
    /// checkout, else `./results`).
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Ad hoc: scenarios (the list: --help).
    #[arg(long, value_name = "NAME", value_delimiter = ',', long_help = scenario_help())]
    pub scenario: Vec<String>,
    /// Ad hoc: connections (default 50).
    #[arg(short = 'c', long)]
    pub connections: Option<u32>,
    /// Lap duration, e.g. `10s` (ad hoc: default 10s unless -n; with a suite: every profile).
    #[arg(short = 'd', long)]
    pub duration: Option<String>,
    /// Ad hoc: requests per lap instead of a duration.
    #[arg(short = 'n', long)]
    pub requests: Option<u64>,
    /// Ad hoc: client threads.
    #[arg(short = 't', long)]
    pub threads: Option<u32>,
    /// Ad hoc: requests in flight per connection.
    #[arg(short = 'p', long)]
    pub pipeline: Option<u32>,
    /// Warm-up before each lap, not recorded (overrides the suite; default 2s).
    #[arg(long)]
    pub warmup: Option<String>,
    /// Ad hoc: the server speed factors are relative to.
    #[arg(long)]
    pub baseline: Option<String>,
    /// Skip the quick contract check before each server's first lap.
    #[arg(long)]
    pub no_verify: bool,
    /// Address servers bind and the load goes to.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// The serverbench checkout whose catalog to use (default: SERVERBENCH_ROOT, else found
    /// above the current folder).
    #[arg(long, value_name = "DIR", long_help = crate::cmd::ROOT_HELP)]
    pub root: Option<PathBuf>,
    /// Run each server at each of these server CPU counts, WORKERS following (`1,2,all`):
    /// a core sweep; counts that do not fit next to the client are skipped with the reason.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = CpuCount::parse)]
    pub server_cpus_sweep: Vec<CpuCount>,
    /// Show every column in the final table, server versions included (by default it fits 120
    /// columns and versions are listed above it).
    #[arg(long)]
    pub wide: bool,
    /// Print what would run (each server's scenarios, profiles and laps; what is skipped and
    /// why; the number of laps and the time they should take) and exit: nothing is started,
    /// installed or written.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: print the plan as `text` (default) or `json`.
    #[arg(short = 'f', long, value_name = "FORMAT", requires = "dry_run")]
    pub format: Option<dry_run::PlanFormat>,
    /// Your own servers.
    #[command(flatten)]
    pub yours: yours::Yours,
    /// On a noisy machine.
    #[command(flatten)]
    pub noisy: noisy::Noisy,
    /// The executable run as `<exe> load --json ...` (default: this serverbench).
    #[arg(long, value_name = "PATH", hide = true)]
    pub load_exe: Option<PathBuf>,
    /// Several machines: the inventory (spec/hosts.md); needs --server-host and --client-hosts.
    #[arg(long, value_name = "FILE", help_heading = "Several machines")]
    pub hosts: Option<PathBuf>,
    /// The host the servers run on (all its CPUs, or its inventory `cpus`; WORKERS follows).
    #[arg(
        long,
        value_name = "NAME",
        requires = "hosts",
        help_heading = "Several machines"
    )]
    pub server_host: Option<String>,
    /// The hosts the load comes from; connections and -R are split between them.
    #[arg(
        long,
        value_name = "A,B",
        value_delimiter = ',',
        requires = "hosts",
        help_heading = "Several machines"
    )]
    pub client_hosts: Vec<String>,
    /// Database laps: the host the database runs on (default: the server host); the servers
    /// reach it at its inventory address.
    #[arg(long, value_name = "NAME", help_heading = "Several machines")]
    pub db_host: Option<String>,
    /// `--record`: the history (crates/cli/src/cmd/history.rs).
    #[command(flatten)]
    pub record: super::history::RecordArgs,
}

/// `--help` of `--scenario`: every built-in scenario, from the one list.
fn scenario_help() -> String {
    format!(
        "Ad hoc: scenarios, comma-separated: {} (N: queries per request, 1 to 500; default \
         hello). Suites define more (the HTTP shapes of suites/http-profiles.toml...)",
        Scenario::BUILTIN.join(", ")
    )
}

/// Runs `serverbench run`: exit 0 when every lap succeeded, 3 when any failed, 130 on Ctrl-C.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let paths = Paths::discover(args.root.as_deref())?;
    let mut catalog = Catalog::of(&paths)?;
    let yours = args.yours.resolve(&catalog)?;
    let ids: Vec<String> = yours.servers.iter().map(|s| s.id.clone()).collect();
    let hosts = on_hosts::prepare(&args, &paths)?;
    let pinning = match &hosts {
        Some((_, pinning)) => pinning.clone(),
        None => run::pinning(
            crate::cpus::of(&args.server_cpus),
            crate::cpus::of(&args.client_cpus),
            &affinity_cpus(),
        ),
    };
    let (suite, sweep_skips) = build_suite(&args, &ids, &pinning)?;
    if !args.dry_run {
        for note in &sweep_skips {
            eprintln!("core sweep: {note}");
        }
    }
    note_unmeasured(&yours.attached);
    catalog.servers.extend(yours.servers);
    let load_exe = match &args.load_exe {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("locating the serverbench executable")?,
    };
    let cancel = match args.dry_run {
        true => Default::default(),
        false => crate::interrupt::install(OnInterrupt::Cancel),
    };
    let opts = RunOptions {
        results_parent: args
            .results
            .clone()
            .unwrap_or_else(|| paths.default_results()),
        resume: args.resume.clone(),
        pinning,
        host: args.host.clone(),
        serverbench_exe: load_exe,
        cancel,
        quick_verify: !args.no_verify,
        attached: yours.attached,
        hosts: hosts.map(|(h, _)| h),
        database: DbOptions {
            port: args.db_port,
            cpus: crate::cpus::of(&args.db_cpus),
            install: true,
        },
        doctor: None,
        build: Git {
            commit: serverbench_build_info::commit().map(str::to_owned),
            dirty: serverbench_build_info::dirty(),
        },
        suite,
    };
    if args.dry_run {
        return show_plan(&catalog, &paths, &opts, sweep_skips, args.format);
    }
    let durations = opts
        .suite
        .profiles
        .iter()
        .map(|p| (p.name.clone(), p.duration))
        .collect();
    // Over hosts the machines measured are not this one: no doctor here.
    let doctor = opts
        .hosts
        .is_none()
        .then(|| noisy::doctor_header(&opts.pinning));
    let opts = RunOptions { doctor, ..opts };
    let mut progress = Progress::new(opts.suite.planned_laps(), durations);
    let outcome = run::run(&catalog, &paths, &opts, &mut |e| progress.event(e));
    progress.finish();
    let outcome = outcome.with_context(|| format!("running suite `{}`", opts.suite.name))?;
    process::stop_all_registered();
    print_table(&outcome, &opts.suite, &args);
    super::history::record_run(&args.record, paths.root.as_deref(), &outcome.dir)?;
    Ok(exit_code(&outcome))
}

/// `--dry-run`: prints the plan; an error when the run would not start.
fn show_plan(
    catalog: &Catalog,
    paths: &Paths,
    opts: &RunOptions,
    sweep_skips: Vec<String>,
    format: Option<dry_run::PlanFormat>,
) -> anyhow::Result<Exit> {
    let plan = run::dry_run(catalog, paths, opts, sweep_skips)
        .with_context(|| format!("planning suite `{}`", opts.suite.name))?;
    print!("{}", dry_run::render(&plan, format.unwrap_or_default()));
    match dry_run::blocked(&plan) {
        Some(why) => bail!("{why}"),
        None => Ok(Exit::Ok),
    }
}

fn exit_code(outcome: &RunOutcome) -> Exit {
    if outcome.interrupted {
        eprintln!(
            "interrupted: continue with `serverbench run --resume {}`",
            outcome.dir.display()
        );
        return Exit::Interrupted;
    }
    let failed = outcome
        .records
        .iter()
        .filter(|r| r.status == LapStatus::Failed)
        .count();
    if failed > 0 {
        eprintln!(
            "{failed} lap(s) failed (exit code {}); their reasons are above, in `failure` of \
             results.jsonl and in the logs/ folder",
            Exit::LapsFailed.code()
        );
        return Exit::LapsFailed;
    }
    Exit::Ok
}

/// The suite from the file, the resumed folder or the ad-hoc flags, with the overrides applied,
/// and why CPU counts of a core sweep were left out.
fn build_suite(
    args: &Args,
    yours: &[String],
    pinning: &Pinning,
) -> anyhow::Result<(Suite, Vec<String>)> {
    let adhoc = !args.scenario.is_empty()
        || args.connections.is_some()
        || args.requests.is_some()
        || (args.suite.is_none() && args.resume.is_none() && !yours.is_empty());
    let mut suite = match (&args.suite, &args.resume) {
        (Some(_), _) if adhoc => {
            bail!("-c/-n/--scenario are for the ad-hoc form, without SUITE.toml")
        }
        (Some(file), _) => Suite::load(file)?,
        (None, Some(dir)) if !adhoc => run::suite_of(dir).with_context(|| {
            format!(
                "{} has no readable suite in env.json; pass SUITE.toml too",
                dir.display()
            )
        })?,
        _ => adhoc_suite(args, yours)?,
    };
    if let Some(list) = &args.servers {
        suite.servers = if list.len() == 1 && list[0] == "all" {
            ServerSelection::All(serverbench_model::suite::AllServers::All)
        } else {
            ServerSelection::List(list.clone())
        };
    }
    if let ServerSelection::List(list) = &mut suite.servers {
        list.extend(
            yours
                .iter()
                .filter(|y| !list.contains(y))
                .cloned()
                .collect::<Vec<_>>(),
        );
    }
    if args.quick {
        suite.quicken();
    }
    if let Some(n) = args.laps {
        if n == 0 {
            bail!("--laps must be at least 1");
        }
        suite.laps = n;
    }
    args.noisy.apply(&mut suite)?;
    if let Some(w) = &args.warmup {
        suite.warmup = parse_duration(w)
            .map_err(|e| anyhow::anyhow!("--warmup: {e}"))?
            .as_secs_f64();
    }
    let from_file = args.suite.is_some() || (args.resume.is_some() && !adhoc);
    if let (Some(d), true) = (&args.duration, from_file) {
        suite.set_duration(lap_duration(d)?);
    }
    if let Some(t) = args.tool {
        suite.tool = t;
    }
    if !args.server_cpus_sweep.is_empty() {
        for p in &mut suite.profiles {
            p.server_cpus = args.server_cpus_sweep.clone();
        }
    }
    let available = match pinning.server_cpus.len() {
        0 => affinity_cpus().len(),
        n => n,
    };
    let sweep_skips = suite.expand_sweeps(available, pinning.client_cpus.len());
    if suite.profiles.is_empty() {
        bail!("no profile is left to run: no CPU count of the core sweep fits here");
    }
    if let (Some(dir), false) = (&args.resume, args.force) {
        check_resume(dir, &suite)?;
    }
    Ok((suite, sweep_skips))
}

/// `--resume DIR` refuses settings other than those DIR was started with (unless `--force`).
fn check_resume(dir: &std::path::Path, suite: &Suite) -> anyhow::Result<()> {
    let Some(recorded) = run::suite_of(dir) else {
        return Ok(());
    };
    let changes = suite.changes_from(&recorded);
    if !changes.is_empty() {
        bail!(
            "--resume {}: the settings differ from those it was started with ({}); laps would \
             not be comparable. Resume with the same settings, or add --force",
            dir.display(),
            changes.join("; ")
        );
    }
    Ok(())
}

/// Says what cannot be measured of a server that was already running.
fn note_unmeasured(attached: &[run::Attached]) {
    for a in attached.iter().filter(|a| a.pid.is_none()) {
        eprintln!(
            "note: {}: already running and no --pid given: its CPU, memory and threads are not \
             measured (only what the load sees)",
            a.name
        );
    }
}

/// A lap's headline: Mbps both ways for a TCP stream, msg/s where the unit is a message
/// (WebSocket, TCP ping-pong), calls/s for gRPC, else req/s.
fn lap_figure(mode: serverbench_model::Mode, m: &Measurement) -> Option<String> {
    match (m.mbps_down, m.mbps_up, m.rps) {
        (Some(down), Some(up), _) if mode.is_stream() => {
            Some(format!("{down:.0} Mbps down, {up:.0} Mbps up"))
        }
        (_, _, Some(rps)) => Some(format!("{rps:.0} {}", mode.rate_unit())),
        _ => None,
    }
}

/// `-d`, which must be a positive duration.
fn lap_duration(text: &str) -> anyhow::Result<f64> {
    match parse_duration(text).map_err(|e| anyhow::anyhow!("-d: {e}"))? {
        d if !d.is_zero() => Ok(d.as_secs_f64()),
        _ => bail!("-d: a lap must last more than 0 s"),
    }
}

fn adhoc_suite(args: &Args, yours: &[String]) -> anyhow::Result<Suite> {
    let servers = match args.servers.clone() {
        Some(s) => s,
        None if !yours.is_empty() => Vec::new(),
        None => bail!(
            "give a SUITE.toml, or --servers a,b with --scenario (the ad-hoc form), or your own \
             server with --server NAME=COMMAND or --url NAME=URL"
        ),
    };
    let names = if args.scenario.is_empty() {
        vec!["hello".to_string()]
    } else {
        args.scenario.clone()
    };
    let scenarios = names
        .iter()
        .map(|n| {
            Scenario::builtin(n).with_context(|| {
                format!(
                    "--scenario {n}: unknown (one of {})",
                    Scenario::BUILTIN.join(", ")
                )
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let duration = match (&args.duration, args.requests) {
        (Some(d), _) => Some(lap_duration(d)?),
        (None, Some(_)) => None,
        (None, None) => Some(10.0),
    };
    let connections = args.connections.unwrap_or(50);
    if connections == 0 {
        bail!("-c must be at least 1");
    }
    let mut profile = Profile {
        name: String::new(),
        connections,
        threads: args.threads,
        duration,
        requests: args.requests,
        pipeline: args.pipeline.unwrap_or(1).max(1),
        rate: None,
        server_cpus: Vec::new(),
        cores: None,
        pool: None,
        find_max: None,
    };
    profile.name = profile.default_name();
    Ok(Suite {
        name: "adhoc".into(),
        description: "ad-hoc run from the command line".into(),
        reproduces: "none".into(),
        baseline: args.baseline.clone(),
        servers: ServerSelection::List(servers),
        laps: serverbench_model::suite::DEFAULT_LAPS,
        warmup: serverbench_model::suite::DEFAULT_WARMUP_S,
        tool: Tool::Serverbench,
        pool: None,
        until_ci: None,
        min_laps: None,
        max_laps: None,
        scenarios,
        profiles: vec![profile],
    })
}

/// Lines of a failure's reason (its log tail) shown under it.
const FAILURE_LINES: usize = 10;

/// Every distinct failure once, with the laps it hit and its reason's last lines (the server's
/// log tail), so a broken server is explained on screen and not only in results.jsonl.
fn print_failures(records: &[LapRecord]) {
    let unknown = LapFailure::new(FailureKind::Unknown, "(no reason given)");
    let mut seen: Vec<(&LapFailure, Vec<String>)> = Vec::new();
    for r in records.iter().filter(|r| r.status == LapStatus::Failed) {
        let why = r.failure.as_ref().unwrap_or(&unknown);
        let lap = format!(
            "{} · {} · {} · lap {}",
            r.server, r.scenario, r.profile, r.lap
        );
        match seen.iter_mut().find(|(w, _)| *w == why) {
            Some((_, laps)) => laps.push(lap),
            None => seen.push((why, vec![lap])),
        }
    }
    for (why, laps) in seen {
        println!("FAILED {}", laps.join(", "));
        println!("  {}", why.detail);
        let tail = why.log_tail.as_deref().unwrap_or("");
        let lines: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
        for l in &lines[lines.len().saturating_sub(FAILURE_LINES)..] {
            println!("    {l}");
        }
    }
}

/// The terminal table (serverbench_report), every column with `--wide`, and the results folder.
fn print_table(outcome: &RunOutcome, suite: &Suite, args: &Args) {
    let env = super::report::read_env(&outcome.dir);
    let analysis = serverbench_analysis::Options {
        drop_disturbed: args.noisy.drop_disturbed,
    };
    let summary = serverbench_analysis::analyze_with(
        &outcome.records,
        suite.baseline.as_deref(),
        env.as_ref(),
        analysis,
    );
    let wide = args.wide;
    print!(
        "{}",
        serverbench_report::render_with(
            serverbench_report::Format::Term,
            &summary,
            env.as_ref(),
            &outcome.records,
            serverbench_report::Options {
                wide,
                ..Default::default()
            },
        )
    );
    print_failures(&outcome.records);
    for s in &outcome.skipped {
        let first = s.why.lines().next().unwrap_or("");
        println!("skipped {}: {first}", s.server);
    }
    println!("results: {}", outcome.dir.display());
    println!(
        "report:  serverbench report {} --format html",
        outcome.dir.display()
    );
}
