//! `serverbench load --find-max --slo …`: the capacity search of the harness
//! ([`serverbench_harness::capacity`]), each step on the engine here or split across `--hosts`;
//! the curve as a table or as JSON (spec/capacity-result.schema.json).

use super::Args;
use crate::exit::Exit;
use serverbench_analysis::capacity::{step_spec, STEP_WARMUP};
use serverbench_engine::{Config, EngineError, Event};
use serverbench_harness::capacity::{measure_here, measure_over_hosts, search, StepError};
use serverbench_model::capacity::{CapacityResult, Ending};
use serverbench_model::{slo::micros, LoadResult, LoadSpec};
use serverbench_report::load::capacity::{render, told};
use std::io::IsTerminal;

/// One open-loop run of the engine here; `measuring` is called when measurement starts.
fn engine(spec: &LoadSpec, measuring: &dyn Fn()) -> Result<LoadResult, EngineError> {
    let config = Config::try_from(spec)?;
    serverbench_engine::run(&config, &|ev| {
        if ev == Event::Measuring {
            measuring();
        }
    })
}

/// Runs the search for `serverbench load --find-max`.
pub fn run(args: &Args, spec: LoadSpec) -> anyhow::Result<Exit> {
    let bad = |why: String| {
        eprintln!("serverbench load --find-max: {why}");
        Ok(Exit::BadInput)
    };
    let (slo, plan) = match args.search(&spec) {
        Ok(s) => s,
        Err(why) => return bad(why),
    };
    let warmup = Some(spec.warmup)
        .filter(|w| !w.is_zero())
        .unwrap_or(STEP_WARMUP);
    let first = step_spec(&spec, plan.start, std::time::Duration::from_secs(1), warmup);
    if let Err(e) = Config::try_from(&first) {
        return bad(format!("{e:#}"));
    }
    // --hosts: every step is split across the client hosts and merged exactly.
    let hosts = match args.hosts.is_some() {
        true => match super::distributed::open(args, &spec)? {
            Ok(h) => Some(h),
            Err(exit) => return Ok(exit),
        },
        false => None,
    };
    let spec = hosts.as_ref().map_or(spec, |h| h.spec.clone());
    let live = !args.quiet && std::io::stderr().is_terminal();
    let (result, failed) = search(&spec, (&slo, &plan), warmup, |s| {
        let step = match &hosts {
            Some(h) => {
                measure_over_hosts(h.session.clients(), s, &mut || {}, &h.cancel, &mut |_| {})
            }
            None => measure_here(s, args.find_max.server_pid, engine),
        }?;
        if live {
            let rate = s.rate.unwrap_or_default();
            eprintln!("  step at {rate:.0}/s: p99 {}", micros(step.p99_us));
        }
        Ok::<_, StepError<EngineError>>(step)
    });
    report(args, &result, failed.as_ref().map(exit_of))
}

/// The exit of a step that measured nothing.
fn exit_of(e: &StepError<EngineError>) -> Exit {
    match e {
        StepError::Load(EngineError::Refused { .. }) => Exit::Refused,
        StepError::Hosts { failure, .. } if failure.cancelled => Exit::Interrupted,
        StepError::Load(_) | StepError::Hosts { .. } => Exit::BadInput,
        StepError::Unmeasured(_) => Exit::NoSuccess,
    }
}

/// Prints (and with `-o` writes) the search; returns its exit: a step's error's, 10 when the
/// goal failed at the first rate, else 0.
fn report(args: &Args, result: &CapacityResult, failed: Option<Exit>) -> anyhow::Result<Exit> {
    super::output(args, result, || render(result))?;
    let exit = match (failed, result.ending) {
        (Some(exit), _) => exit,
        (None, Ending::GoalMissedAtStart) => Exit::GoalMissed,
        _ => Exit::Ok,
    };
    let say = exit != Exit::Ok || result.ending == Ending::ClientLimit;
    if let (Some(note), true) = (&result.note, say) {
        eprint!("{}", told(note, "serverbench load --find-max:"));
    }
    Ok(exit)
}
