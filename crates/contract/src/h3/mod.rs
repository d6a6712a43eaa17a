//! The HTTP/3 checks of spec/contract.md ("HTTP/3"): on the UDP `H3_PORT`, the QUIC handshake
//! with ALPN `h3`; every declared endpoint (the expectations of [`crate::checks`]) and the
//! 404s; 100 concurrent requests on one connection; the 1 MiB body (`/payload` on 4 streams at
//! once, and a 1 MiB `POST /upload` when declared); with `static`, the 20 files of the tree; a
//! request without `:path` answered with
//! `H3_MESSAGE_ERROR` (or a 400) and the connection still serving; on `TLS_PORT`, the
//! `Alt-Svc` header naming `H3_PORT`; and, while the harness stops the server, a GOAWAY or a
//! CONNECTION_CLOSE with `H3_NO_ERROR` ([`StopWatch`]). Every name ends with [`SUFFIX`].
//!
//! The client ([`client`]) is quinn (QUIC) with rustls on ring, the provider the engine's TLS
//! uses, and the h3 crate over it through h3-quinn: quinn's rustls 0.23 is the workspace's, so
//! the certificate trust is the one of the other TLS checks; quiche would bring BoringSSL and
//! its own TLS stack. What h3 cannot send or does not show (a malformed request, the frames of
//! the control stream) is written and read by hand on quinn's streams ([`raw`]).

pub(crate) mod client;
#[cfg(test)]
mod fixture;
pub(crate) mod raw;
#[cfg(test)]
mod tests;

use crate::checks::{compare, declared, not_found, Endpoint};
use crate::diff::Diff;
use crate::http::Dial;
use crate::tls::{TlsClient, TlsTarget};
use crate::Check;
use bytes::Bytes;
use client::{get, H3Conn, H3Error};
use serverbench_model::Feature;
use std::net::SocketAddr;
use std::time::Duration;

/// Appended to every check's name.
pub const SUFFIX: &str = " over h3";
/// Concurrent requests of the many-streams check.
pub const STREAMS: usize = 100;
/// Concurrent `/payload` requests of the 1 MiB check.
pub const PAYLOAD_STREAMS: usize = 4;
/// How long the malformed request may take to be refused.
const REFUSAL_WAIT: Duration = Duration::from_secs(5);

/// Where a server serves HTTP/3, and its `TLS_PORT` (the certificate, and `Alt-Svc`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct H3Target {
    /// `HOST:H3_PORT` (UDP).
    pub addr: SocketAddr,
    /// `HOST:TLS_PORT` and how to trust its certificate, which `H3_PORT` serves too.
    pub tls: TlsTarget,
}

/// Every HTTP/3 check for the declared features (not the [`StopWatch`]'s, which needs the
/// server to stop).
pub fn check_all(target: &H3Target, features: &[Feature]) -> Vec<Check> {
    let mut out = match client_for(target) {
        Ok(tls) => on_runtime(run(target, &tls, features)),
        Err(c) => vec![c],
    };
    out.push(check_alt_svc(target));
    suffixed(out)
}

/// The quick check before a run's HTTP/3 laps: the handshake, then one GET per endpoint.
pub fn quick(target: &H3Target, features: &[Feature]) -> Vec<Check> {
    let out = match client_for(target) {
        Ok(tls) => on_runtime(async {
            let (mut out, conn) = check_handshake(target, &tls).await;
            if let Some(conn) = conn {
                for e in declared(features) {
                    out.push(check_endpoint(&conn, e, true).await);
                }
            }
            out
        }),
        Err(c) => vec![c],
    };
    suffixed(out)
}

fn suffixed(mut checks: Vec<Check>) -> Vec<Check> {
    for c in &mut checks {
        c.name.push_str(SUFFIX);
    }
    checks
}

/// A TLS client trusting the target's certificate (its ALPN is set by the QUIC client).
fn client_for(target: &H3Target) -> Result<TlsClient, Check> {
    let v13 = Some(serverbench_model::TlsVersion::V1_3);
    TlsClient::new(&target.tls, &[b"h3"], v13).map_err(|e| {
        let d = Diff::error("TLS client", "a client trusting the certificate", &e);
        Check::new("TLS client", vec![d])
    })
}

/// Runs `checks` on a current-thread runtime of their own.
fn on_runtime(checks: impl std::future::Future<Output = Vec<Check>>) -> Vec<Check> {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r.block_on(checks),
        Err(e) => {
            let d = Diff::error("runtime", "a tokio runtime for the HTTP/3 client", &e);
            vec![Check::new("HTTP/3 client", vec![d])]
        }
    }
}

async fn run(target: &H3Target, tls: &TlsClient, features: &[Feature]) -> Vec<Check> {
    let (mut out, conn) = check_handshake(target, tls).await;
    let Some(conn) = conn else {
        return out;
    };
    let mut good = Vec::new();
    for e in declared(features) {
        let c = check_endpoint(&conn, e, true).await;
        if c.passed() {
            good.push(e);
        }
        out.push(c);
    }
    let strict = features.contains(&Feature::Routes);
    for p in ["/serverbench-unknown", "/hel"] {
        let mut c = check_endpoint(&conn, not_found(p), strict).await;
        c.name = format!("GET {p} (unknown path) -> 404");
        out.push(c);
    }
    let small = crate::pipeline::small(&good);
    let mix = if small.is_empty() {
        good.clone()
    } else {
        small
    };
    if !mix.is_empty() {
        let plan: Vec<Endpoint> = (0..STREAMS).map(|i| mix[i % mix.len()]).collect();
        let name = format!("{STREAMS} concurrent requests on one connection");
        out.push(concurrent(target, tls, &name, &plan).await);
    }
    if let Some(e) = good.iter().find(|e| e.feature == Feature::Payload) {
        let name = format!(
            "GET {} (1 MiB) on {PAYLOAD_STREAMS} streams at once",
            e.path
        );
        out.push(concurrent(target, tls, &name, &[*e; PAYLOAD_STREAMS]).await);
    }
    if features.contains(&Feature::Upload) {
        out.push(check_upload(&conn).await);
    }
    if features.contains(&Feature::Static) {
        out.push(check_static(&conn).await);
    }
    if let Some(e) = mix.first().or(declared(features).first()) {
        out.push(check_malformed(&conn, e).await);
    }
    out
}

/// Connects to `target` with a fresh endpoint.
async fn connect(target: &H3Target, tls: &TlsClient) -> Result<H3Conn, H3Error> {
    client::connect(tls, target.addr, &target.tls.server_name).await
}

/// The QUIC handshake, ALPN `h3` and HTTP/3's SETTINGS; the connection for the next checks.
async fn check_handshake(target: &H3Target, tls: &TlsClient) -> (Vec<Check>, Option<H3Conn>) {
    let name = "QUIC handshake (TLS 1.3, ALPN h3)";
    match connect(target, tls).await {
        Ok(conn) => {
            let check = Check::pass(name).with_note(conn.negotiated.clone());
            (vec![check], Some(conn))
        }
        Err(e) => {
            let what = format!("a QUIC connection to UDP {} with ALPN h3", target.addr);
            (
                vec![Check::new(name, vec![Diff::error("handshake", what, &e)])],
                None,
            )
        }
    }
}

/// One GET on `conn`, compared with `e`.
async fn check_endpoint(conn: &H3Conn, e: Endpoint, strict: bool) -> Check {
    let name = format!("GET {}", e.path);
    let diffs = match get(conn.send.clone(), &conn.base, e.path).await {
        Ok(r) => compare(&e, &r, strict),
        Err(err) => vec![Diff::error(
            "response",
            format!("{} {}", e.status, e.path),
            &err,
        )],
    };
    Check::new(name, diffs)
}

/// Every request of `plan` at once on one new connection, after one answered request (so the
/// server's stream limit is known), each answer compared.
async fn concurrent(target: &H3Target, tls: &TlsClient, name: &str, plan: &[Endpoint]) -> Check {
    let conn = match connect(target, tls).await {
        Ok(c) => c,
        Err(e) => {
            return Check::new(
                name,
                vec![Diff::error("connection", "an HTTP/3 connection", &e)],
            )
        }
    };
    if let Err(e) = get(conn.send.clone(), &conn.base, plan[0].path).await {
        let d = Diff::error("first request", "an answer before the burst", &e);
        return Check::new(name, vec![d]);
    }
    let mut set = tokio::task::JoinSet::new();
    for (i, e) in plan.iter().copied().enumerate() {
        let (send, base) = (conn.send.clone(), conn.base.clone());
        set.spawn(async move { (i, e, get(send, &base, e.path).await) });
    }
    let mut failed: Vec<(usize, Vec<Diff>)> = Vec::new();
    while let Some(joined) = set.join_next().await {
        let Ok((i, e, got)) = joined else {
            failed.push((
                usize::MAX,
                vec![Diff::new("stream", "answered", "its task failed")],
            ));
            continue;
        };
        let diffs = match got {
            Ok(r) => compare(&e, &r, true),
            Err(err) => vec![Diff::error(
                "response",
                format!("{} {}", e.status, e.path),
                &err,
            )],
        };
        if !diffs.is_empty() {
            failed.push((i, diffs));
        }
    }
    crate::http2::summarize(name, plan, failed)
}

/// `POST /upload` with a 1 MiB body: its byte count.
async fn check_upload(conn: &H3Conn) -> Check {
    let name = "POST /upload 1 MiB -> 1048576";
    let body = Bytes::from_static(crate::checks::payload());
    let post = http::Method::POST;
    let diffs = match client::request(conn.send.clone(), &conn.base, post, "/upload", Some(body))
        .await
    {
        Ok(r) if r.status == 200 && String::from_utf8_lossy(&r.body).trim() == "1048576" => vec![],
        Ok(r) => vec![Diff::new(
            "answer",
            "200 1048576",
            format!("{} {}", r.status, crate::diff::quote(&r.body)),
        )],
        Err(e) => vec![Diff::error("response", "200 1048576", &e)],
    };
    Check::new(name, diffs)
}

/// Every file of the static tree (`static`), asked at once on `conn`: status, type, length and
/// exact bytes, as over HTTP/1.1 ([`crate::static_files`]).
async fn check_static(conn: &H3Conn) -> Check {
    use crate::static_files::{plain_diffs, url, EACH_FILE};
    use crate::static_tree::FILES;
    let mut set = tokio::task::JoinSet::new();
    for (i, f) in FILES.iter().enumerate() {
        let (send, base) = (conn.send.clone(), conn.base.clone());
        set.spawn(async move { (i, get(send, &base, &url(f)).await) });
    }
    let mut answers = Vec::new();
    while let Some(Ok(a)) = set.join_next().await {
        answers.push(a);
    }
    answers.sort_by_key(|(i, _)| *i);
    let mut diffs = Vec::new();
    for (i, got) in answers {
        let f = &FILES[i];
        match got {
            Ok(r) => diffs.extend(plain_diffs(f, &r)),
            Err(e) => diffs.push(Diff::error(format!("{}: response", f.path), "200", &e)),
        }
    }
    Check::new(EACH_FILE, diffs)
}

/// A GET without `:path` on a raw stream of `conn`: a stream error `H3_MESSAGE_ERROR` or a
/// 400; then `e` asked on the same connection must be answered.
async fn check_malformed(conn: &H3Conn, e: &Endpoint) -> Check {
    use raw::{table, Ending, Field};
    let name = "request without :path -> H3_MESSAGE_ERROR or 400, then the connection serves";
    let authority = conn.base.trim_start_matches("https://");
    let frame = raw::headers_frame(&[
        Field::Static(table::METHOD_GET),
        Field::Static(table::SCHEME_HTTPS),
        Field::StaticName(table::AUTHORITY, authority),
        Field::Literal("user-agent", "serverbench-verify"),
    ]);
    let mut diffs = Vec::new();
    let want = "a reset with H3_MESSAGE_ERROR (0x10e) or a 400";
    let note = match raw::exchange(&conn.quic, &frame, REFUSAL_WAIT).await {
        Ending::Reset(raw::H3_MESSAGE_ERROR) => "the stream reset with H3_MESSAGE_ERROR".to_owned(),
        Ending::Status(400) => "answered 400".to_owned(),
        Ending::Reset(code) => {
            diffs.push(Diff::new(
                "refusal",
                want,
                format!("a reset with code 0x{code:x}"),
            ));
            String::new()
        }
        Ending::Status(s) => {
            diffs.push(Diff::new("refusal", want, format!("answered {s}")));
            String::new()
        }
        Ending::Other(why) => {
            diffs.push(Diff::new("refusal", want, why));
            String::new()
        }
    };
    match get(conn.send.clone(), &conn.base, e.path).await {
        Ok(r) => diffs.extend(crate::shapes::prefixed(
            compare(e, &r, true),
            "the next request",
        )),
        Err(err) => diffs.push(Diff::error(
            "the next request",
            format!("GET {} answered", e.path),
            &err,
        )),
    }
    let check = Check::new(name, diffs);
    match note.is_empty() {
        true => check,
        false => check.with_note(note),
    }
}

/// `GET /hello` (or the first declared endpoint) over HTTPS on `TLS_PORT`: its `Alt-Svc`
/// header offers `h3` on `H3_PORT`.
fn check_alt_svc(target: &H3Target) -> Check {
    let name = "TLS_PORT answers with Alt-Svc: h3=\":H3_PORT\"";
    let want = format!("h3=\":{}\"", target.addr.port());
    let client = match TlsClient::new(&target.tls, &[b"http/1.1"], None) {
        Ok(c) => c,
        Err(e) => return Check::new(name, vec![Diff::error("TLS client", "a client", &e)]),
    };
    let got = crate::http::get(Dial::tls(target.tls.addr, &client), "/hello");
    let r = match got {
        Ok(r) => r,
        Err(e) => {
            return Check::new(
                name,
                vec![Diff::error("GET /hello over TLS", "an answer", &e)],
            )
        }
    };
    let values: Vec<&str> = r
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("alt-svc"))
        .map(|(_, v)| v.as_str())
        .collect();
    if values.iter().any(|v| offers_h3_on(v, target.addr.port())) {
        return Check::pass(name).with_note(format!("Alt-Svc: {}", values.join(", ")));
    }
    let got = match values.is_empty() {
        true => "no Alt-Svc header".to_owned(),
        false => format!("Alt-Svc: {}", values.join(", ")),
    };
    Check::new(name, vec![Diff::new("Alt-Svc", want, got)])
}

/// True when an `Alt-Svc` value lists `h3` at an authority ending in `:port`.
fn offers_h3_on(value: &str, port: u16) -> bool {
    value.split(',').any(|alt| {
        let alt = alt.trim();
        let Some(rest) = alt.strip_prefix("h3=") else {
            return false;
        };
        let authority = rest
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches('"');
        authority.rsplit(':').next() == Some(&port.to_string())
    })
}

/// A connection opened before the harness stops the server, watching for its GOAWAY and
/// CONNECTION_CLOSE: [`StopWatch::open`] before the stop, [`StopWatch::check`] after it.
pub struct StopWatch {
    seen: std::sync::mpsc::Receiver<raw::Seen>,
    opened: Result<(), String>,
}

impl StopWatch {
    /// Connects to `target` (a thread of its own drives the connection until it ends, at most
    /// the client's 10 s idle timeout after the server goes away).
    pub fn open(target: &H3Target) -> StopWatch {
        let (tx, seen) = std::sync::mpsc::channel();
        let (ready_tx, ready) = std::sync::mpsc::channel();
        let target = target.clone();
        std::thread::spawn(move || {
            let Ok(tls) = client_for(&target) else {
                let _ = ready_tx.send(Err("no TLS client".to_owned()));
                return;
            };
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            let Ok(rt) = rt else {
                let _ = ready_tx.send(Err("no tokio runtime".to_owned()));
                return;
            };
            rt.block_on(async move {
                let name = &target.tls.server_name;
                let (_endpoint, conn, _) = match client::quic(&tls, target.addr, name).await {
                    Ok(c) => c,
                    Err(e) => return drop(ready_tx.send(Err(e.to_string()))),
                };
                let _control = match raw::open_control(&conn).await {
                    Ok(s) => s,
                    Err(e) => return drop(ready_tx.send(Err(e))),
                };
                let _ = ready_tx.send(Ok(()));
                raw::watch(conn, tx).await;
            });
        });
        let opened = ready
            .recv_timeout(client::DEADLINE)
            .unwrap_or_else(|_| Err("no connection within 15 s".to_owned()));
        StopWatch { seen, opened }
    }

    /// What the client saw, `wait` at most after the server's processes are gone: a GOAWAY,
    /// or a CONNECTION_CLOSE with `H3_NO_ERROR`, passes.
    pub fn check(self, wait: Duration) -> Check {
        let name =
            format!("GOAWAY or CONNECTION_CLOSE (H3_NO_ERROR) when the server stops{SUFFIX}");
        if let Err(e) = self.opened {
            return Check::new(
                name,
                vec![Diff::new("connection", "open before the stop", e)],
            );
        }
        let deadline = std::time::Instant::now() + wait;
        let mut last = raw::Seen::default();
        while last.close.is_none() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.seen.recv_timeout(left) {
                Ok(s) => last = s,
                Err(_) => break,
            }
        }
        judge_stop(&name, &last)
    }
}

/// Passes a GOAWAY, or a CONNECTION_CLOSE with `H3_NO_ERROR`.
fn judge_stop(name: &str, seen: &raw::Seen) -> Check {
    let close = seen
        .close
        .clone()
        .unwrap_or_else(|| "no CONNECTION_CLOSE".into());
    if let Some(id) = seen.goaway {
        return Check::pass(name).with_note(format!("GOAWAY (stream {id}), then {close}"));
    }
    if seen.app_code == Some(raw::H3_NO_ERROR) {
        return Check::pass(name).with_note(format!("no GOAWAY; {close}"));
    }
    let got = match (&seen.close, seen.app_code) {
        (None, _) => "silence: no GOAWAY and no CONNECTION_CLOSE once the server had exited".into(),
        (Some(c), Some(code)) => format!("no GOAWAY; CONNECTION_CLOSE with code 0x{code:x} ({c})"),
        (Some(c), None) => format!("no GOAWAY; {c}"),
    };
    let want = "a GOAWAY, or a CONNECTION_CLOSE with H3_NO_ERROR (0x100)";
    Check::new(name, vec![Diff::new("shutdown", want, got)])
}
