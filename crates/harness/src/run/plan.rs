//! What a run will do: which servers (and why others are skipped), which laps in which order,
//! and where server and client are pinned.

use super::{Event, RunError};
use crate::catalog::{not_ready, Catalog, CatalogError, Server};
use crate::paths::Paths;
use crate::results::record::LoadParams;
use crate::suite::{Scenario, ServerSelection, Suite};
use crate::tools::{Prepared, Target};
use serde::Serialize;
use serverbench_model::Feature;
use serverbench_results::env::{Pinning, Skipped};
use serverbench_results::LapKey;

/// One measured lap to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// Index into [`Plan::servers`].
    pub server: usize,
    /// Index into the suite's scenarios.
    pub scenario: usize,
    /// Index into the suite's profiles.
    pub profile: usize,
    /// 1-based lap.
    pub lap: u32,
}

/// A scenario a server cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScenarioSkip {
    /// Catalog id.
    pub server: String,
    /// Scenario name.
    pub scenario: String,
    /// Why.
    pub why: String,
}

/// The resolved servers and the interleaved laps.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Servers that will run, in suite order.
    pub servers: Vec<Server>,
    /// Servers that will not run, and why.
    pub skipped: Vec<Skipped>,
    /// Scenarios some server cannot run.
    pub scenario_skips: Vec<ScenarioSkip>,
    /// Every lap, ordered lap by lap, then server by server (A B C A B C).
    pub jobs: Vec<Job>,
}

/// The features `scenario` needs that `server` lacks.
fn missing_features(server: &Server, scenario: &Scenario) -> Vec<Feature> {
    scenario
        .needs()
        .into_iter()
        .filter(|f| !server.implements(*f))
        .collect()
}

fn runs_any(server: &Server, suite: &Suite) -> bool {
    suite
        .scenarios
        .iter()
        .any(|s| missing_features(server, s).is_empty())
}

/// The catalog servers `suite` would run once set up: those it lists (or every server) that
/// implement what at least one of its scenarios needs. `make bench` sets up only these.
pub fn wanted<'a>(suite: &Suite, catalog: &'a Catalog) -> Vec<&'a Server> {
    let listed: Vec<&Server> = match &suite.servers {
        ServerSelection::All(_) => catalog.servers.iter().collect(),
        ServerSelection::List(ids) => ids.iter().filter_map(|id| catalog.get(id).ok()).collect(),
    };
    listed.into_iter().filter(|s| runs_any(s, suite)).collect()
}

/// Resolves the suite's servers against the catalog and lays out the laps.
pub fn plan(suite: &Suite, catalog: &Catalog, paths: &Paths) -> Plan {
    let mut servers = Vec::new();
    let mut skipped = Vec::new();
    let mut skip = |server: &str, why: String| {
        skipped.push(Skipped {
            server: server.to_string(),
            why,
        })
    };
    let candidates: Vec<&Server> = match &suite.servers {
        ServerSelection::All(_) => {
            if catalog.absent {
                let why = crate::paths::no_catalog("running every catalog server");
                skip("all", why.to_string());
            }
            for b in &catalog.broken {
                skip(&b.id, format!("broken manifest: {}", b.error));
            }
            catalog.servers.iter().collect()
        }
        ServerSelection::List(ids) => ids
            .iter()
            .filter_map(|id| match catalog.get(id) {
                Ok(s) => Some(s),
                Err(e @ CatalogError::UnknownServer { .. }) => {
                    skip(id, format!("not in the catalog yet ({e})"));
                    None
                }
                Err(e) => {
                    skip(id, e.to_string());
                    None
                }
            })
            .collect(),
    };
    for server in candidates {
        if servers.iter().any(|s: &Server| s.id == server.id) {
            continue;
        }
        if let Some(why) = not_ready(server, paths) {
            skip(&server.id, why);
        } else if !runs_any(server, suite) {
            let needed: Vec<&str> = suite
                .required_features()
                .iter()
                .map(|f| f.as_str())
                .collect();
            skip(
                &server.id,
                format!("implements none of the scenarios ({})", needed.join(", ")),
            );
        } else {
            servers.push(server.clone());
        }
    }
    let mut scenario_skips = Vec::new();
    for s in &servers {
        for sc in &suite.scenarios {
            let missing = missing_features(s, sc);
            if !missing.is_empty() {
                let names: Vec<&str> = missing.iter().map(|f| f.as_str()).collect();
                scenario_skips.push(ScenarioSkip {
                    server: s.id.clone(),
                    scenario: sc.name.clone(),
                    why: format!("does not implement {}", names.join(", ")),
                });
            }
        }
    }
    let jobs = jobs(suite, &servers);
    Plan {
        servers,
        skipped,
        scenario_skips,
        jobs,
    }
}

impl Plan {
    /// The key of a job's lap in `results.jsonl`.
    pub(super) fn key(&self, suite: &Suite, j: &Job) -> LapKey {
        LapKey {
            server: self.servers[j.server].id.clone(),
            scenario: suite.scenarios[j.scenario].name.clone(),
            profile: suite.profiles[j.profile].name.clone(),
            lap: j.lap,
        }
    }

    /// Reports the servers and scenarios left out; refuses a plan with no server to run.
    pub(super) fn announce(
        &self,
        suite: &Suite,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), RunError> {
        for s in &self.skipped {
            on_event(Event::ServerSkipped {
                server: s.server.clone(),
                why: s.why.clone(),
            });
        }
        for s in &self.scenario_skips {
            on_event(Event::ScenarioSkipped {
                server: s.server.clone(),
                scenario: s.scenario.clone(),
                why: s.why.clone(),
            });
        }
        if !self.servers.is_empty() {
            return Ok(());
        }
        let why = self
            .skipped
            .iter()
            .map(|s| format!("{}: {}", s.server, s.why));
        let why = why.reduce(|a, b| format!("{a}; {b}"));
        Err(RunError::NothingToRun {
            suite: suite.name.clone(),
            why: why.unwrap_or_else(|| "the catalog is empty".into()),
        })
    }

    /// Refuses, before any server starts, a tool that cannot run one of the laps (wrk with a
    /// request count, ab with rotated paths, an external tool on a TCP scenario...).
    pub(super) fn check_tool(&self, tool: &Prepared, suite: &Suite) -> Result<(), RunError> {
        let target = Target {
            host: "127.0.0.1".into(),
            port: 1,
            echo_port: Some(2),
            tls_port: Some(3),
            h3_port: Some(4),
            ca_file: None,
        };
        for j in self.jobs.iter().filter(|j| j.lap == 1) {
            tool.command(&load_params(suite, j), &target, &[])?;
        }
        Ok(())
    }
}

/// The load parameters of a job, as recorded (the suite's warm-up).
pub(super) fn load_params(s: &Suite, j: &Job) -> LoadParams {
    let (sc, p) = (&s.scenarios[j.scenario], &s.profiles[j.profile]);
    LoadParams {
        work: serverbench_model::spec::Work {
            method: sc.request_method(),
            ..sc.work.clone()
        },
        connections: p.connections,
        threads: p.threads.unwrap_or(0),
        duration_s: p.duration,
        requests: p.requests,
        pipeline: p.pipeline,
        rate: p.rate,
        warmup_s: s.warmup,
        server_cpus: p.cores,
        transport: sc.transport.clone(),
        pool: sc
            .needs_database()
            .then(|| p.pool.or(s.pool).unwrap_or(crate::suite::DEFAULT_POOL)),
        find_max: p.find_max.clone(),
        chunked: sc.chunk(),
    }
}

fn jobs(suite: &Suite, servers: &[Server]) -> Vec<Job> {
    let mut jobs = Vec::new();
    for lap in 1..=suite.planned_laps() {
        for (si, server) in servers.iter().enumerate() {
            for (ci, sc) in suite.scenarios.iter().enumerate() {
                if !missing_features(server, sc).is_empty() {
                    continue;
                }
                for pi in 0..suite.profiles.len() {
                    if !sc.runs_at(&suite.profiles[pi]) {
                        continue;
                    }
                    jobs.push(Job {
                        server: si,
                        scenario: ci,
                        profile: pi,
                        lap,
                    });
                }
            }
        }
    }
    jobs
}

/// Pinning from the flags, else the default: server on the first half of the affinity mask,
/// client on the second half; with one CPU, no pinning. `WORKERS` = number of server CPUs.
pub fn pinning(server: Option<Vec<usize>>, client: Option<Vec<usize>>, mask: &[usize]) -> Pinning {
    let flags = server.is_some() || client.is_some();
    let half = mask.len() / 2;
    let (def_server, def_client) = if mask.len() >= 2 {
        (mask[..half].to_vec(), mask[half..].to_vec())
    } else {
        (Vec::new(), Vec::new())
    };
    let server_cpus = server.unwrap_or(def_server);
    let client_cpus = client.unwrap_or(def_client);
    let workers = if server_cpus.is_empty() {
        mask.len().max(1)
    } else {
        server_cpus.len()
    };
    let how = if flags {
        "from --server-cpus/--client-cpus".to_string()
    } else if mask.len() >= 2 {
        "default: server on the first half of the CPUs, client on the second half".to_string()
    } else {
        "one CPU: no pinning".to_string()
    };
    Pinning {
        server_cpus,
        client_cpus,
        workers,
        how,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_cpus_put_the_server_on_0_and_the_client_on_1() {
        let p = pinning(None, None, &[0, 1]);
        assert_eq!(
            (p.server_cpus, p.client_cpus, p.workers),
            (vec![0], vec![1], 1)
        );
    }

    #[test]
    fn one_cpu_means_no_pinning() {
        let p = pinning(None, None, &[3]);
        assert!(p.server_cpus.is_empty() && p.client_cpus.is_empty());
        assert!(p.how.contains("no pinning"));
    }

    #[test]
    fn flags_override_the_default_and_set_workers() {
        let p = pinning(Some(vec![0, 1, 2]), Some(vec![3]), &[0, 1, 2, 3]);
        assert_eq!((p.workers, p.client_cpus), (3, vec![3]));
    }
}
