//! `serverbench verify` of a catalog server: start it on free ports, run the contract's checks
//! ([`serverbench_contract::check_all`]) against it, mark what its manifest declares as a known
//! deviation, check it is still running, stop it.

use crate::catalog::{Feature, Server};
use crate::paths::{slug, Paths};
use crate::process::{self, StartOptions};
pub use serverbench_contract::VerifyReport;
use serverbench_contract::{check_all, Check, Diff, Targets};
use std::path::PathBuf;

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
    let ports = free_ports(&opts.host, server);
    let (port, echo_port) = match ports {
        Ok(p) => p,
        Err(e) => {
            report.checks.push(Check::new(
                "start",
                vec![Diff::error("free port", "a port", &e)],
            ));
            return report;
        }
    };
    let mut start = StartOptions::new(server, port, echo_port, log_path);
    start.host = opts.host.clone();
    start.cpus = opts.cpus.clone();
    start.workers = opts.workers.max(1);
    let mut proc = match process::start(server, paths, &start) {
        Ok(p) => p,
        Err(e) => {
            let d = Diff::new("process", "ports accepting connections", e.to_string());
            report.checks.push(Check::new("start", vec![d]));
            return report;
        }
    };
    let http_port = server.serves_http().then_some(port);
    let targets = match Targets::new(&opts.host, http_port, echo_port) {
        Ok(t) => t,
        Err(e) => {
            report.checks.push(Check::new(
                "start",
                vec![Diff::error("address", "an address", &e)],
            ));
            return report;
        }
    };
    report.checks = check_all(&targets, &server.manifest.implements);
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
    proc.stop();
    report
}

/// Marks failed checks that a deviation declared in the manifest explains.
fn mark_deviations(checks: &mut [Check], server: &Server) {
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

fn free_ports(host: &str, server: &Server) -> std::io::Result<(u16, Option<u16>)> {
    let port = process::free_port(host)?;
    let echo = if server.implements(Feature::Echo) {
        let mut p = process::free_port(host)?;
        while p == port {
            p = process::free_port(host)?;
        }
        Some(p)
    } else {
        None
    };
    Ok((port, echo))
}
