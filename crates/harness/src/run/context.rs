//! What every lap of a run reads and none changes: the plan, the options, the prepared load
//! tool, the results folder and the run's certificate. [`prepare`] makes it once, before the
//! first lap (the hosts set up, `env.json` written, the tool installed and checked, the
//! certificate made); the turns and laps then only borrow it.

use super::hosts_tls::HostsTls;
use super::plan::{self, Job, Plan};
use super::{env, estimate, hosts, Event, RunError, RunOptions};
use crate::catalog::{Catalog, Server};
use crate::certs::TlsFiles;
use crate::paths::{slug, Paths};
use crate::results::record::{LapRecord, LapStatus, LoadParams};
use crate::results::{self, clock, LOGS_DIR};
use crate::tools::{self, Prepared};
use serverbench_model::failure::LapFailure;
use serverbench_results::env::{Env, Resumed, Skipped};
use serverbench_results::LapKey;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::SystemTime;

/// The run's fixed inputs, lent to every turn and lap.
pub(super) struct Context<'a> {
    pub(super) plan: &'a Plan,
    pub(super) opts: &'a RunOptions,
    pub(super) paths: &'a Paths,
    /// The load tool, installed.
    pub(super) tool: Prepared,
    /// The results folder.
    pub(super) dir: PathBuf,
    /// The run's certificate, for servers that serve TLS.
    pub(super) tls: Option<TlsFiles>,
    /// `run --hosts`: the run's certificate copied to the hosts.
    pub(super) hosts_tls: Option<HostsTls>,
}

/// Everything before the first lap: the hosts set up (`--hosts`), the results folder and its
/// `env.json`, the load tool installed and checked against every lap, the certificate.
pub(super) fn prepare<'a>(
    catalog: &Catalog,
    paths: &'a Paths,
    opts: &'a RunOptions,
    plan: &'a Plan,
    on_event: &mut dyn FnMut(Event),
) -> Result<Context<'a>, RunError> {
    on_event(Event::Preparing {
        what: format!(
            "recording the environment ({} servers' versions) and preparing {}",
            catalog.servers.len(),
            opts.suite.tool
        ),
    });
    if let Some(h) = &opts.hosts {
        let ids: Vec<String> = plan.servers.iter().map(|s| s.id.clone()).collect();
        on_event(Event::Preparing {
            what: format!("setting up {} server(s) on {}", ids.len(), h.server.name),
        });
        hosts::setup(h, &ids, &mut |_| {})?;
    }
    let dir = results_dir(opts, paths, catalog, &plan.skipped)?;
    let tool = tools::prepare(
        opts.suite.tool,
        &opts.serverbench_exe,
        &paths.cache.join("tools"),
        &dir.join("scripts"),
        &mut |step| on_event(Event::ToolInstall(step)),
    )?;
    plan.check_tool(&tool, &opts.suite)?;
    let (tls, hosts_tls) = certificate(opts, plan, &dir, on_event)?;
    Ok(Context {
        plan,
        opts,
        paths,
        tool,
        dir,
        tls,
        hosts_tls,
    })
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Creates (or reuses, on resume) the results folder and writes `env.json`.
fn results_dir(
    opts: &RunOptions,
    paths: &Paths,
    catalog: &Catalog,
    skipped: &[Skipped],
) -> Result<PathBuf, RunError> {
    let now = SystemTime::now();
    let dir = match &opts.resume {
        Some(d) => d.clone(),
        None => results::new_run_dir(&opts.results_parent, &opts.suite.name, now),
    };
    std::fs::create_dir_all(dir.join(LOGS_DIR)).map_err(io_err(&dir))?;
    let env_path = dir.join(results::ENV_FILE);
    let started = clock::rfc3339(now);
    let old = match opts.resume {
        Some(_) => Env::read(&env_path).ok().flatten(),
        None => None,
    };
    let value = match old {
        Some(mut old) => {
            old.resumed.push(Resumed {
                started_at: started,
                pinning: opts.pinning.clone(),
            });
            old
        }
        None => env::gather(paths, catalog, opts, skipped, &started),
    };
    value.write(&env_path)?;
    Ok(dir)
}

/// The run's certificate when a server serves TLS: made for the address servers bind (the
/// server host's with `--hosts`, where it is then copied to every host).
fn certificate(
    opts: &RunOptions,
    plan: &Plan,
    dir: &Path,
    on_event: &mut dyn FnMut(Event),
) -> Result<(Option<TlsFiles>, Option<HostsTls>), RunError> {
    if !plan.servers.iter().any(crate::process::serves_tls) {
        return Ok((None, None));
    }
    let address = opts
        .hosts
        .as_ref()
        .map_or(&opts.host, |h| &h.server.address);
    let files = crate::certs::generate(&dir.join("tls"), address)?;
    let Some(h) = &opts.hosts else {
        return Ok((Some(files), None));
    };
    let clients: Vec<&str> = h.clients.iter().map(|c| c.name.as_str()).collect();
    on_event(Event::Preparing {
        what: format!(
            "copying the run's TLS certificate to {} and {}",
            h.server.name,
            clients.join(", ")
        ),
    });
    let copies = HostsTls::copy(&h.transport, &h.server, &h.clients, &files)?;
    Ok((Some(files), Some(copies)))
}

impl Context<'_> {
    /// The key of a job's lap in `results.jsonl`.
    pub(super) fn key(&self, j: &Job) -> LapKey {
        self.plan.key(&self.opts.suite, j)
    }

    /// The recorded parameters, with the warm-up this server actually gets.
    pub(super) fn params(&self, j: &Job) -> LoadParams {
        LoadParams {
            warmup_s: estimate::warmup_s(self.plan, &self.opts.suite, j),
            ..plan::load_params(&self.opts.suite, j)
        }
    }

    /// The server CPU count of a job's profile (a core sweep), `None` for the run's pinning.
    pub(super) fn cores(&self, j: &Job) -> Option<u32> {
        self.opts.suite.profiles[j.profile].cores
    }

    /// The pool size of a job's lap: `Some` for a database scenario.
    pub(super) fn pool(&self, j: &Job) -> Option<u32> {
        plan::load_params(&self.opts.suite, j).pool
    }

    /// Ctrl-C was pressed.
    pub(super) fn cancelled(&self) -> bool {
        self.opts.cancel.load(Ordering::Relaxed)
    }

    /// A lap's record before it is measured (no figures).
    pub(super) fn record(
        &self,
        j: &Job,
        status: LapStatus,
        failure: Option<LapFailure>,
    ) -> LapRecord {
        let LapKey {
            server,
            scenario,
            profile,
            lap,
        } = self.key(j);
        LapRecord {
            suite: self.opts.suite.name.clone(),
            server,
            scenario,
            profile,
            lap,
            status,
            failure,
            tool: self.tool.tool,
            started_at: clock::rfc3339(SystemTime::now()),
            wall_s: 0.0,
            params: self.params(j),
            load: None,
            server_stats: None,
            roles: Default::default(),
            database: None,
            hosts: None,
            disturbance: None,
        }
    }

    /// A server's log of lap `lap`, in the results folder.
    pub(super) fn log_path(&self, server: &Server, lap: u32) -> PathBuf {
        let name = format!("{}.lap{lap}.log", slug(&server.id));
        self.dir.join(LOGS_DIR).join(name)
    }

    /// The server's CPUs and `WORKERS`: the run's pinning, cut to `cores` in a core sweep.
    pub(super) fn server_cpus(&self, cores: Option<u32>) -> (Vec<usize>, usize) {
        let mut cpus = self.opts.pinning.server_cpus.clone();
        let mut workers = self.opts.pinning.workers;
        if let Some(n) = cores {
            cpus.truncate(n as usize);
            workers = n as usize;
        }
        (cpus, workers)
    }

    /// Rewrites `skipped` in `env.json` (servers excluded during the run are added).
    pub(super) fn record_skipped(&self, skipped: &[Skipped]) -> Result<(), RunError> {
        let env_path = self.dir.join(results::ENV_FILE);
        if let Ok(Some(mut env)) = Env::read(&env_path) {
            env.skipped = skipped.to_vec();
            env.write(&env_path)?;
        }
        Ok(())
    }
}
