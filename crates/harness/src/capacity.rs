//! The capacity step measurer: one step of [`serverbench_analysis::capacity::search`] (an
//! open-loop run at the step's rate after its own warm-up), judged later by the search. A step
//! runs here ([`measure_here`], for `serverbench load --find-max`, which is also how `run`'s
//! `find_max` profiles search through the `serverbench` load tool) or over client hosts
//! ([`measure_over_hosts`], for `load --find-max --hosts` and `run --hosts`); [`search`] runs
//! a whole search of `load --find-max` with either.

use crate::clients::{failure_lines, ClientHosts, HostsLoad};
use serverbench_analysis::capacity::{self, Plan};
use serverbench_hosts::distributed::{Distributed, Failure, Progress};
use serverbench_model::capacity::{CapacityResult, Step};
use serverbench_model::slo::Slo;
use serverbench_model::{LoadResult, LoadSpec};
use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Why a step measured nothing.
#[derive(Debug, thiserror::Error)]
pub enum StepError<E: std::error::Error> {
    /// The load could not run here (the load generator's error).
    #[error("{0}")]
    Load(E),
    /// The client hosts failed (or Ctrl-C stopped them): the step's rate and the failure.
    #[error("at {rate:.0}/s: {}", failure_lines(failure).join("; "))]
    Hosts { rate: f64, failure: Failure },
    /// It ran and nothing succeeded, or nothing was answered.
    #[error(transparent)]
    Unmeasured(#[from] capacity::StepError),
}

/// One open-loop run of `spec` here, as a step (not yet judged): `run` is the load generator
/// (the engine, which the harness does not link), handed a callback to call when measurement
/// starts. With `server_pid`, the step has the server tree's CPU per request, from the start of
/// measurement to the end of the run.
pub fn measure_here<E: std::error::Error>(
    spec: &LoadSpec,
    server_pid: Option<u32>,
    run: impl FnOnce(&LoadSpec, &dyn Fn()) -> Result<LoadResult, E>,
) -> Result<Step, StepError<E>> {
    let at_start = Cell::new(None);
    let measuring = || at_start.set(server_pid.map(tree_cpu_s));
    let result = run(spec, &measuring).map_err(StepError::Load)?;
    let mut step = capacity::step_of(&result)?;
    if let (Some(pid), Some(start)) = (server_pid, at_start.get()) {
        let cpu_s = tree_cpu_s(pid) - start;
        step.server_cpu_us_per_request =
            (step.requests > 0).then(|| cpu_s * 1e6 / step.requests as f64);
    }
    Ok(step)
}

/// One step of `spec` split across `clients`, merged exactly: the step with its saturated
/// hosts. `on_release` runs when the hosts are released together; `seen` sees the load before
/// it is judged (its per-host results, for a record).
pub fn measure_over_hosts<E: std::error::Error>(
    clients: ClientHosts,
    spec: &LoadSpec,
    on_release: &mut (dyn FnMut() + Send),
    cancel: &AtomicBool,
    seen: &mut dyn FnMut(&HostsLoad),
) -> Result<Step, StepError<E>> {
    let on_release = Mutex::new(on_release);
    let progress = |p| {
        if let Progress::Released { .. } = p {
            (on_release.lock().expect("on_release"))();
        }
    };
    let load = clients.load(spec, &progress, cancel);
    seen(&load);
    match load.outcome {
        Ok(d) => Ok(step_of(&d)?),
        Err(failure) => Err(StepError::Hosts {
            rate: spec.rate.unwrap_or(0.0),
            failure,
        }),
    }
}

/// The step a distributed load measured: its merge's, with the hosts that ran out of CPU.
pub fn step_of(d: &Distributed) -> Result<Step, capacity::StepError> {
    let mut step = capacity::step_of(&d.merged)?;
    step.saturated_hosts = d.saturated_hosts.clone();
    Ok(step)
}

/// CPU seconds (user + system) of `pid` and its descendants now.
fn tree_cpu_s(pid: u32) -> f64 {
    let ticks: u64 = crate::sampler::process_tree(pid)
        .into_iter()
        .filter_map(|p| serverbench_machine::process::stat(p).map(|s| s.cpu_ticks))
        .sum();
    ticks as f64 / serverbench_machine::procfs::ticks_per_second()
}

/// A capacity search of `spec` for `slo` by `plan`: each step `spec` at the step's rate, for the
/// step's length (`spec`'s duration when given), after `warmup`, measured by `measure`; the
/// curve, and the failure that stopped it (its text the curve's note).
pub fn search<E: std::fmt::Display>(
    spec: &LoadSpec,
    (slo, plan): (&Slo, &Plan),
    warmup: Duration,
    mut measure: impl FnMut(&LoadSpec) -> Result<Step, E>,
) -> (CapacityResult, Option<E>) {
    let started = Instant::now();
    let (out, failed) = capacity::search(slo, plan, |rate| {
        let length = capacity::step_length(slo, rate, spec.duration);
        measure(&capacity::step_spec(spec, rate, length, warmup))
    });
    let result = out.into_result(
        (capacity::target_of(spec), spec.work.mode),
        (slo, plan),
        failed.as_ref().map(|e| e.to_string()),
        started.elapsed().as_secs_f64(),
    );
    (result, failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// What a load generator returned for a step at 100/s.
    fn answered(requests: u64) -> LoadResult {
        LoadResult {
            requests,
            rate_target: Some(100.0),
            rps: requests as f64,
            ..LoadResult::default()
        }
    }

    #[test]
    fn a_step_here_has_the_server_trees_cpu_per_request_from_the_start_of_measurement() {
        let run = |_: &LoadSpec, measuring: &dyn Fn()| {
            measuring();
            // 100 ms of CPU in this process, the "server" here: at least a clock tick.
            let t0 = Instant::now();
            let mut x = 0u64;
            while t0.elapsed() < Duration::from_millis(100) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            Ok::<_, std::io::Error>(answered(1000))
        };
        let step = measure_here(&LoadSpec::default(), Some(std::process::id()), run).unwrap();
        assert_eq!((step.requests, step.rate_target), (1000, 100.0));
        let us = step.server_cpu_us_per_request.expect("the server's CPU");
        assert!(us > 0.0 && us < 1e3, "{us} µs per request");
        let without = measure_here(&LoadSpec::default(), None, run).unwrap();
        assert_eq!(without.server_cpu_us_per_request, None);
    }

    #[test]
    fn a_step_that_could_not_run_or_succeeded_at_nothing_says_which() {
        let refused = |_: &LoadSpec, _: &dyn Fn()| {
            Err(std::io::Error::other(
                "127.0.0.1:1 refused every connection",
            ))
        };
        let e = measure_here(&LoadSpec::default(), None, refused).unwrap_err();
        assert!(matches!(e, StepError::Load(_)), "{e}");
        assert_eq!(e.to_string(), "127.0.0.1:1 refused every connection");
        let mut failed = answered(0);
        failed.errors.read = 5;
        let nothing = |_: &LoadSpec, _: &dyn Fn()| Ok::<_, std::io::Error>(failed.clone());
        let e = measure_here(&LoadSpec::default(), None, nothing).unwrap_err();
        assert!(matches!(e, StepError::Unmeasured(_)), "{e}");
        assert!(
            e.to_string().contains("no request succeeded (5 errors)"),
            "{e}"
        );
    }

    #[test]
    fn a_search_steps_the_spec_at_each_rate_and_notes_what_stopped_it() {
        let slo: Slo = "p99<=5ms".parse().unwrap();
        let plan = Plan {
            start: 100.0,
            ..Plan::default()
        };
        let spec = LoadSpec {
            target: "127.0.0.1:1".into(),
            work: serverbench_model::spec::Work {
                paths: vec!["/".into()],
                ..Default::default()
            },
            duration: Some(Duration::from_secs(2)),
            ..LoadSpec::default()
        };
        let mut asked = Vec::new();
        let (result, failed) = search(&spec, (&slo, &plan), Duration::from_secs(1), |s| {
            asked.push((s.rate, s.duration, s.warmup));
            match asked.len() {
                1 => Ok(Step::from_load(&answered(200))),
                _ => Err("at 200/s: load1: ssh: unreachable"),
            }
        });
        let step = |r| {
            (
                Some(r),
                Some(Duration::from_secs(2)),
                Duration::from_secs(1),
            )
        };
        assert_eq!(asked, [step(100.0), step(200.0)]);
        assert_eq!(failed, Some("at 200/s: load1: ssh: unreachable"));
        assert_eq!(result.note.as_deref(), failed);
        assert_eq!(result.target, ["http://127.0.0.1:1/"]);
        assert_eq!(result.steps.len(), 1);
    }
}
