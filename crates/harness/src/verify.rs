//! `serverbench verify` of a catalog server: start it on free ports (and, when it serves TLS,
//! with a certificate generated for this verify on `TLS_PORT`), run the contract's checks
//! ([`serverbench_contract::check_all`]) against it, mark what its manifest declares as a known
//! deviation, check it is still running, stop it (an `h3` server watched by an HTTP/3 client for
//! its GOAWAY while it stops). A server of the database workloads gets
//! serverbench's private PostgreSQL for the verify ([`crate::verify_db`]).

use crate::catalog::Server;
use crate::paths::{slug, Paths};
use crate::process::{self, ServerProcess, StartOptions};
use crate::verify_db;
use serverbench_contract::h3::StopWatch;
use serverbench_contract::VerifyReport;
use serverbench_contract::{check_all, Check, Diff, Targets, TlsTarget};
use serverbench_model::Feature;
use std::path::PathBuf;
use std::time::Duration;

/// How long after the server's processes are gone the HTTP/3 client may still be told of the
/// close (its CONNECTION_CLOSE is in flight, or already read).
const H3_STOP_WAIT: Duration = Duration::from_secs(1);

/// Options of [`verify_server`].
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// `HOST` (default 127.0.0.1).
    pub host: String,
    /// CPUs to pin to (empty = none).
    pub cpus: Vec<usize>,
    /// `WORKERS` (default 1).
    pub workers: usize,
    /// Where the server's log goes (`<dir>/<lang>__<name>.verify.log`).
    pub log_dir: PathBuf,
}

/// A started server and where to check it; the certificate's folder lives as long as this.
struct Started {
    proc: ServerProcess,
    targets: Targets,
    _certs: Option<tempfile::TempDir>,
}

impl VerifyOptions {
    /// Defaults: 127.0.0.1, no pinning, 1 worker, logs in `<cache>/logs`.
    pub fn new(paths: &Paths) -> VerifyOptions {
        VerifyOptions {
            host: "127.0.0.1".into(),
            cpus: Vec::new(),
            workers: 1,
            log_dir: paths.logs_dir(),
        }
    }
}

/// Starts `server` on free ports, runs [`check_all`], checks it is still running, stops it.
pub fn verify_server(server: &Server, paths: &Paths, opts: &VerifyOptions) -> VerifyReport {
    let log_path = opts
        .log_dir
        .join(format!("{}.verify.log", slug(&server.id)));
    let mut report = VerifyReport {
        server: server.id.clone(),
        checks: Vec::new(),
        log_path: Some(log_path.clone()),
    };
    let db = match verify_db::needs_database(server).then(|| verify_db::start(paths)) {
        None => None,
        Some(Ok(db)) => Some(db),
        Some(Err(failed)) => {
            report.checks.push(failed);
            return report;
        }
    };
    let env = db.as_ref().map(|d| d.env(verify_db::VERIFY_POOL));
    let Started {
        mut proc,
        targets,
        _certs,
    } = match start(server, paths, opts, log_path, env.unwrap_or_default()) {
        Ok(s) => s,
        Err(failed) => {
            report.checks.push(failed);
            return report;
        }
    };
    report.checks = check_all(&targets, &server.manifest.implements);
    if let Some(db) = &db {
        let features = &server.manifest.implements;
        report
            .checks
            .extend(verify_db::check(targets.http, features, db));
    }
    mark_deviations(&mut report.checks, server);
    report.checks.push(match proc.try_exit() {
        None => Check::pass("still running after the checks"),
        Some(status) => Check::new(
            "still running after the checks",
            vec![Diff::new(
                "process",
                "running",
                format!("exited ({status}): {}", proc.log_tail(5)),
            )],
        ),
    });
    // HTTP/3's shutdown is seen from a connection opened before the stop.
    let watch = targets
        .h3_target()
        .filter(|_| server.implements(Feature::H3) && proc.try_exit().is_none())
        .map(|t| StopWatch::open(&t));
    proc.stop();
    if let Some(w) = watch {
        let mut stop = [w.check(H3_STOP_WAIT)];
        mark_deviations(&mut stop, server);
        report.checks.extend(stop);
    }
    if let Some(Err(e)) = db.map(serverbench_database::RunningDb::stop) {
        let d = Diff::new("PostgreSQL", "stopped", e.to_string());
        report.checks.push(Check::new("database stopped", vec![d]));
    }
    report
}

/// Starts `server` on free ports (a TLS listener with a fresh certificate when it serves TLS);
/// a failure is the failed `start` check.
fn start(
    server: &Server,
    paths: &Paths,
    opts: &VerifyOptions,
    log_path: PathBuf,
    db_env: Vec<(String, String)>,
) -> Result<Started, Check> {
    let failed = |d: Diff| Check::new("start", vec![d]);
    let (port, echo_port, tls_port) = free_ports(&opts.host, server)
        .map_err(|e| failed(Diff::error("free port", "a port", &e)))?;
    let mut start = StartOptions::new(server, port, echo_port, log_path);
    start.host = opts.host.clone();
    start.cpus = opts.cpus.clone();
    start.workers = opts.workers.max(1);
    start.extra_env.extend(db_env);
    let mut certs = None;
    if let Some(port) = tls_port {
        let cert_err = |e: &dyn std::fmt::Display| {
            failed(Diff::error("certificate", "TLS_CERT and TLS_KEY", e))
        };
        let dir = tempfile::tempdir().map_err(|e| cert_err(&e))?;
        let files = crate::certs::generate(dir.path(), &opts.host).map_err(|e| cert_err(&e))?;
        let listener = process::tls_listener(server, &opts.host, port, files)
            .map_err(|e| failed(Diff::error("free port", "a UDP port for H3_PORT", &e)))?;
        start.tls = Some(listener);
        certs = Some(dir);
    }
    let proc = process::start(server, paths, &start).map_err(|e| {
        failed(Diff::new(
            "process",
            "ports accepting connections",
            e.to_string(),
        ))
    })?;
    let http_port = server.serves_http().then_some(port);
    let address = |e: std::io::Error| failed(Diff::error("address", "an address", &e));
    let mut targets = Targets::new(&opts.host, http_port, echo_port)
        .map_err(address)?
        .with_group(proc.pgid());
    if let Some(t) = &start.tls {
        let addr = process::resolve(&opts.host, t.port).map_err(address)?;
        targets = targets.with_tls(TlsTarget::with_cert(addr, &opts.host, &t.files.cert));
        if let Some(h3) = t.h3_port {
            targets = targets.with_h3(process::resolve(&opts.host, h3).map_err(address)?);
        }
    }
    Ok(Started {
        proc,
        targets,
        _certs: certs,
    })
}

/// Marks failed checks that a deviation declared in the manifest explains.
pub(crate) fn mark_deviations(checks: &mut [Check], server: &Server) {
    for c in checks.iter_mut().filter(|c| !c.diffs.is_empty()) {
        let declared = server
            .manifest
            .deviations
            .iter()
            .find(|(d, _)| d.covers(&c.name));
        if let Some((_, reason)) = declared {
            c.known_deviation = Some(reason.clone());
        }
    }
}

/// `PORT`, and `ECHO_PORT` and `TLS_PORT` when the server serves them: three distinct ports.
fn free_ports(host: &str, server: &Server) -> std::io::Result<(u16, Option<u16>, Option<u16>)> {
    let port = process::free_port(host)?;
    let mut taken = vec![port];
    let mut another = |wanted: bool| -> std::io::Result<Option<u16>> {
        if !wanted {
            return Ok(None);
        }
        let mut p = process::free_port(host)?;
        while taken.contains(&p) {
            p = process::free_port(host)?;
        }
        taken.push(p);
        Ok(Some(p))
    };
    let echo = another(server.implements(Feature::Echo))?;
    let tls = another(process::serves_tls(server))?;
    Ok((port, echo, tls))
}
