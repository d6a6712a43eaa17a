//! `run --hosts`: the server on the server host, started over ssh with its `serve` (pinned,
//! bound to the host's address, its log streamed back into the lap's log), sampled there by
//! `serverbench hosts sample`, and the load from the client hosts, released together and merged
//! exactly (serverbench-hosts). Every remote process lives in a session that stops it by its
//! process group when the lap ends, on Ctrl-C (the run returns and drops it) and when the ssh
//! session drops. Over TLS, the run's certificate is on the hosts first ([`HostsTls`]).

use super::errors::HostsError;
use super::hosts_tls::HostsTls;
use crate::catalog::Server;
use crate::certs::TlsFiles;
use crate::clients::{ClientHosts, HostsLoad};
use crate::results::env::HostsEnv;
use crate::results::record::{ClientLap, HostsLap, LoadParams, Measurement, ServerStats};
use crate::tools::Target;
use serverbench_hosts::distributed::{self, ClientJob};
use serverbench_hosts::{Host, ServeReady, Session, SessionLine, Transport};
use serverbench_hosts::{SAMPLER_ARMED, SAMPLER_SAMPLING, SAMPLER_START, SERVE_READY_PREFIX};
use serverbench_model::LoadSpec;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::Duration;

/// How long a remote serve may take on top of the manifest's ready timeout (ssh, login shell).
const START_SLACK: Duration = Duration::from_secs(30);
/// How long a remote session may take to stop (serve's own stop takes up to 6 s).
const STOP_GRACE: Duration = Duration::from_secs(12);
/// How long the client hosts may take to connect (before their warm-up), as `load --hosts`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the sampler may take to answer.
const SAMPLER_TIMEOUT: Duration = Duration::from_secs(15);

/// The machines of a `run --hosts`.
#[derive(Debug)]
pub struct HostsRun {
    /// The ssh transport (one control socket per host).
    pub transport: Transport,
    /// Where the servers run.
    pub server: Host,
    /// Where the load comes from.
    pub clients: Vec<Host>,
    /// The catalog root as seen on the server host.
    pub root_there: PathBuf,
    /// Where the database of database laps runs (`--db-host`; by default the server host).
    pub database: Host,
    /// The catalog root as seen on the database host (its cache holds the cluster).
    pub root_on_database: PathBuf,
    /// What env.json records about them.
    pub env: HostsEnv,
}

/// How long `serverbench setup` may take on the server host (it compiles servers).
const SETUP_TIMEOUT: Duration = Duration::from_secs(3 * 3600);

/// Runs `serverbench setup IDS` on the server host (idempotent, cached there); its output is
/// passed to `line` as it comes.
pub fn setup(h: &HostsRun, ids: &[String], line: &mut dyn FnMut(String)) -> Result<(), HostsError> {
    let host = &h.server;
    let mut argv = vec![host.binary.to_string_lossy().into_owned(), "setup".into()];
    argv.extend(ids.iter().cloned());
    argv.extend(["--root".into(), h.root_there.to_string_lossy().into_owned()]);
    let (tx, rx) = mpsc::channel();
    let mut session = h.transport.spawn(host, 0, &argv, tx)?;
    let deadline = std::time::Instant::now() + SETUP_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok((_, SessionLine::Text(l))) => line(l),
            Ok((_, SessionLine::Closed)) => break,
            Err(_) => {
                session.stop(STOP_GRACE);
                return Err(HostsError::SetupTimeout {
                    host: host.name.clone(),
                    after: SETUP_TIMEOUT,
                });
            }
        }
    }
    match session.wait_for(STOP_GRACE) {
        Some(s) if s.success() => Ok(()),
        status => Err(session.failure(status, "during `serverbench setup`").into()),
    }
}

/// A server running on the server host.
pub struct RemoteServer {
    session: Session,
    host: String,
    closed: Arc<AtomicBool>,
    log_path: PathBuf,
    /// What serve announced.
    pub ready: ServeReady,
}

impl std::fmt::Debug for RemoteServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteServer")
            .field("host", &self.host)
            .field("ready", &self.ready)
            .finish()
    }
}

/// `serverbench serve` of `server` on the server host: bound to its address, pinned, serving
/// TLS (when `tls` is given) with the run's certificate and key copied there.
pub(super) fn serve_argv(
    h: &HostsRun,
    server: &Server,
    workers: usize,
    cpus: &[usize],
    tls: Option<&TlsFiles>,
) -> Vec<String> {
    let host = &h.server;
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let mut argv = vec![path(&host.binary), "serve".into()];
    argv.extend([server.id.clone(), "--host".into(), host.address.clone()]);
    argv.extend(["--root".into(), path(&h.root_there)]);
    argv.extend([
        "--ready-line".into(),
        "--workers".into(),
        workers.to_string(),
    ]);
    if !cpus.is_empty() {
        let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
        argv.extend(["--cpus".into(), list.join(",")]);
    }
    if let Some(t) = tls {
        argv.extend(["--tls-cert".into(), path(&t.cert)]);
        argv.extend(["--tls-key".into(), path(&t.key)]);
    }
    argv
}

impl RemoteServer {
    /// Starts `server` there with `workers` and `cpus`, over TLS too when `tls` is given (for a
    /// server that serves it) and with `env` (the database's variables, handed to serve on its
    /// stdin: never on a command line); its output goes to `log_path`.
    pub fn start(
        h: &HostsRun,
        server: &Server,
        (workers, cpus): (usize, &[usize]),
        tls: Option<&HostsTls>,
        env: &[(String, String)],
        log_path: &Path,
    ) -> Result<(RemoteServer, Target), HostsError> {
        let host = &h.server;
        let mut argv = serve_argv(h, server, workers, cpus, tls.map(|t| &t.server));
        if !env.is_empty() {
            argv.push("--env-stdin".into());
        }
        let log = std::fs::File::create(log_path).map_err(|source| HostsError::Log {
            path: log_path.to_path_buf(),
            source,
        })?;
        let (tx, rx) = mpsc::channel();
        let mut session = h.transport.spawn(host, 0, &argv, tx)?;
        if !env.is_empty() {
            let lines = env.iter().map(|(k, v)| format!("{k}={v}"));
            lines
                .chain(std::iter::once(String::new()))
                .try_for_each(|l| session.send_line(&l))?;
        }
        let closed = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel();
        let flag = Arc::clone(&closed);
        std::thread::spawn(move || copy_log(rx, log, ready_tx, &flag));
        let timeout = Duration::from_secs(server.manifest.ready_timeout_s) + START_SLACK;
        let tail = |n| serverbench_catalog::logs::log_tail(log_path, n);
        let ready = match ready_rx.recv_timeout(timeout) {
            Ok(Some(r)) => r,
            Ok(None) => {
                let status = session.wait_for(STOP_GRACE);
                let source = session.failure(status, &format!("while starting {}", server.id));
                return Err(HostsError::StartFailed {
                    source,
                    output: tail(20),
                });
            }
            Err(_) => {
                session.stop(STOP_GRACE);
                return Err(HostsError::NotReady {
                    host: host.name.clone(),
                    server: server.id.clone(),
                    after: timeout,
                    output: tail(20),
                });
            }
        };
        // The certificate as trusted from here (the quick check); each client host trusts its
        // own copy (see `client_jobs`).
        let ca_file = tls.map(|t| t.local_cert.clone());
        let target = Target {
            host: host.address.clone(),
            port: ready.port,
            echo_port: ready.echo_port,
            tls_port: ca_file.as_ref().and(ready.tls_port),
            h3_port: ca_file.as_ref().and(ready.h3_port),
            ca_file,
        };
        let remote = RemoteServer {
            session,
            host: host.name.clone(),
            closed,
            log_path: log_path.to_path_buf(),
            ready,
        };
        Ok((remote, target))
    }

    /// How it ended, if it has (the server, its serve, or the ssh session).
    pub fn exited(&mut self) -> Option<String> {
        if !self.closed.load(Ordering::SeqCst) && self.session.try_status().is_none() {
            return None;
        }
        let status = self.session.wait_for(STOP_GRACE);
        Some(self.session.failure(status, "during the lap").to_string())
    }

    /// The last lines of its output.
    pub fn log_tail(&self, lines: usize) -> String {
        serverbench_catalog::logs::log_tail(&self.log_path, lines)
    }

    /// Stops it: the session's stdin closes, the remote group gets SIGTERM (serve stops its
    /// server group), then SIGKILL after a grace period.
    pub fn stop(&mut self) {
        self.session.stop(STOP_GRACE);
    }
}

/// Copies a remote serve's output into its log, passing on the ready announcement (`None`
/// when the output ends first).
fn copy_log(
    rx: Receiver<(usize, SessionLine)>,
    mut log: std::fs::File,
    ready: mpsc::Sender<Option<ServeReady>>,
    closed: &AtomicBool,
) {
    let mut announced = false;
    for (_, line) in rx {
        match line {
            SessionLine::Text(l) => {
                if let Some(json) = l.strip_prefix(SERVE_READY_PREFIX) {
                    announced = true;
                    let _ = ready.send(serde_json::from_str(json).ok());
                    continue;
                }
                let _ = writeln!(log, "{l}");
            }
            SessionLine::Closed => break,
        }
    }
    closed.store(true, Ordering::SeqCst);
    if !announced {
        let _ = ready.send(None);
    }
}

/// `serverbench hosts sample` on the server host (or the database host), armed before the load
/// and started when the client hosts are released.
pub struct RemoteSampler {
    session: Session,
    rx: Receiver<(usize, SessionLine)>,
}

impl RemoteSampler {
    /// Arms a sampler of `pid`'s process tree on `host` (one of `h`'s).
    pub fn arm(h: &HostsRun, host: &Host, pid: u32) -> Result<RemoteSampler, HostsError> {
        let argv = [
            host.binary.to_string_lossy().into_owned(),
            "hosts".into(),
            "sample".into(),
            "--pid".into(),
            pid.to_string(),
        ];
        let (tx, rx) = mpsc::channel();
        let session = h.transport.spawn(host, 0, &argv, tx)?;
        let mut s = RemoteSampler { session, rx };
        s.expect(SAMPLER_ARMED)?;
        Ok(s)
    }

    /// Starts sampling.
    pub fn start(&mut self) -> Result<(), HostsError> {
        self.session.send_line(SAMPLER_START)?;
        self.expect(SAMPLER_SAMPLING)
    }

    /// Stops sampling and returns the figures.
    pub fn finish(mut self, requests: Option<u64>) -> Result<ServerStats, HostsError> {
        let stop = requests.map_or("stop".to_string(), |n| format!("stop {n}"));
        self.session.send_line(&stop)?;
        let line = self.next()?;
        self.session.stop(SAMPLER_TIMEOUT);
        serde_json::from_str(&line).map_err(|e| HostsError::SamplerSaid {
            host: self.session.host.clone(),
            line,
            want: format!("its figures as JSON ({e})"),
        })
    }

    fn next(&mut self) -> Result<String, HostsError> {
        match self.rx.recv_timeout(SAMPLER_TIMEOUT) {
            Ok((_, SessionLine::Text(l))) => Ok(l),
            Ok((_, SessionLine::Closed)) => {
                let status = self.session.wait_for(SAMPLER_TIMEOUT);
                Err(self.session.failure(status, "while sampling").into())
            }
            Err(_) => Err(HostsError::SamplerTimeout {
                host: self.session.host.clone(),
                after: SAMPLER_TIMEOUT,
            }),
        }
    }

    fn expect(&mut self, want: &str) -> Result<(), HostsError> {
        let line = self.next()?;
        if line.trim() == want {
            return Ok(());
        }
        Err(HostsError::SamplerSaid {
            host: self.session.host.clone(),
            line,
            want: format!("`{want}`"),
        })
    }
}

/// Each client host's `serverbench load` of `params` against `target`: its share of the
/// connections and of `-R`, its inventory CPUs, a warm-up of `params.warmup_s` before the
/// barrier, and over TLS its own copy of the run's certificate to trust (never `-k`).
pub fn client_jobs(
    h: &HostsRun,
    params: &LoadParams,
    target: &Target,
    tls: Option<&HostsTls>,
) -> Result<Vec<ClientJob>, HostsError> {
    let (spec, copies) = client_spec(h, params, target, tls)?;
    Ok(distributed::jobs(&spec, &h.clients, &copies))
}

/// The load of `params` against `target` as the client hosts take it (a warm-up of
/// `params.warmup_s` before their barrier), before it is split between them
/// ([`distributed::jobs`]), and over TLS each host's own copy of the run's certificate (in the
/// order of `h.clients`).
pub fn client_spec(
    h: &HostsRun,
    params: &LoadParams,
    target: &Target,
    tls: Option<&HostsTls>,
) -> Result<(LoadSpec, Vec<PathBuf>), HostsError> {
    let copies: Vec<PathBuf> = match tls {
        Some(t) if params.transport.tls => t.clients.clone(),
        _ => Vec::new(),
    };
    if params.transport.tls {
        if let Some(host) = h.clients.get(copies.len()) {
            return Err(HostsError::NoCertificate {
                host: host.name.clone(),
            });
        }
    }
    // Over TLS every host trusts its own copy (set by `jobs`); the controller's path only
    // stands in for it here.
    let target = Target {
        ca_file: copies.first().cloned(),
        ..target.clone()
    };
    let mut spec = crate::tools::serverbench::spec(params, &target, &[]).map_err(|source| {
        HostsError::Load {
            host: h.clients.first().map_or(String::new(), |c| c.name.clone()),
            source,
        }
    })?;
    spec.warmup = Duration::from_secs_f64(params.warmup_s);
    Ok((spec, copies))
}

impl HostsRun {
    /// The client hosts, each trusting its own copy in `cacerts` over TLS (from
    /// [`client_spec`]).
    pub fn clients<'a>(&'a self, cacerts: &'a [PathBuf]) -> ClientHosts<'a> {
        ClientHosts {
            transport: &self.transport,
            hosts: &self.clients,
            cacerts,
            connect: CONNECT_TIMEOUT,
        }
    }
}

/// What a lap records about its hosts.
pub fn lap_record(h: &HostsRun, load: &HostsLoad) -> HostsLap {
    let (skew, hosts) = match &load.outcome {
        Ok(d) => (Some(d.start_skew_ms), &d.hosts),
        Err(f) => (None, &f.completed),
    };
    let first = hosts
        .iter()
        .filter_map(|r| r.result.measure_start_unix_s)
        .reduce(f64::min);
    HostsLap {
        server_host: h.server.name.clone(),
        start_skew_ms: skew,
        controller_cpu_s: load.controller_cpu_s,
        clients: hosts
            .iter()
            .map(|r| ClientLap {
                host: r.host.clone(),
                connections: Some(r.result.connections),
                start_offset_ms: r
                    .result
                    .measure_start_unix_s
                    .zip(first)
                    .map(|(t, t0)| (t - t0) * 1e3),
                load: Measurement::from(&r.result),
            })
            .collect(),
    }
}

#[path = "hosts_db.rs"]
pub mod db;

#[cfg(test)]
#[path = "hosts_tests.rs"]
mod tests;
