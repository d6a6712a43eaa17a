//! `serverbench verify`: start a server and check it against spec/contract.md.
//!
//! [`check_all`] runs the whole contract against addresses, then the shapes real clients send
//! ([`shapes`], [`pipeline`]); [`quick`] is a fast subset (one request per declared endpoint and
//! a 1-byte echo) for the pre-lap check of `run`, and [`verify_server`] starts a catalog server
//! on free ports, checks it and stops it.

pub mod checks;
pub mod diff;
pub mod echo;
#[cfg(test)]
mod fixture;
pub mod http;
pub mod pipeline;
pub mod shapes;

pub use diff::Diff;

use crate::catalog::{Feature, Server};
use crate::paths::{slug, Paths};
use crate::process::{self, StartOptions};
use serde::Serialize;
use std::net::SocketAddr;
use std::path::PathBuf;

/// One named check and what differed (nothing = passed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was checked, e.g. `GET /hello` or `echo 64 KiB`.
    pub name: String,
    /// The differences found; empty when it passed.
    pub diffs: Vec<Diff>,
    /// Set when the differences are a deviation the manifest declares (with its reason):
    /// shown, but not a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_deviation: Option<String>,
}

impl Check {
    /// A check with its differences.
    pub fn new(name: impl Into<String>, diffs: Vec<Diff>) -> Check {
        Check {
            name: name.into(),
            diffs,
            known_deviation: None,
        }
    }

    /// A passed check.
    pub fn pass(name: impl Into<String>) -> Check {
        Check::new(name, Vec::new())
    }

    /// True when nothing differed, or only what the manifest declares as a known deviation.
    pub fn passed(&self) -> bool {
        self.diffs.is_empty() || self.known_deviation.is_some()
    }

    /// True when differences were found but are a declared deviation.
    pub fn is_known_deviation(&self) -> bool {
        !self.diffs.is_empty() && self.known_deviation.is_some()
    }
}

/// Where a running server listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Targets {
    /// The HTTP address (`HOST:PORT`), if it serves HTTP.
    pub http: Option<SocketAddr>,
    /// The echo address (`HOST:ECHO_PORT`), if it serves echo.
    pub echo: Option<SocketAddr>,
}

impl Targets {
    /// Targets from the host and ports a server was started with.
    pub fn new(host: &str, port: Option<u16>, echo_port: Option<u16>) -> std::io::Result<Targets> {
        Ok(Targets {
            http: port.map(|p| process::resolve(host, p)).transpose()?,
            echo: echo_port.map(|p| process::resolve(host, p)).transpose()?,
        })
    }
}

/// The result of verifying one server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// Server id (empty for bare addresses).
    pub server: String,
    /// Every check, in the order run.
    pub checks: Vec<Check>,
    /// The server's log during verify, when verify started it.
    pub log_path: Option<PathBuf>,
}

impl VerifyReport {
    /// True when every check passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(Check::passed)
    }

    /// The failed checks.
    pub fn failures(&self) -> Vec<&Check> {
        self.checks.iter().filter(|c| !c.passed()).collect()
    }

    /// Failed checks as `name: what: expected X, got Y` lines (empty when passed).
    pub fn failure_lines(&self) -> Vec<String> {
        self.failures()
            .into_iter()
            .flat_map(|c| {
                c.diffs
                    .iter()
                    .map(move |d| format!("{}: {}", c.name, d.render()))
            })
            .collect()
    }
}

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

/// The whole contract for the declared features.
pub fn check_all(targets: &Targets, features: &[Feature]) -> Vec<Check> {
    let mut out = Vec::new();
    if let Some(addr) = targets.http {
        // Connection-level checks use only endpoints that passed alone, so one wrong body is
        // reported once, not again by every check that requests it.
        let mut good = Vec::new();
        for e in checks::declared(features) {
            let c = checks::check_endpoint(addr, &e, true);
            if c.passed() {
                good.push(e);
            }
            out.push(c);
        }
        out.extend(checks::check_404(addr, features));
        if let Some(e) = good.first() {
            out.push(checks::check_keep_alive(addr, e, 100));
            out.push(checks::check_pipelining(addr, &good, 16));
            out.push(checks::check_http10(addr, e));
            out.extend(real_world(addr, e, &good));
        }
    }
    if let (Some(addr), true) = (targets.echo, features.contains(&Feature::Echo)) {
        for len in [1, 64 * 1024, 1 << 20] {
            out.push(echo::check_echo(addr, len));
        }
        out.push(echo::check_concurrent(addr, 100));
    }
    out
}

/// The shapes real clients send (issue 18): trickled and split requests, HTTP/1.0 keep-alive,
/// deep pipelining on many connections, a large head, garbage, many connections at once.
pub fn real_world(addr: SocketAddr, e: &checks::Endpoint, good: &[checks::Endpoint]) -> Vec<Check> {
    vec![
        shapes::check_trickle(addr, e),
        shapes::check_split_crlf(addr, e),
        shapes::check_http10_keep_alive(addr, e),
        pipeline::check_deep(addr, &pipeline::small(good), pipeline::DEEP),
        shapes::check_big_head(addr, e),
        shapes::check_garbage(addr, e),
        shapes::check_connections(addr, e, CONNECTIONS_AT_ONCE),
    ]
}

/// Connections of the many-connections check.
pub const CONNECTIONS_AT_ONCE: usize = 200;

/// A fast subset: one request per declared endpoint and a 1-byte echo.
pub fn quick(targets: &Targets, features: &[Feature]) -> VerifyReport {
    let mut checks_run = Vec::new();
    if let Some(addr) = targets.http {
        for e in checks::declared(features) {
            checks_run.push(checks::check_endpoint(addr, &e, true));
        }
    }
    if let (Some(addr), true) = (targets.echo, features.contains(&Feature::Echo)) {
        checks_run.push(echo::check_echo(addr, 1));
    }
    VerifyReport {
        server: String::new(),
        checks: checks_run,
        log_path: None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Deviation;

    /// The names of the real-world checks, run against a port nobody listens on.
    fn real_world_names() -> Vec<String> {
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap();
        let e = checks::ENDPOINTS[0];
        let mut names: Vec<String> = real_world(addr, &e, &[e])
            .into_iter()
            .map(|c| c.name)
            .collect();
        names.push(checks::check_http10(addr, &e).name);
        names
    }

    #[test]
    fn each_deviation_covers_the_checks_it_names_and_no_other() {
        let names = real_world_names();
        let covered = |d: Deviation| -> Vec<&str> {
            names
                .iter()
                .filter(|n| d.covers(n))
                .map(String::as_str)
                .collect()
        };
        assert_eq!(
            covered(Deviation::Http10),
            vec![
                "HTTP/1.0 GET /hello with Connection: keep-alive, twice",
                "HTTP/1.0 GET /hello"
            ]
        );
        assert_eq!(
            covered(Deviation::Http10KeepAlive),
            vec!["HTTP/1.0 GET /hello with Connection: keep-alive, twice"]
        );
        let split = covered(Deviation::SplitRequestLine);
        assert_eq!(
            split[0],
            "GET /hello sent 3 bytes at a time, twice on one connection"
        );
        assert!(split[1].starts_with("16 requests pipelined"), "{split:?}");
        assert_eq!(split.len(), 2);
        assert_eq!(covered(Deviation::DeepPipelining).len(), 1);
        assert!(covered(Deviation::DeepPipelining)[0].starts_with("16 requests pipelined"));
    }
}
