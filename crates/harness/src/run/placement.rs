//! Where a lap's roles run and how they are measured, behind one interface: here (the server
//! started by the harness, the load tool as a subprocess pinned to the client CPUs, the process
//! trees sampled from `/proc` on a thread), or on hosts over ssh (`run --hosts`: the server on
//! the server host, the load from the client hosts released together at a barrier, the process
//! trees sampled there by `serverbench hosts sample`).
//!
//! A lap arms one [`RoleSampler`] per role whose processes it knows (the server, the database of
//! a database lap), starts them when the measured load starts, and finishes them with the
//! request count; the figures land in the lap record under their [`Role`].

use super::errors::HostsError;
use super::hosts::{self, HostsRun, RemoteSampler};
use super::hosts_tls::HostsTls;
use super::{run_load, LoadError};
use crate::results::record::{HostsLap, LoadParams, Measurement};
use crate::sampler::{Sampler, INTERVAL};
use crate::tools::{Prepared, Target};
use serverbench_hosts::distributed::Progress;
use serverbench_hosts::HostError;
use serverbench_results::{ProcessStats, Role};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Where the roles of a lap run.
#[derive(Clone, Copy)]
pub(super) enum Placement<'a> {
    /// On this machine.
    Local {
        /// The load tool.
        tool: &'a Prepared,
        /// The CPUs of the client (the samplers run there too).
        client_cpus: &'a [usize],
    },
    /// On the hosts of `run --hosts`.
    Hosts {
        /// The machines.
        run: &'a HostsRun,
        /// The run's certificate on the hosts, when a server serves TLS.
        tls: Option<&'a HostsTls>,
    },
}

/// A capacity search's server CPU per request is its capacity step's, read by the search over
/// that step alone (the lap's sample spans every step and its warm-ups).
pub(super) fn capacity_cost(stats: &mut BTreeMap<Role, ProcessStats>, m: &Measurement) {
    let step = m.capacity.as_ref().and_then(|c| c.capacity_step());
    if let (Some(step), Some(s)) = (step, stats.get_mut(&Role::Server)) {
        s.cpu_us_per_request = step.server_cpu_us_per_request;
    }
}

/// The measured load run here by `tool` on `client_cpus`, `samplers` running; a capacity
/// search reads the server's CPU per step, and one that stopped without an answer keeps its
/// steps in the failed lap.
fn measure_here(
    (tool, client_cpus): (&Prepared, &[usize]),
    params: &LoadParams,
    target: &Target,
    roles: &[(Role, Pid)],
    samplers: Samplers,
    cancel: &AtomicBool,
) -> Lap {
    let server = roles.iter().find_map(|r| match r {
        (Role::Server, Pid::Here(pid)) => Some(*pid),
        _ => None,
    });
    let result = run_load(tool, params, target, client_cpus, server, cancel);
    // A capacity search's lap spans every step: no one request count to divide by.
    let requests = result.as_ref().ok().and_then(|o| o.measurement.requests);
    let requests = requests.filter(|_| params.find_max.is_none());
    let mut stats = samplers.finish(requests);
    if let Ok(o) = &result {
        capacity_cost(&mut stats, &o.measurement);
    }
    let kept = match &result {
        Err(LoadError::Search { kept, .. }) => Some((**kept).clone()),
        _ => None,
    };
    Lap {
        stats,
        outcome: result.map(|o| o.measurement).map_err(|e| match e {
            LoadError::Cancelled => LapError::Cancelled,
            _ if cancel.load(Ordering::SeqCst) => LapError::Cancelled,
            e => LapError::Local(e),
        }),
        hosts: None,
        kept,
    }
}

/// Where a role's process runs, for its sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pid {
    /// A process on this machine.
    Here(u32),
    /// A process on the server host of `run --hosts`.
    ServerHost(u32),
    /// A process on the database host of `run --hosts`.
    DatabaseHost(u32),
}

/// A sampler of one role's process tree: armed before the load, started when the measured
/// load starts, finished with the lap's request count.
pub(super) enum RoleSampler {
    /// Here, on a thread pinned to the client CPUs, started at [`RoleSampler::start`].
    Local {
        pid: u32,
        cpus: Vec<usize>,
        running: Option<Sampler>,
    },
    /// `serverbench hosts sample` on the server host.
    Remote(RemoteSampler),
}

impl RoleSampler {
    /// Prepares sampling `pid`'s tree.
    pub(super) fn arm(placement: Placement<'_>, pid: Pid) -> Result<RoleSampler, HostsError> {
        match (pid, placement) {
            (Pid::ServerHost(pid), Placement::Hosts { run, .. }) => Ok(RoleSampler::Remote(
                RemoteSampler::arm(run, &run.server, pid)?,
            )),
            (Pid::DatabaseHost(pid), Placement::Hosts { run, .. }) => Ok(RoleSampler::Remote(
                RemoteSampler::arm(run, &run.database, pid)?,
            )),
            (Pid::Here(pid), p) => Ok(RoleSampler::Local {
                pid,
                cpus: match p {
                    Placement::Local { client_cpus, .. } => client_cpus.to_vec(),
                    Placement::Hosts { .. } => Vec::new(),
                },
                running: None,
            }),
            (Pid::ServerHost(pid) | Pid::DatabaseHost(pid), Placement::Local { .. }) => {
                Ok(RoleSampler::Local {
                    pid,
                    cpus: Vec::new(),
                    running: None,
                })
            }
        }
    }

    /// Starts sampling.
    pub(super) fn start(&mut self) -> Result<(), HostsError> {
        match self {
            RoleSampler::Local { pid, cpus, running } => {
                *running = Some(Sampler::start(*pid, INTERVAL, cpus.clone()));
                Ok(())
            }
            RoleSampler::Remote(r) => r.start(),
        }
    }

    /// Stops sampling; `requests` gives CPU µs per request. `None` when it never started.
    pub(super) fn finish(self, requests: Option<u64>) -> Result<Option<ProcessStats>, HostsError> {
        match self {
            RoleSampler::Local { running, .. } => Ok(running.map(|s| s.finish(requests))),
            RoleSampler::Remote(r) => r.finish(requests).map(Some),
        }
    }
}

/// The samplers of a lap, one per role.
#[derive(Default)]
pub(super) struct Samplers(Vec<(Role, RoleSampler)>);

impl Samplers {
    /// Arms a sampler of `pid` for `role`; a role whose sampler cannot be armed goes unsampled
    /// (the lap still runs, as before roles).
    pub(super) fn arm(&mut self, placement: Placement<'_>, role: Role, pid: Pid) {
        if let Ok(s) = RoleSampler::arm(placement, pid) {
            self.0.push((role, s));
        }
    }

    /// Starts every sampler (at the release of the load).
    pub(super) fn start(&mut self) {
        for (_, s) in &mut self.0 {
            let _ = s.start();
        }
    }

    /// Every role's figures; a sampler that fails leaves its role out.
    pub(super) fn finish(self, requests: Option<u64>) -> BTreeMap<Role, ProcessStats> {
        let finished = self.0.into_iter();
        let stats = finished.filter_map(|(role, s)| Some((role, s.finish(requests).ok()??)));
        stats.collect()
    }
}

/// Why a measured load produced no measurement.
pub(super) enum LapError {
    /// Ctrl-C.
    Cancelled,
    /// The load tool here failed.
    Local(LoadError),
    /// The load could not be prepared for the client hosts.
    Prepare(HostsError),
    /// A capacity search over the client hosts could not go on or found nothing: its plan is
    /// wrong, a step measured nothing about the server (no request succeeded), or the goal
    /// failed at the first rate.
    Search(String),
    /// Hosts failed during the lap (the server host among them or not).
    Hosts {
        /// One error per failing host.
        faults: Vec<HostError>,
        /// The server host is one of them.
        server_host: bool,
    },
}

/// A measured load: the measurement or why not, each role's figures, and over hosts what each
/// host measured.
pub(super) struct Lap {
    /// What the load measured.
    pub outcome: Result<Measurement, LapError>,
    /// Each sampled role's process tree.
    pub stats: BTreeMap<Role, ProcessStats>,
    /// `run --hosts`: the server host and each client host's result.
    pub hosts: Option<HostsLap>,
    /// What was measured before the lap failed, kept in its record (a capacity search's steps
    /// so far).
    pub kept: Option<Measurement>,
}

impl Placement<'_> {
    /// Runs the measured load of `params` against `target`, with the process trees of `roles`
    /// sampled from when it starts (over hosts: at the release of the client hosts, after their
    /// warm-up); `at_start` runs just before (the database's first snapshot of statements).
    /// Here a `find_max` lap is one run of the load tool's own search; over hosts it is driven
    /// step by step from the controller instead (`hosts_capacity.rs`).
    pub(super) fn measure(
        self,
        params: &LoadParams,
        target: &Target,
        roles: &[(Role, Pid)],
        at_start: &mut (dyn FnMut() + Send),
        cancel: &AtomicBool,
    ) -> Lap {
        let mut samplers = Samplers::default();
        match self {
            Placement::Local { tool, client_cpus } => {
                roles
                    .iter()
                    .for_each(|&(r, pid)| samplers.arm(self, r, pid));
                at_start();
                samplers.start();
                measure_here((tool, client_cpus), params, target, roles, samplers, cancel)
            }
            Placement::Hosts { run, tls } => {
                let (spec, copies) = match hosts::client_spec(run, params, target, tls) {
                    Ok(s) => s,
                    Err(e) => {
                        return Lap {
                            outcome: Err(LapError::Prepare(e)),
                            stats: BTreeMap::new(),
                            hosts: None,
                            kept: None,
                        }
                    }
                };
                roles
                    .iter()
                    .for_each(|&(r, pid)| samplers.arm(self, r, pid));
                let load = {
                    // The samplers start when the client hosts are released together.
                    let on_release = Mutex::new(|| {
                        at_start();
                        samplers.start();
                    });
                    let progress = |p| {
                        if let Progress::Released { .. } = p {
                            (on_release.lock().expect("on_release"))();
                        }
                    };
                    run.clients(&copies).load(&spec, &progress, cancel)
                };
                let requests = load.outcome.as_ref().ok().map(|d| d.merged.requests);
                let stats = samplers.finish(requests);
                let record = hosts::lap_record(run, &load);
                let outcome = match load.outcome {
                    Ok(d) => Ok(Measurement::from(&d.merged)),
                    Err(f) if f.cancelled => Err(LapError::Cancelled),
                    Err(f) => Err(LapError::Hosts {
                        server_host: f.faults.iter().any(|e| e.host() == run.server.name),
                        faults: f.faults,
                    }),
                };
                Lap {
                    outcome,
                    stats,
                    hosts: Some(record),
                    kept: None,
                }
            }
        }
    }

    /// Whether the warm-up runs before the measured load here (over hosts, each client host
    /// warms up before its barrier, within [`Placement::measure`]).
    pub(super) fn warms_up_apart(self) -> bool {
        matches!(self, Placement::Local { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::Tool;

    #[test]
    fn a_sampler_armed_here_gives_its_role_the_process_trees_figures() {
        let tool = Prepared {
            tool: Tool::Serverbench,
            exe: "serverbench".into(),
            scratch: std::env::temp_dir(),
        };
        let here = Placement::Local {
            tool: &tool,
            client_cpus: &[],
        };
        let mut samplers = Samplers::default();
        samplers.arm(here, Role::Database, Pid::Here(std::process::id()));
        samplers.start();
        std::thread::sleep(std::time::Duration::from_millis(250));
        let stats = samplers.finish(Some(10));
        let db = stats.get(&Role::Database).expect("the database role");
        assert!(db.samples >= 2 && db.rss_peak_mb > 0.0, "{db:?}");
        assert!(!stats.contains_key(&Role::Server));
    }

    #[test]
    fn a_sampler_never_started_gives_nothing() {
        let s = RoleSampler::Local {
            pid: std::process::id(),
            cpus: Vec::new(),
            running: None,
        };
        assert!(s.finish(Some(1)).unwrap().is_none());
    }
}
