//! `serverbench run SUITE.toml` (or the ad-hoc `--servers a,b --scenario hello -c 100 -d 10s`):
//! runs the suite through the harness, renders its events as a progress bar, prints the table.

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use serverbench_catalog::paths::Paths;
use serverbench_catalog::Catalog;
use serverbench_engine::config::parse_duration;
use serverbench_harness::process::{self, parse_cpu_list};
use serverbench_harness::run::{self, Event, RunOptions, RunOutcome};
use serverbench_harness::suite::{Profile, Scenario, ServerSelection, Suite};
use serverbench_results::record::{LapRecord, LapStatus, Measurement};
use serverbench_tools::Tool;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    pub server_cpus: Option<Vec<usize>>,
    /// Pin the load tool to these CPUs (default: the second half of the CPUs; `1` here).
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    pub client_cpus: Option<Vec<usize>>,
    /// Load tool: serverbench (default), wrk, ab, autocannon, h2load, hey or oha (installed when missing).
    #[arg(long)]
    pub tool: Option<Tool>,
    /// Continue this results folder, skipping laps already recorded.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Folder in which `<timestamp>-<suite>/` is created (default: `<root>/results`).
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Ad hoc: scenarios (hello, routes, json, payload, pingpong, echo-stream, echo-pingpong).
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
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
    /// The project root (default: SERVERBENCH_ROOT, else found above the current folder).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The executable run as `<exe> load --json ...` (default: this serverbench).
    #[arg(long, value_name = "PATH", hide = true)]
    pub load_exe: Option<PathBuf>,
}

/// Runs `serverbench run`. Exit 0 when at least one lap succeeded, 1 when none did, 130 on Ctrl-C.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let paths = Paths::discover(args.root.as_deref())?;
    let suite = build_suite(&args)?;
    let catalog = Catalog::load(&paths.root)
        .with_context(|| format!("reading the catalog in {}", paths.servers_dir().display()))?;
    let load_exe = match &args.load_exe {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("locating the serverbench executable")?,
    };
    let cancel = Arc::new(AtomicBool::new(false));
    install_interrupt(Arc::clone(&cancel));
    let opts = RunOptions {
        results_parent: args
            .results
            .clone()
            .unwrap_or_else(|| paths.root.join("results")),
        resume: args.resume.clone(),
        pinning: run::pinning(
            args.server_cpus.clone(),
            args.client_cpus.clone(),
            &run::affinity_cpus(),
        ),
        host: args.host.clone(),
        serverbench_exe: load_exe,
        cancel,
        quick_verify: !args.no_verify,
        suite,
    };
    let mut progress = Progress::new(opts.suite.laps);
    let outcome = run::run(&catalog, &paths, &opts, &mut |e| progress.event(e));
    progress.finish();
    let outcome = outcome.with_context(|| format!("running suite `{}`", opts.suite.name))?;
    process::stop_all_registered();
    print_table(&outcome, &opts.suite);
    Ok(exit_code(&outcome))
}

fn exit_code(outcome: &RunOutcome) -> u8 {
    if outcome.interrupted {
        eprintln!(
            "interrupted: continue with `serverbench run --resume {}`",
            outcome.dir.display()
        );
        return 130;
    }
    let failed = outcome
        .records
        .iter()
        .filter(|r| r.status == LapStatus::Failed)
        .count();
    if failed > 0 {
        eprintln!("{failed} lap(s) failed; see `failure` in results.jsonl and the logs/ folder");
    }
    u8::from(!outcome.records.iter().any(|r| r.status == LapStatus::Ok))
}

/// The suite from the file, the resumed folder or the ad-hoc flags, with the overrides applied.
fn build_suite(args: &Args) -> anyhow::Result<Suite> {
    let adhoc = !args.scenario.is_empty() || args.connections.is_some() || args.requests.is_some();
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
        _ => adhoc_suite(args)?,
    };
    if let Some(list) = &args.servers {
        suite.servers = if list.len() == 1 && list[0] == "all" {
            ServerSelection::All(serverbench_harness::suite::AllServers::All)
        } else {
            ServerSelection::List(list.clone())
        };
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
    Ok(suite)
}

/// A lap's headline: Mbps both ways for a TCP stream, else req/s.
fn lap_figure(m: &Measurement) -> Option<String> {
    match (m.mbps_down, m.mbps_up, m.rps) {
        (Some(down), Some(up), _) => Some(format!("{down:.0} Mbps down, {up:.0} Mbps up")),
        (_, _, Some(rps)) => Some(format!("{rps:.0} req/s")),
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

fn adhoc_suite(args: &Args) -> anyhow::Result<Suite> {
    let Some(servers) = args.servers.clone() else {
        bail!("give a SUITE.toml, or --servers a,b with --scenario (the ad-hoc form)");
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
    };
    profile.name = profile.default_name();
    Ok(Suite {
        name: "adhoc".into(),
        description: "ad-hoc run from the command line".into(),
        reproduces: "none".into(),
        baseline: args.baseline.clone(),
        servers: ServerSelection::List(servers),
        laps: serverbench_harness::suite::DEFAULT_LAPS,
        warmup: serverbench_harness::suite::DEFAULT_WARMUP_S,
        tool: Tool::Serverbench,
        scenarios,
        profiles: vec![profile],
    })
}

static SIGNALS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALS.fetch_add(1, Ordering::SeqCst);
}

/// First Ctrl-C: stop gracefully (the lap in flight is dropped, `--resume` redoes it). Second
/// Ctrl-C, or a graceful stop taking more than 15 s: stop every server group and exit 130.
fn install_interrupt(cancel: Arc<AtomicBool>) {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installing a handler that only touches an atomic.
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
    }
    std::thread::spawn(move || {
        let mut since: Option<Instant> = None;
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let n = SIGNALS.load(Ordering::SeqCst);
            if n >= 1 && since.is_none() {
                eprintln!("\nserverbench: stopping after cleanup (Ctrl-C again to stop now)");
                cancel.store(true, Ordering::SeqCst);
                since = Some(Instant::now());
            }
            if n >= 2 || since.is_some_and(|t| t.elapsed() > Duration::from_secs(15)) {
                process::stop_all_registered();
                std::process::exit(130);
            }
        }
    });
}

/// Renders events: a progress bar on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    laps: u32,
}

impl Progress {
    fn new(laps: u32) -> Progress {
        Progress { bar: None, laps }
    }

    fn line(&self, text: String) {
        match &self.bar {
            Some(b) if !b.is_hidden() => b.println(text),
            _ => eprintln!("{text}"),
        }
    }

    fn event(&mut self, e: Event) {
        match e {
            Event::Started {
                dir,
                servers,
                total,
                already,
            } => {
                eprintln!("results: {}", dir.display());
                eprintln!("servers: {}", servers.join(", "));
                let bar = ProgressBar::new(total as u64);
                bar.set_style(
                    ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} laps  {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                );
                bar.set_position(already as u64);
                bar.enable_steady_tick(Duration::from_millis(200));
                self.bar = Some(bar);
            }
            Event::ToolInstall(step) => {
                self.line(format!("installing {}: {}", step.tool, step.command))
            }
            Event::ServerSkipped { server, why } => self.line(format!("skip {server}: {why}")),
            Event::ScenarioSkipped {
                server,
                scenario,
                why,
            } => self.line(format!("skip {server} x {scenario}: {why}")),
            Event::ServerStarting { server, lap } => {
                self.message(format!("starting {server} (lap {lap}/{})", self.laps))
            }
            Event::ServerFailed { server, lap, why } => {
                let first = why.lines().next().unwrap_or("");
                self.line(format!("FAILED {server} lap {lap}: {first}"));
            }
            Event::WarmupStarted {
                server,
                scenario,
                profile,
                seconds,
            } => self.message(format!(
                "{server} · {scenario} · {profile} · warm-up {seconds}s"
            )),
            Event::LapStarted {
                server,
                scenario,
                profile,
                lap,
                eta,
                ..
            } => {
                let eta = eta
                    .map(|d| format!(" · ETA {}", hms(d)))
                    .unwrap_or_default();
                self.message(format!(
                    "{server} · {scenario} · {profile} · lap {lap}/{}{eta}",
                    self.laps
                ));
            }
            Event::LapFinished { record, .. } => self.finished(&record),
            Event::Interrupted => self.line("interrupted".into()),
        }
    }

    fn message(&self, msg: String) {
        match &self.bar {
            Some(b) if !b.is_hidden() => b.set_message(msg),
            _ => {}
        }
    }

    fn finished(&self, r: &LapRecord) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
        let what = format!(
            "{} · {} · {} · lap {}",
            r.server, r.scenario, r.profile, r.lap
        );
        match (&r.status, r.load.as_ref().and_then(lap_figure)) {
            (LapStatus::Ok, Some(figure)) => {
                let hidden = self.bar.as_ref().is_none_or(|b| b.is_hidden());
                if hidden {
                    eprintln!("{what}: {figure}");
                }
            }
            (LapStatus::Ok, None) => {}
            (LapStatus::Failed, _) => {
                let why = r
                    .failure
                    .as_deref()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("");
                self.line(format!("{what}: FAILED: {why}"));
            }
        }
    }

    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// An ETA to the second (`3m 5s`), in humantime's spelling.
fn hms(d: Duration) -> String {
    humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
}

/// The terminal table (serverbench_report) and the results folder.
fn print_table(outcome: &RunOutcome, suite: &Suite) {
    let env = super::report::read_env(&outcome.dir);
    let summary =
        serverbench_report::full_summary(&outcome.records, suite.baseline.as_deref(), env.as_ref());
    print!(
        "{}",
        serverbench_report::render(serverbench_report::Format::Term, &summary, env.as_ref())
    );
    for s in &outcome.skipped {
        println!("skipped {}: {}", s.server, s.why);
    }
    println!("results: {}", outcome.dir.display());
    println!(
        "report:  serverbench report {} --format html",
        outcome.dir.display()
    );
}
