//! A `find_max` lap over `run --hosts`: the capacity search of
//! [`serverbench_analysis::capacity`] driven from the controller, each step one load split
//! across the client hosts (each its share of the connections and of the rate), released
//! together and merged exactly by the one step measurer ([`crate::capacity`]) that
//! `serverbench load --find-max --hosts` uses too.
//!
//! - **Warm-up.** The client hosts warm up before each step's barrier, open loop at the step's
//!   rate: the first step for the lap's warm-up (at least a second), the others for
//!   [`STEP_WARMUP`], as a search here does.
//! - **Server CPU.** Every step arms its own `serverbench hosts sample` of the server's tree on
//!   the server host (one ssh session over the run's control connection), started at the
//!   step's release and stopped with its request count: the step's server CPU per request.
//!   The lap's samplers span the whole search; its CPU per request is its capacity step's.
//! - **Faults.** A client host that fails ends the search: its steps so far are kept in the
//!   failed lap's record (ending `aborted`, the note naming the fault). A goal missed at the
//!   first rate fails the lap too, as a search here does, its step kept. Ctrl-C stops the step's
//!   hosts and the lap goes unrecorded. Every remote session (load and sampler) is closed when
//!   its step returns.
//! - **The lap's hosts record** is its capacity step's (the first step's when no rate met the
//!   goal, as the lap's figures; the failing step's when one failed): the lap's figures and each
//!   client host's part agree.

use super::hosts::{self, HostsRun, RemoteSampler};
use super::hosts_tls::HostsTls;
use super::placement::{capacity_cost, Lap, LapError, Pid, Placement, Samplers};
use crate::capacity::{measure_over_hosts, StepError};
use crate::clients::HostsLoad;
use crate::results::record::{HostsLap, LoadParams, Measurement};
use crate::tools::Target;
use serverbench_analysis::capacity::{self, Plan, STEP_WARMUP};
use serverbench_hosts::HostError;
use serverbench_model::capacity::{Ending, Step};
use serverbench_model::slo::Slo;
use serverbench_model::LoadSpec;
use serverbench_results::Role;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Why the search stopped before it was done.
enum Stop {
    /// Ctrl-C.
    Cancelled,
    /// Client hosts (or the server host) failed during a step.
    Hosts {
        faults: Vec<HostError>,
        server_host: bool,
    },
    /// A step measured nothing about the server.
    Unmeasured(String),
}

impl Stop {
    /// The search's note.
    fn line(&self) -> String {
        match self {
            Stop::Cancelled => "interrupted".into(),
            Stop::Hosts { faults, .. } => {
                let lines: Vec<String> = faults.iter().map(|e| e.to_string()).collect();
                lines.join("; ")
            }
            Stop::Unmeasured(why) => why.clone(),
        }
    }

    fn into_error(self) -> LapError {
        match self {
            Stop::Cancelled => LapError::Cancelled,
            Stop::Hosts {
                faults,
                server_host,
            } => LapError::Hosts {
                faults,
                server_host,
            },
            Stop::Unmeasured(why) => LapError::Search(why),
        }
    }
}

/// What the steps share.
struct Search<'a> {
    run: &'a HostsRun,
    /// The lap's load as the client hosts take it, before the split.
    spec: LoadSpec,
    /// Over TLS, each client host's copy of the run's certificate.
    copies: Vec<PathBuf>,
    slo: Slo,
    /// The profile's duration: each step's length.
    fixed: Option<Duration>,
    /// The first step's warm-up (the lap's).
    first_warmup: Duration,
    /// The server's process on the server host, sampled per step.
    server: Option<u32>,
    /// Runs at the first release: the lap's samplers start.
    at_first_release: Option<&'a mut (dyn FnMut() + Send)>,
    /// Each step's hosts record, in the order measured (the failing one last).
    records: Vec<HostsLap>,
}

impl Search<'_> {
    /// Measures one step at `rate` over the client hosts.
    fn step(&mut self, rate: f64, cancel: &AtomicBool) -> Result<Step, Stop> {
        if cancel.load(Ordering::SeqCst) {
            return Err(Stop::Cancelled);
        }
        let length = capacity::step_length(&self.slo, rate, self.fixed);
        let warmup = match self.records.is_empty() {
            true => self.first_warmup,
            false => STEP_WARMUP,
        };
        let spec = capacity::step_spec(&self.spec, rate, length, warmup);
        let (run, first, records) = (self.run, &mut self.at_first_release, &mut self.records);
        let mut sampler = self
            .server
            .and_then(|pid| RemoteSampler::arm(run, &run.server, pid).ok());
        let mut sampling = false;
        let mut on_release = || {
            if let Some(f) = first.take() {
                f();
            }
            sampling = sampler.as_mut().is_some_and(|s| s.start().is_ok());
        };
        let mut seen = |load: &HostsLoad| records.push(hosts::lap_record(run, load));
        let clients = run.clients(&self.copies);
        let measured = measure_over_hosts(clients, &spec, &mut on_release, cancel, &mut seen);
        let mut step = measured.map_err(|e: StepError<Infallible>| match e {
            StepError::Hosts { failure, .. } if failure.cancelled => Stop::Cancelled,
            StepError::Hosts { failure, .. } => Stop::Hosts {
                server_host: failure.faults.iter().any(|e| e.host() == run.server.name),
                faults: failure.faults,
            },
            e => Stop::Unmeasured(e.to_string()),
        })?;
        // A sampler that could not start (or answer) leaves the step's server CPU out.
        let stats = sampler
            .filter(|_| sampling)
            .and_then(|s| s.finish(Some(step.requests)).ok());
        step.server_cpu_us_per_request = stats.and_then(|s| s.cpu_us_per_request);
        Ok(step)
    }
}

/// Which step's hosts record the lap keeps: the failing one (the last measured) when the search
/// stopped on a fault, else the step of the lap's figures (see `Measurement::from`): at the
/// capacity, else the first.
fn recorded_step(out: &capacity::Outcome, stopped: bool) -> Option<usize> {
    if stopped {
        return Some(out.steps.len());
    }
    let at = out
        .steps
        .iter()
        .rposition(|s| s.met && Some(s.rate_target) == out.capacity);
    (!out.steps.is_empty()).then(|| at.unwrap_or(0))
}

/// The lap's failure before any step ran.
fn failed(e: LapError) -> Lap {
    Lap {
        outcome: Err(e),
        stats: BTreeMap::new(),
        hosts: None,
        kept: None,
    }
}

/// Runs the capacity search of a `find_max` lap of `params` against `target` over the client
/// hosts of `run`, with the process trees of `roles` sampled over the whole search from its
/// first release (`at_start` runs just before).
pub(super) fn measure(
    (run, tls): (&HostsRun, Option<&HostsTls>),
    params: &LoadParams,
    target: &Target,
    roles: &[(Role, Pid)],
    at_start: &mut (dyn FnMut() + Send),
    cancel: &AtomicBool,
) -> Lap {
    let find_max = params.find_max.as_ref().expect("a find_max lap");
    let plan = match Plan::of(find_max) {
        Ok(p) => p,
        Err(why) => return failed(LapError::Search(why.to_string())),
    };
    let (spec, copies) = match hosts::client_spec(run, params, target, tls) {
        Ok(s) => s,
        Err(e) => return failed(LapError::Prepare(e)),
    };
    let loaded = (capacity::target_of(&spec), spec.work.mode);
    let placement = Placement::Hosts { run, tls };
    let mut samplers = Samplers::default();
    roles
        .iter()
        .for_each(|&(r, pid)| samplers.arm(placement, r, pid));
    let started = Instant::now();
    let (out, stop, records) = {
        let mut lap_start = || {
            at_start();
            samplers.start();
        };
        let mut search = Search {
            run,
            spec,
            copies,
            slo: find_max.slo.clone(),
            fixed: params.duration_s.map(Duration::from_secs_f64),
            first_warmup: Duration::from_secs_f64(params.warmup_s).max(STEP_WARMUP),
            server: roles.iter().find_map(|r| match r {
                (Role::Server, Pid::ServerHost(pid)) => Some(*pid),
                _ => None,
            }),
            at_first_release: Some(&mut lap_start),
            records: Vec::new(),
        };
        let (out, stop) = capacity::search(&find_max.slo, &plan, |rate| search.step(rate, cancel));
        (out, stop, search.records)
    };
    let record = recorded_step(&out, stop.is_some()).and_then(|i| records.get(i));
    let result = out.into_result(
        loaded,
        (&find_max.slo, &plan),
        stop.as_ref().map(Stop::line),
        started.elapsed().as_secs_f64(),
    );
    let m = Measurement::from(&result);
    // A capacity search's lap spans every step: no one request count to divide by.
    let mut stats = samplers.finish(None);
    capacity_cost(&mut stats, &m);
    let kept = Some(m.clone()).filter(|_| !result.steps.is_empty());
    Lap {
        outcome: match stop {
            Some(s) => Err(s.into_error()),
            // As `load --find-max` here (exit 10): the lap fails, its step kept.
            None if result.ending == Ending::GoalMissedAtStart => {
                Err(LapError::Search(result.note.unwrap_or_default()))
            }
            None => Ok(m),
        },
        stats,
        hosts: record.cloned(),
        kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(rate: f64, met: bool) -> Step {
        Step {
            rate_target: rate,
            met,
            ..Step::default()
        }
    }

    #[test]
    fn the_lap_keeps_the_hosts_record_of_its_capacity_step_or_of_the_failing_one() {
        let out = capacity::Outcome {
            capacity: Some(400.0),
            failed_at: Some(412.5),
            steps: vec![step(200.0, true), step(400.0, true), step(800.0, false)],
            ..capacity::Outcome::default()
        };
        assert_eq!(recorded_step(&out, false), Some(1));
        // A fault in the fourth step: its record follows the three measured.
        assert_eq!(recorded_step(&out, true), Some(3));
        let missed = capacity::Outcome {
            steps: vec![step(100.0, false)],
            ..capacity::Outcome::default()
        };
        assert_eq!(recorded_step(&missed, false), Some(0));
        assert_eq!(recorded_step(&capacity::Outcome::default(), false), None);
    }

    #[test]
    fn a_fault_becomes_the_laps_failure_and_ctrl_c_no_failure_at_all() {
        let why = Stop::Unmeasured("at 800/s: no request succeeded (5 errors)".into());
        assert!(why.line().starts_with("at 800/s"));
        assert!(matches!(why.into_error(), LapError::Search(_)));
        assert!(matches!(Stop::Cancelled.into_error(), LapError::Cancelled));
    }
}
