//! serverbench-contract owns the check of spec/contract.md against a running server's
//! addresses: [`check_all`] runs the whole contract, then the shapes real clients send
//! ([`shapes`], [`pipeline`]); [`quick`] is a fast subset (one request per declared endpoint and
//! a 1-byte echo) for the pre-lap check of `run`. Every failure is a named [`Check`] with a
//! [`Diff`] of what was expected and what came. The transports: the HTTP/1.1 contract over TLS
//! ([`over_tls`], on [`tls`]) and HTTP/2 over TLS and cleartext ([`http2`]). WebSocket echo
//! (`ws-echo`) is checked on `PORT` by [`ws`], on the codec the engine shares; gRPC (`grpc`) by
//! [`grpc`], on the `h2` client with the framing and status codec of `serverbench_wire::grpc`;
//! HTTP/3 (`h3`) by [`h3`], on quinn and the h3 crate (its shutdown check, [`h3::StopWatch`],
//! runs while serverbench-harness stops the server).
//!
//! Its HTTP/1.1 client ([`http`]) is hand-written on purpose: it must see the exact bytes a
//! server sends (framing, header case, a connection left open); over TLS it sees the same bytes
//! inside rustls. HTTP/2 uses the kept `h2` crate. It must not start or stop servers
//! (serverbench-harness's `verify_server` does) nor know about results.

pub mod baseline;
pub mod checks;
pub mod compression;
pub mod database;
pub mod diff;
pub mod echo;
pub mod encoding;
#[cfg(test)]
mod fixture;
pub mod grpc;
pub mod h3;
pub mod http;
pub mod http2;
#[cfg(test)]
mod http2_fixture;
pub mod over_tls;
pub mod pipeline;
pub mod shapes;
#[cfg(test)]
mod shapes_fixture;
pub mod static_files;
pub mod static_tree;
pub mod timeouts;
pub mod tls;
#[cfg(test)]
mod tls_fixture;
pub mod upload;
pub mod ws;

pub use diff::Diff;
pub use http::Dial;
pub use tls::TlsTarget;

use serde::Serialize;
use serverbench_model::Feature;
use std::net::{SocketAddr, ToSocketAddrs};
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
    /// What the check observed, for the record (e.g. the negotiated TLS version and ALPN).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Check {
    /// A check with its differences.
    pub fn new(name: impl Into<String>, diffs: Vec<Diff>) -> Check {
        Check {
            name: name.into(),
            diffs,
            known_deviation: None,
            note: None,
        }
    }

    /// The same check with a note of what it observed.
    pub fn with_note(mut self, note: impl Into<String>) -> Check {
        self.note = Some(note.into());
        self
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Targets {
    /// The HTTP address (`HOST:PORT`), if it serves HTTP (and h2c).
    pub http: Option<SocketAddr>,
    /// The echo address (`HOST:ECHO_PORT`), if it serves echo.
    pub echo: Option<SocketAddr>,
    /// The TLS address (`HOST:TLS_PORT`) and its certificate, if it serves `tls` or `h2`.
    pub tls: Option<TlsTarget>,
    /// The HTTP/3 address (`HOST:H3_PORT`, UDP), if it serves `h3` (with `tls`'s certificate).
    pub h3: Option<SocketAddr>,
    /// The server's process group (its leader's pid), when verify started it: `upload`
    /// samples its resident memory.
    pub group: Option<u32>,
}

impl Targets {
    /// Targets from the host and ports a server was started with.
    pub fn new(host: &str, port: Option<u16>, echo_port: Option<u16>) -> std::io::Result<Targets> {
        Ok(Targets {
            http: port.map(|p| resolve(host, p)).transpose()?,
            echo: echo_port.map(|p| resolve(host, p)).transpose()?,
            tls: None,
            h3: None,
            group: None,
        })
    }

    /// The same targets with the server's process group.
    pub fn with_group(mut self, pgid: u32) -> Targets {
        self.group = Some(pgid);
        self
    }

    /// The same targets with a TLS listener.
    pub fn with_tls(mut self, tls: TlsTarget) -> Targets {
        self.tls = Some(tls);
        self
    }

    /// The same targets with an HTTP/3 listener (UDP).
    pub fn with_h3(mut self, addr: SocketAddr) -> Targets {
        self.h3 = Some(addr);
        self
    }

    /// Where HTTP/3 is served, with the certificate of `TLS_PORT`, when both are known.
    pub fn h3_target(&self) -> Option<h3::H3Target> {
        Some(h3::H3Target {
            addr: self.h3?,
            tls: self.tls.clone()?,
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

/// `host` (an IP literal, bracketed or not, or a name) and `port` as one socket address.
pub fn resolve(host: &str, port: u16) -> std::io::Result<SocketAddr> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    (bare, port).to_socket_addrs()?.next().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{host} has no address"),
        )
    })
}

/// The whole contract for the declared features: HTTP on `PORT`, echo, WebSocket echo on
/// `PORT` (`ws-echo` needs [`Targets::http`]; without it, a failed check), then the transports
/// (`tls` and `h2` need [`Targets::tls`], `h2c` [`Targets::http`]; a declared transport without
/// its address is a failed check).
pub fn check_all(targets: &Targets, features: &[Feature]) -> Vec<Check> {
    let mut out = Vec::new();
    if let (Some(addr), true) = (targets.http, serves_http1(features)) {
        // Connection-level checks use only endpoints that passed alone, so one wrong body is
        // reported once, not again by every check that requests it.
        let to = Dial::tcp(addr);
        let mut good = Vec::new();
        for e in checks::declared(features) {
            let c = checks::check_endpoint(to, &e, true);
            if c.passed() {
                good.push(e);
            }
            out.push(c);
        }
        out.extend(checks::check_404(to, features));
        if let Some(e) = good.first() {
            out.push(checks::check_keep_alive(to, e, 100));
            out.push(checks::check_pipelining(to, &good, 16));
            out.push(checks::check_http10(to, e));
            out.extend(real_world(addr, e, &good));
        }
        out.extend(check_shapes(addr, targets.group, features));
    }
    if let (Some(addr), true) = (targets.echo, features.contains(&Feature::Echo)) {
        for len in [1, 64 * 1024, 1 << 20] {
            out.push(echo::check_echo(addr, len));
        }
        out.push(echo::check_concurrent(addr, 100));
    }
    out.extend(check_websocket(targets, features, ws::check_all));
    out.extend(check_transports(targets, features));
    out.extend(check_grpc(targets, features, grpc::check_all));
    out
}

/// `checks` (all of [`grpc`], or its quick one) when `grpc` is declared: on `PORT` (h2c), and on
/// `TLS_PORT` (ALPN `h2`) when `tls` is declared too; a failed check for a missing address
/// (`PORT` may be missing when the checks are over TLS alone, as for `verify --url https://…`).
pub fn check_grpc<C: IntoIterator<Item = Check>>(
    targets: &Targets,
    features: &[Feature],
    checks: impl Fn(http2::Transport<'_>) -> C,
) -> Vec<Check> {
    if !features.contains(&Feature::Grpc) {
        return Vec::new();
    }
    let missing = |port: &str, name: &str| {
        let d = Diff::new("address", format!("{port} to check grpc on"), "none given");
        Check::new(name, vec![d])
    };
    let over_tls = features.contains(&Feature::Tls);
    let mut out: Vec<Check> = match targets.http {
        Some(addr) => checks(http2::Transport::Cleartext(addr))
            .into_iter()
            .collect(),
        // `verify --url https://…`: gRPC over TLS alone.
        None if over_tls && targets.tls.is_some() => Vec::new(),
        None => vec![missing("PORT", "grpc on PORT")],
    };
    if !over_tls {
        return out;
    }
    match &targets.tls {
        None => out.push(missing("TLS_PORT", "grpc over TLS")),
        Some(t) => match tls::TlsClient::new(t, &[b"h2"], None) {
            Ok(client) => out.extend(checks(http2::Transport::Tls(t.addr, &client))),
            Err(e) => out.push(tls_client_failed(&e, " over TLS")),
        },
    }
    out
}

/// True when the server speaks the HTTP/1.1 contract (its 404s, and over TLS with `tls`): it
/// declares something besides gRPC and the transports (a gRPC-only server's `PORT` is HTTP/2
/// alone, and its `tls` is gRPC over TLS).
pub fn serves_http1(features: &[Feature]) -> bool {
    !features.iter().all(|f| f.is_grpc() || f.is_transport())
}

/// Every `ws-echo` check on [`Targets::http`] (for a run's pre-lap check of a server its laps
/// bench on `ws-echo`).
pub fn check_ws(targets: &Targets) -> VerifyReport {
    VerifyReport {
        server: String::new(),
        checks: check_websocket(targets, &[Feature::WsEcho], ws::check_all),
        log_path: None,
    }
}

/// `checks` (all of [`ws`], or its quick one) when `ws-echo` is declared; a failed check when
/// there is no `PORT` to run them on.
fn check_websocket<C: IntoIterator<Item = Check>>(
    targets: &Targets,
    features: &[Feature],
    checks: impl FnOnce(SocketAddr) -> C,
) -> Vec<Check> {
    match (features.contains(&Feature::WsEcho), targets.http) {
        (false, _) => Vec::new(),
        (true, Some(addr)) => checks(addr).into_iter().collect(),
        (true, None) => {
            let d = Diff::new("address", "PORT to check ws-echo on", "none given");
            vec![Check::new("ws-echo on PORT", vec![d])]
        }
    }
}

/// The HTTP shapes of issue 32 a server declares (`baseline`, `upload`, `compression`,
/// `static`), each by its own rules; `group` is the server's process group, whose memory
/// `upload` samples.
pub fn check_shapes(addr: SocketAddr, group: Option<u32>, features: &[Feature]) -> Vec<Check> {
    let to = Dial::tcp(addr);
    let mut out = Vec::new();
    for f in features {
        match f {
            Feature::Baseline => out.extend(baseline::check_all(to)),
            Feature::Upload => {
                let rss = move || group.map_or(0, serverbench_machine::process::group_rss_bytes);
                let memory: Option<upload::Memory<'_>> = group.map(|_| &rss as upload::Memory<'_>);
                out.extend(upload::check_all(to, memory));
            }
            Feature::Compression => out.extend(compression::check_all(to)),
            Feature::Static => out.extend(static_files::check_all(to)),
            _ => {}
        }
    }
    out
}

/// The checks of the declared transports.
pub fn check_transports(targets: &Targets, features: &[Feature]) -> Vec<Check> {
    let mut out = Vec::new();
    let missing = |f: Feature, port: &str| {
        let d = Diff::new("address", format!("{port} to check {f} on"), "none given");
        Check::new(format!("{f} transport"), vec![d])
    };
    // A gRPC-only server's `tls` is gRPC over TLS: checked (and its missing port named) by
    // [`check_grpc`].
    let http1_tls = features.contains(&Feature::Tls) && serves_http1(features);
    let wants_tls = [http1_tls, features.contains(&Feature::H2)];
    match (&targets.tls, wants_tls) {
        (_, [false, false]) => {}
        (None, [tls, _]) => {
            let f = if tls { Feature::Tls } else { Feature::H2 };
            out.push(missing(f, "TLS_PORT"));
        }
        (Some(t), [tls, h2]) => {
            if tls {
                out.extend(over_tls::check_all(t, features));
            }
            if h2 {
                out.extend(check_h2(t, features));
            }
        }
    }
    if features.contains(&Feature::H3) {
        match targets.h3_target() {
            Some(t) => out.extend(h3::check_all(&t, features)),
            None => out.push(missing(Feature::H3, "H3_PORT and TLS_PORT")),
        }
    }
    if features.contains(&Feature::H2c) {
        match targets.http {
            Some(addr) => out.extend(http2::check_all(
                http2::Transport::Cleartext(addr),
                features,
            )),
            None => out.push(missing(Feature::H2c, "PORT")),
        }
    }
    out
}

/// HTTP/2 over TLS: a client offering exactly ALPN `h2`.
fn check_h2(t: &TlsTarget, features: &[Feature]) -> Vec<Check> {
    match tls::TlsClient::new(t, &[b"h2"], None) {
        Ok(client) => http2::check_all(http2::Transport::Tls(t.addr, &client), features),
        Err(e) => {
            let d = Diff::error("TLS client", "a client trusting the certificate", &e);
            vec![Check::new("TLS client over h2", vec![d])]
        }
    }
}

/// The shapes real clients send (issue 18): trickled and split requests, HTTP/1.0 keep-alive,
/// deep pipelining on many connections, a large head, garbage, many connections at once.
pub fn real_world(addr: SocketAddr, e: &checks::Endpoint, good: &[checks::Endpoint]) -> Vec<Check> {
    vec![
        shapes::check_trickle(addr, e),
        shapes::check_split_crlf(addr, e),
        shapes::check_http10_keep_alive(Dial::tcp(addr), e),
        pipeline::check_deep(addr, &pipeline::small(good), pipeline::DEEP),
        shapes::check_big_head(addr, e),
        shapes::check_garbage(addr, e),
        shapes::check_connections(addr, e, CONNECTIONS_AT_ONCE),
    ]
}

/// Connections of the many-connections check.
pub const CONNECTIONS_AT_ONCE: usize = 200;

/// A fast subset: one request per declared endpoint, a 1-byte echo, one WebSocket echo and one
/// gRPC `Sum`.
pub fn quick(targets: &Targets, features: &[Feature]) -> VerifyReport {
    let mut checks_run = Vec::new();
    if let Some(addr) = targets.http {
        for e in checks::declared(features) {
            checks_run.push(checks::check_endpoint(Dial::tcp(addr), &e, true));
        }
    }
    if let (Some(addr), true) = (targets.echo, features.contains(&Feature::Echo)) {
        checks_run.push(echo::check_echo(addr, 1));
    }
    checks_run.extend(check_websocket(targets, features, |a| [ws::quick(a)]));
    checks_run.extend(check_grpc(targets, features, |t| [grpc::quick(t)]));
    VerifyReport {
        server: String::new(),
        checks: checks_run,
        log_path: None,
    }
}

/// The quick check over a transport a run's laps use (`tls`, `h2`, `h2c` or `h3`): one request
/// per declared endpoint over TLS (ALPN `http/1.1`), HTTP/2 over TLS (ALPN `h2`), h2c, or
/// HTTP/3 over QUIC ([`h3::quick`]). Any other feature, or a transport without its address, is
/// a failed check.
pub fn quick_over(targets: &Targets, features: &[Feature], over: Feature) -> VerifyReport {
    let missing = |port: &str| {
        let d = Diff::new(
            "address",
            format!("{port} to check {over} on"),
            "none given",
        );
        vec![Check::new(format!("{over} transport"), vec![d])]
    };
    let checks = match (over, &targets.tls, targets.http) {
        (Feature::Tls, Some(t), _) => quick_tls(t, features),
        (Feature::H2, Some(t), _) => match tls::TlsClient::new(t, &[b"h2"], None) {
            Ok(client) => http2::quick(http2::Transport::Tls(t.addr, &client), features),
            Err(e) => vec![tls_client_failed(&e, " over h2")],
        },
        (Feature::H2c, _, Some(addr)) => http2::quick(http2::Transport::Cleartext(addr), features),
        (Feature::H3, Some(_), _) => match targets.h3_target() {
            Some(t) => h3::quick(&t, features),
            None => missing("H3_PORT"),
        },
        (Feature::Tls | Feature::H2 | Feature::H3, None, _) => missing("TLS_PORT"),
        (Feature::H2c, _, None) => missing("PORT"),
        _ => vec![Check::new(
            format!("{over} transport"),
            vec![Diff::new("transport", "tls, h2, h2c or h3", over.as_str())],
        )],
    };
    VerifyReport {
        server: String::new(),
        checks,
        log_path: None,
    }
}

fn quick_tls(t: &TlsTarget, features: &[Feature]) -> Vec<Check> {
    let client = match tls::TlsClient::new(t, &[b"http/1.1"], None) {
        Ok(c) => c,
        Err(e) => return vec![tls_client_failed(&e, over_tls::SUFFIX)],
    };
    let to = Dial::tls(t.addr, &client);
    let mut out: Vec<Check> = checks::declared(features)
        .iter()
        .map(|e| checks::check_endpoint(to, e, true))
        .collect();
    for c in &mut out {
        c.name.push_str(over_tls::SUFFIX);
    }
    out
}

fn tls_client_failed(e: &tls::TlsError, suffix: &str) -> Check {
    let d = Diff::error("TLS client", "a client trusting the certificate", e);
    Check::new(format!("TLS client{suffix}"), vec![d])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_catalog::Deviation;

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
        names.push(checks::check_http10(Dial::tcp(addr), &e).name);
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

    #[test]
    fn the_quick_check_over_h3_names_the_port_it_lacks() {
        let expected = |targets: &Targets| {
            let report = quick_over(targets, &[Feature::Hello], Feature::H3);
            let c = &report.checks[0];
            (c.name.clone(), c.diffs[0].expected.clone())
        };
        let plain = Targets::new("127.0.0.1", Some(1), None).unwrap();
        let want = |port: &str| ("h3 transport".to_string(), format!("{port} to check h3 on"));
        assert_eq!(expected(&plain), want("TLS_PORT"));
        let addr = resolve("127.0.0.1", 2).unwrap();
        let tls = plain.with_tls(TlsTarget::with_cert(addr, "127.0.0.1", "/none/cert.pem"));
        assert_eq!(expected(&tls), want("H3_PORT"));
    }
}
