//! `serverbench load --find-max --slo …`: the capacity search of
//! [`serverbench_analysis::capacity`], each step one open-loop (`-R`) run of the engine after
//! its own warm-up; the curve as a table or as JSON (spec/capacity-result.schema.json).

use super::Args;
use crate::exit::Exit;
use anyhow::Context;
use serverbench_analysis::capacity::{self, Plan};
use serverbench_engine::{Config, EngineError};
use serverbench_model::capacity::{CapacityResult, Ending, Step};
use serverbench_model::slo::{micros, Slo};
use serverbench_model::LoadSpec;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The flags of the capacity search (flattened into `load`'s).
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Capacity search")]
pub struct FindMaxArgs {
    /// Search for the highest open-loop rate that meets --slo: ramp ×2 from --start-rate until
    /// the goal fails or the client cannot send the rate, then bisect to --precision; each step
    /// warms up (--warmup, default 1s) and lasts long enough for 100 samples beyond the SLO's
    /// quantile (1-10s) unless -d is given.
    #[arg(long)]
    pub find_max: bool,
    /// The goal, e.g. `p99<=5ms,errors<=0.1%` (measures: p50, p90, p99, p99.9, errors).
    #[arg(long, value_name = "GOALS")]
    pub slo: Option<String>,
    /// Stop when the lowest failing rate is within this of the highest passing one.
    #[arg(long, default_value = "5%", value_name = "PERCENT")]
    pub precision: String,
    /// At most this many steps.
    #[arg(long, default_value_t = 20)]
    pub max_steps: u32,
    /// The first rate (requests/s); the goal failing here ends the search (exit 10).
    #[arg(long, default_value_t = 500.0, value_name = "REQ/S")]
    pub start_rate: f64,
    /// The server's process on this machine: each step's CPU µs per request of its whole
    /// process tree (from /proc, measured over the step's measured span) goes in the curve.
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<u32>,
    /// Never ask for more than this (requests/s).
    #[arg(long, default_value_t = 10_000_000.0, value_name = "REQ/S")]
    pub max_rate: f64,
}

impl FindMaxArgs {
    /// A search flag given without --find-max (those with defaults cannot be told apart).
    pub fn stray(&self) -> Option<&'static str> {
        match () {
            _ if self.find_max => None,
            _ if self.slo.is_some() => Some("--slo"),
            _ if self.server_pid.is_some() => Some("--server-pid"),
            _ => None,
        }
    }
}

/// A bad flag, as one line.
fn plan_of(a: &FindMaxArgs) -> Result<Plan, String> {
    let text = a.precision.trim();
    let precision = text
        .strip_suffix('%')
        .unwrap_or(text)
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|p| *p > 0.0 && *p < 100.0)
        .ok_or_else(|| format!("--precision `{text}`: a percentage above 0, like 5%"))?;
    if a.max_steps < 2 {
        return Err("--max-steps: at least 2 (a bracket needs a pass and a miss)".into());
    }
    if !(a.start_rate > 0.0 && a.start_rate <= a.max_rate) {
        return Err("--start-rate: above 0 and at most --max-rate".into());
    }
    Ok(Plan {
        start: a.start_rate,
        precision: precision / 100.0,
        max_steps: a.max_steps,
        ceiling: a.max_rate,
        ..Plan::default()
    })
}

/// Why a step could not be measured, with the exit it maps to.
struct StepFailed {
    exit: Exit,
    why: String,
}

/// Runs the search for `serverbench load --find-max`.
pub fn run(args: &Args, spec: LoadSpec) -> anyhow::Result<Exit> {
    let bad = |why: String| {
        eprintln!("serverbench load --find-max: {why}");
        Ok(Exit::BadInput)
    };
    if let Some(why) = conflict(args, &spec) {
        return bad(why);
    }
    let text = args.find_max.slo.as_deref().unwrap_or_default();
    let slo: Slo = match text.parse() {
        Ok(s) => s,
        Err(e) => return bad(format!("--slo: {e}")),
    };
    let plan = match plan_of(&args.find_max) {
        Ok(p) => p,
        Err(why) => return bad(why),
    };
    let warmup = if spec.warmup.is_zero() {
        capacity::STEP_WARMUP
    } else {
        spec.warmup
    };
    let first = capacity::step_spec(&spec, plan.start, Duration::from_secs(1), warmup);
    if let Err(e) = Config::try_from(&first) {
        return bad(format!("{e:#}"));
    }
    let fixed = spec.duration;
    // --hosts: every step is split across the client hosts and merged exactly.
    let session = match args.hosts.is_some() {
        true => match super::distributed::Session::open(args, &spec)? {
            Ok(s) => Some(s),
            Err(exit) => return Ok(exit),
        },
        false => None,
    };
    let spec = session.as_ref().map_or(spec.clone(), |(_, s)| s.clone());
    let live = !args.quiet && std::io::stderr().is_terminal();
    let started = Instant::now();
    let measure = |rate: f64| -> Result<Step, StepFailed> {
        let length = capacity::step_length(&slo, rate, fixed);
        let s = capacity::step_spec(&spec, rate, length, warmup);
        let step = match &session {
            Some((session, _)) => measure_over_hosts(session, &s)?,
            None => measure_step(&s, args.find_max.server_pid)?,
        };
        if live {
            eprintln!("  step at {rate:.0}/s: p99 {}", micros(step.p99_us));
        }
        Ok(step)
    };
    let (out, failed) = capacity::search(&slo, &plan, measure);
    let result = out.into_result(
        capacity::target_of(&spec),
        (&slo, &plan),
        failed.as_ref().map(|f| f.why.clone()),
        started.elapsed().as_secs_f64(),
    );
    report(args, &result, failed.map(|f| f.exit))
}

/// Prints (and with `-o` writes) the search; returns its exit: a step's error's, 10 when the
/// goal failed at the first rate, else 0.
fn report(args: &Args, result: &CapacityResult, failed: Option<Exit>) -> anyhow::Result<Exit> {
    let json = serde_json::to_string_pretty(&result).context("serializing the result")?;
    if let Some(path) = &args.output {
        std::fs::write(path, format!("{json}\n"))
            .with_context(|| format!("writing --output {}", path.display()))?;
    }
    if args.json {
        println!("{json}");
    } else {
        print!("{}", render(result));
    }
    let exit = match (failed, result.ending) {
        (Some(exit), _) => exit,
        (None, Ending::GoalMissedAtStart) => Exit::GoalMissed,
        _ => Exit::Ok,
    };
    let say = exit != Exit::Ok || result.ending == Ending::ClientLimit;
    if let (Some(note), true) = (&result.note, say) {
        for (i, line) in wrap(note, 90).iter().enumerate() {
            let head = if i == 0 {
                "serverbench load --find-max:"
            } else {
                ""
            };
            eprintln!("{head:<28} {line}");
        }
    }
    Ok(exit)
}

/// A flag the search cannot take, as one line (clap's conflicts print a usage block).
fn conflict(args: &Args, spec: &LoadSpec) -> Option<String> {
    let why = if args.find_max.slo.is_none() {
        "needs --slo, e.g. --slo 'p99<=5ms,errors<=0.1%'"
    } else if spec.http.pipeline > 1 {
        "-p/--pipeline: the open loop sends one request at a time per connection"
    } else if spec.requests.is_some() {
        "-n/--requests: each step's length is its duration (-d), not a count"
    } else if spec.rate.is_some() {
        "-R/--rate: the search picks the rates (--start-rate, --max-rate)"
    } else if args.barrier {
        "--barrier: a search is many runs, not one to release"
    } else {
        return None;
    };
    Some(why.to_string())
}

/// One open-loop run of the engine, as a step (not yet judged); with `server_pid`, the server
/// tree's CPU per request from the start of measurement to the end of the run.
fn measure_step(spec: &LoadSpec, server_pid: Option<u32>) -> Result<Step, StepFailed> {
    let failed = |exit, why: String| StepFailed { exit, why };
    let config = Config::try_from(spec).map_err(|e| failed(Exit::BadInput, format!("{e:#}")))?;
    let at_start = std::cell::Cell::new(None);
    let observer = |ev: serverbench_engine::Event| {
        if let (serverbench_engine::Event::Measuring, Some(pid)) = (ev, server_pid) {
            at_start.set(Some(tree_cpu_s(pid)));
        }
    };
    let result = serverbench_engine::run(&config, &observer).map_err(|e| match e {
        EngineError::Refused { .. } => failed(Exit::Refused, e.to_string()),
        e => failed(Exit::BadInput, e.to_string()),
    })?;
    let mut step =
        capacity::step_of(&result).map_err(|e| failed(Exit::NoSuccess, e.to_string()))?;
    if let (Some(pid), Some(start)) = (server_pid, at_start.get()) {
        let cpu_s = tree_cpu_s(pid) - start;
        step.server_cpu_us_per_request =
            (step.requests > 0).then(|| cpu_s * 1e6 / step.requests as f64);
    }
    Ok(step)
}

/// CPU seconds (user + system) of `pid` and its descendants now.
fn tree_cpu_s(pid: u32) -> f64 {
    let ticks: u64 = serverbench_harness::sampler::process_tree(pid)
        .into_iter()
        .filter_map(|p| serverbench_machine::process::stat(p).map(|s| s.cpu_ticks))
        .sum();
    ticks as f64 / serverbench_machine::procfs::ticks_per_second()
}

/// One step split across the client hosts of `session`, merged exactly.
fn measure_over_hosts(
    session: &super::distributed::Session,
    spec: &LoadSpec,
) -> Result<Step, StepFailed> {
    let rate = spec.rate.unwrap_or(0.0);
    let d = session.load(spec, &|_| {}).map_err(|f| StepFailed {
        exit: f.exit,
        why: format!("at {rate:.0}/s: {}", f.lines.join("; ")),
    })?;
    let mut step = capacity::step_of(&d.merged).map_err(|e| StepFailed {
        exit: Exit::NoSuccess,
        why: e.to_string(),
    })?;
    step.saturated_hosts = d.saturated_hosts;
    Ok(step)
}

/// The terminal view: one line on the search, the curve, the answer (under 120 columns).
pub fn render(r: &CapacityResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Capacity of {} for {} (±{}%, at most {} steps)",
        r.target.join(" "),
        r.slo,
        r.precision * 100.0,
        r.max_steps
    );
    // With --server-pid a column of the server's CPU per request; the verdict gives way.
    let cpu = r
        .steps
        .iter()
        .any(|s| s.server_cpu_us_per_request.is_some());
    let (cpu_head, room) = if cpu { (" srv µs/req", 22) } else { ("", 33) };
    let _ = writeln!(
        s,
        "  {:>4} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8} {:>7}{cpu_head}  verdict",
        "step", "target/s", "achieved/s", "requests", "p50", "p99", "p99.9", "errors", "late"
    );
    for (i, st) in r.steps.iter().enumerate() {
        let verdict = match (&st.client_limit, st.met) {
            (Some(_), _) => "client limit".to_string(),
            (None, true) => "met".to_string(),
            (None, false) => format!("missed: {}", st.misses.join(", ")),
        };
        let _ = writeln!(
            s,
            "  {:>4} {:>10.0} {:>10.1} {:>9} {:>9} {:>9} {:>9} {:>7.3}% {:>7}{}  {}",
            i + 1,
            st.rate_target,
            st.rate_achieved,
            st.requests,
            micros(st.p50_us),
            micros(st.p99_us),
            micros(st.p999_us),
            st.errors_pct,
            st.late,
            match (cpu, st.server_cpu_us_per_request) {
                (false, _) => String::new(),
                (true, Some(us)) => format!(" {us:>10.1}"),
                (true, None) => format!(" {:>10}", "-"),
            },
            clip(&verdict, room)
        );
    }
    let answer = match (r.capacity_rps, r.failed_at_rps, r.ending) {
        (Some(c), _, Ending::ClientLimit) => format!(
            "≥ {c:.0} req/s (client limit {:.0})",
            r.client_ceiling_rps.unwrap_or(0.0)
        ),
        (Some(c), Some(f), _) => format!("{c:.0} req/s (missed at {f:.0})"),
        (Some(c), None, _) => format!("at least {c:.0} req/s"),
        (None, ..) => "none found".to_string(),
    };
    let _ = writeln!(
        s,
        "  Capacity     {answer}: {}; {} steps in {:.1}s",
        r.ending.describe(),
        r.steps.len(),
        r.search_s
    );
    if let (Some(c), false) = (r.client_ceiling_rps, r.ending == Ending::ClientLimit) {
        let _ = writeln!(
            s,
            "  Client       sent at most {c:.0} req/s open loop in a step it could not keep"
        );
    }
    if let Some(note) = &r.note {
        for (i, line) in wrap(note, 105).iter().enumerate() {
            let head = if i == 0 { "Note" } else { "" };
            let _ = writeln!(s, "  {head:<12} {line}");
        }
    }
    s
}

/// `text` in lines of at most `n` characters, broken at spaces.
fn wrap(text: &str, n: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= n => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(clip(word, n)),
        }
    }
    lines
}

/// `text` cut to `n` characters with an ellipsis.
fn clip(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        return text.to_string();
    }
    let mut t: String = text.chars().take(n - 1).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result() -> CapacityResult {
        let step = |rate: f64, p99: f64, met: bool| Step {
            rate_target: rate,
            rate_achieved: rate,
            requests: 10_000,
            p50_us: 900.0,
            p99_us: p99,
            p999_us: p99 * 2.0,
            met,
            misses: if met {
                vec![]
            } else {
                vec![format!("p99 {} > 5ms", micros(p99))]
            },
            ..Step::default()
        };
        CapacityResult {
            target: vec!["http://127.0.0.1:8080/hello".into()],
            slo: "p99<=5ms,errors<=0.1%".parse().unwrap(),
            precision: 0.05,
            max_steps: 20,
            capacity_rps: Some(1000.0),
            failed_at_rps: Some(1031.0),
            client_ceiling_rps: None,
            ending: Ending::Converged,
            note: None,
            search_s: 12.5,
            steps: vec![step(1000.0, 1200.0, true), step(2000.0, 123_456.0, false)],
        }
    }

    #[test]
    fn the_table_fits_in_120_columns_and_gives_the_answer() {
        let text = render(&result());
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "{line}");
        }
        assert!(
            text.contains("Capacity     1000 req/s (missed at 1031)"),
            "{text}"
        );
        assert!(text.contains("missed: p99 123.456ms > 5ms"), "{text}");
    }

    #[test]
    fn a_search_ended_by_the_client_gives_both_figures_and_what_would_find_the_knee() {
        let mut r = result();
        r.ending = Ending::ClientLimit;
        r.failed_at_rps = None;
        r.client_ceiling_rps = Some(1040.0);
        r.note = Some(format!(
            "capacity ≥ 1000/s (client limit 1040/s): {}",
            "x ".repeat(80)
        ));
        let text = render(&r);
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "{line}");
        }
        assert!(
            text.contains("Capacity     ≥ 1000 req/s (client limit 1040)"),
            "{text}"
        );
        assert!(!text.contains('…'), "the note is wrapped, not cut: {text}");
        r.ending = Ending::Converged;
        r.failed_at_rps = Some(1031.0);
        let text = render(&r);
        assert!(text.contains("1000 req/s (missed at 1031)"), "{text}");
        assert!(text.contains("sent at most 1040 req/s open loop"), "{text}");
    }

    #[test]
    fn the_servers_cpu_gets_a_column_and_the_table_still_fits() {
        let mut r = result();
        r.steps[0].server_cpu_us_per_request = Some(42.5);
        let text = render(&r);
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "{line}");
        }
        assert!(
            text.contains("srv µs/req") && text.contains("42.5"),
            "{text}"
        );
    }

    #[test]
    fn a_precision_must_be_a_positive_percentage() {
        let args = |p: &str| FindMaxArgs {
            find_max: true,
            slo: Some("p99<=5ms".into()),
            precision: p.into(),
            max_steps: 20,
            start_rate: 500.0,
            max_rate: 1e7,
            server_pid: None,
        };
        assert_eq!(plan_of(&args("2%")).unwrap().precision, 0.02);
        assert_eq!(plan_of(&args("10")).unwrap().precision, 0.1);
        assert!(plan_of(&args("0%")).unwrap_err().contains("--precision"));
        assert!(plan_of(&args("fine")).unwrap_err().contains("--precision"));
    }
}
