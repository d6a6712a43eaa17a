//! Laps over TLS, HTTP/2 or gRPC, one row per server x scenario x profile: what was negotiated
//! (version, cipher, h2 or h2c), how many handshakes resumed, what a handshake cost the server
//! and the client, the server's stream limit, and for HTTP/2 the ratio to HTTP/1.1 on the same
//! transport (h2 against HTTPS, h2c against plain HTTP; same paths, profile and server).
//!
//! The diagnostics of these laps (a server that never resumes when asked, a handshake rate
//! bound by the client, refused streams and GOAWAYs) are part of
//! [`crate::diagnostics::diagnose`]'s one pass.

use crate::stats;
use crate::warnings::{Warning, WarningKind};
use serde::Serialize;
use serverbench_model::result::{Errors, Http2Result, Latency, TlsResult};
use serverbench_model::Protocol;
use serverbench_model::TlsResume;
use serverbench_results::record::{LapRecord, LapStatus, LoadParams};

/// The TLS side of a row.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TlsFigures {
    /// What the handshakes negotiated (the first lap that says), e.g. `TLSv1.3`.
    pub version: Option<String>,
    pub cipher_suite: Option<String>,
    /// The key exchange group, e.g. `X25519`, and the ALPN protocol, e.g. `h2`, `http/1.1`.
    pub key_exchange_group: Option<String>,
    pub alpn: Option<String>,
    /// `--tls-resume` as asked (None: not asked, keep-alive or full handshakes).
    pub resume: Option<TlsResume>,
    /// Handshakes over every successful lap, and how many resumed.
    pub handshakes: u64,
    pub handshakes_resumed: u64,
    /// With a new connection per request: handshakes per second, median over the laps (None
    /// for keep-alive, where it is only connections over duration).
    pub handshakes_per_s: Option<f64>,
    /// With a new connection per request: server CPU per handshake (its request included),
    /// median over the laps.
    pub server_cpu_us_per_handshake: Option<f64>,
    /// Client CPU per handshake (the engine's), median over the laps.
    pub client_cpu_us_per_handshake: Option<f64>,
    /// Handshake latency (TCP connected to handshake done), the median of the laps' p50 and
    /// p99 over the laps that counted a handshake (None for an external tool's, which count
    /// none).
    pub handshake_p50_us: Option<f64>,
    pub handshake_p99_us: Option<f64>,
}

impl TlsFigures {
    /// Resumed handshakes over all handshakes (None without a handshake).
    pub fn resumption_rate(&self) -> Option<f64> {
        (self.handshakes > 0).then(|| self.handshakes_resumed as f64 / self.handshakes as f64)
    }
}

/// The server's `SETTINGS_MAX_CONCURRENT_STREAMS`, as far as the laps tell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamLimit {
    /// No lap saw the server's SETTINGS: laps of an external tool (h2load reports none), or no
    /// SETTINGS arrived.
    #[default]
    NotReported,
    /// The server's SETTINGS arrived without a limit.
    Unlimited,
    /// At most this many concurrent streams per connection.
    Max(u32),
}

/// The HTTP/2 side of a row. A count is None when no lap reported it (an external tool's laps
/// have no `http2` block and no errors by kind).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct H2Figures {
    /// Streams per connection asked for.
    pub streams: u32,
    pub max_concurrent_streams: StreamLimit,
    /// Over every successful lap.
    pub goaways: Option<u64>,
    pub refused_streams: Option<u64>,
    /// `errors.protocol`.
    pub protocol_errors: Option<u64>,
    /// Median req/s of HTTP/1.1 on the same transport, and this row's median over it.
    pub h1_rps: Option<f64>,
    pub ratio_to_h1: Option<f64>,
}

/// One server x scenario x profile over TLS or HTTP/2.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProtocolRow {
    pub scenario: String,
    pub profile: String,
    pub server: String,
    /// [`LoadParams::transport_label`], e.g. `h2 m16`, `https new-conn resume=tickets`.
    pub transport: String,
    pub protocol: Protocol,
    /// A new connection per request: handshakes are the load.
    pub new_conn: bool,
    /// Median req/s over the successful laps.
    pub rps: Option<f64>,
    pub tls: Option<TlsFigures>,
    pub h2: Option<H2Figures>,
    /// gRPC laps: every call by status code and failure cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grpc: Option<crate::grpc_calls::GrpcCalls>,
    /// HTTP/3 laps: beside HTTP/2 and HTTP/1.1 over TLS, 0-RTT, datagrams, losses, codes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h3: Option<crate::h3_figures::H3Figures>,
}

fn median(v: Vec<f64>) -> Option<f64> {
    stats::Stats::of(&v).map(|s| s.median)
}

/// The successful laps of each server x scenario x profile, in first-seen order.
fn groups(records: &[LapRecord]) -> Vec<Vec<&LapRecord>> {
    let mut out: Vec<Vec<&LapRecord>> = Vec::new();
    for r in records.iter().filter(|r| r.status == LapStatus::Ok) {
        let same = |g: &Vec<&LapRecord>| {
            (&g[0].server, &g[0].scenario, &g[0].profile) == (&r.server, &r.scenario, &r.profile)
        };
        match out.iter_mut().find(|g| same(g)) {
            Some(g) => g.push(r),
            None => out.push(vec![r]),
        }
    }
    out
}

fn median_rps(laps: &[&LapRecord]) -> Option<f64> {
    median(laps.iter().filter_map(|r| r.load.as_ref()?.rps).collect())
}

/// The rows of every lap over TLS, HTTP/2 or HTTP/3, in the order laps first appear.
pub fn protocol_rows(records: &[LapRecord]) -> Vec<ProtocolRow> {
    let all = groups(records);
    all.iter()
        .filter(|g| !g[0].params.transport_label().is_empty())
        .map(|g| {
            let p = &g[0].params;
            let rps = median_rps(g);
            let h2 = p.transport.protocol.is_h2().then(|| {
                let h1 = all.iter().find(|o| is_h1_partner(o[0], g[0]));
                h2_figures(g, rps, h1.and_then(|o| median_rps(o)))
            });
            ProtocolRow {
                scenario: g[0].scenario.clone(),
                profile: g[0].profile.clone(),
                server: g[0].server.clone(),
                transport: p.transport_label(),
                protocol: p.transport.protocol,
                new_conn: p.transport.new_conn,
                rps,
                tls: p.transport.tls.then(|| tls_figures(g)),
                h2,
                grpc: crate::grpc_calls::grpc_calls(g),
                h3: crate::h3_figures::h3_figures(g, rps, &all, median_rps),
            }
        })
        .collect()
}

/// HTTP/1.1 keep-alive on the transport HTTP/2 ran over (TLS for h2, plain for h2c), same
/// server, profile and paths.
fn is_h1_partner(o: &LapRecord, h2: &LapRecord) -> bool {
    let (a, b): (&LoadParams, &LoadParams) = (&o.params, &h2.params);
    o.server == h2.server
        && o.profile == h2.profile
        && a.work.paths == b.work.paths
        && a.transport.protocol == Protocol::H1
        && a.transport.tls == (b.transport.protocol == Protocol::H2)
        && !a.transport.new_conn
}

type TlsBlock<'a> = (&'a LapRecord, &'a TlsResult);

fn tls_figures(laps: &[&LapRecord]) -> TlsFigures {
    let blocks: Vec<TlsBlock> = laps
        .iter()
        .filter_map(|r| Some((*r, r.load.as_ref()?.tls.as_ref()?)))
        .collect();
    // Per handshake only with a connection per request: keep-alive laps handshake once per
    // connection, and their server CPU is the requests'.
    let server_cpu = |(r, t): &TlsBlock| {
        let cpu = r.server_stats.as_ref()?.cpu_s;
        (r.params.transport.new_conn && t.handshakes > 0).then(|| cpu * 1e6 / t.handshakes as f64)
    };
    let first =
        |f: fn(&TlsResult) -> &Option<String>| blocks.iter().find_map(|(_, t)| f(t).clone());
    // An external tool's block counts no handshake, and its latency is all zeros.
    let latency = |f: fn(&Latency) -> f64| {
        median(
            blocks
                .iter()
                .filter(|(_, t)| t.handshakes > 0)
                .map(|(_, t)| f(&t.handshake_latency_us))
                .collect(),
        )
    };
    TlsFigures {
        version: first(|t| &t.version),
        cipher_suite: first(|t| &t.cipher_suite),
        key_exchange_group: first(|t| &t.key_exchange_group),
        alpn: first(|t| &t.alpn),
        resume: laps[0].params.transport.tls_resume,
        handshakes: blocks.iter().map(|(_, t)| t.handshakes).sum(),
        handshakes_resumed: blocks.iter().map(|(_, t)| t.handshakes_resumed).sum(),
        handshakes_per_s: median(
            blocks
                .iter()
                .filter(|(r, _)| r.params.transport.new_conn)
                .map(|(_, t)| t.handshakes_per_s)
                .collect(),
        ),
        server_cpu_us_per_handshake: median(blocks.iter().filter_map(server_cpu).collect()),
        client_cpu_us_per_handshake: median(
            blocks
                .iter()
                .filter_map(|(_, t)| t.client_cpu_us_per_handshake)
                .collect(),
        ),
        handshake_p50_us: latency(|l| l.p50),
        handshake_p99_us: latency(|l| l.p99),
    }
}

/// The server's stream limit from the laps' `http2` blocks: a limit when one was seen,
/// unlimited when SETTINGS arrived without one, not reported otherwise.
fn stream_limit(blocks: &[&Http2Result]) -> StreamLimit {
    // SETTINGS always carry a window size once they arrived; without them both are None.
    let seen = blocks.iter().any(|b| b.initial_window_size.is_some());
    match blocks.iter().find_map(|b| b.max_concurrent_streams) {
        Some(m) => StreamLimit::Max(m),
        None if seen => StreamLimit::Unlimited,
        None => StreamLimit::NotReported,
    }
}

fn h2_figures(laps: &[&LapRecord], rps: Option<f64>, h1_rps: Option<f64>) -> H2Figures {
    let loads: Vec<_> = laps.iter().filter_map(|r| r.load.as_ref()).collect();
    let blocks: Vec<&Http2Result> = loads.iter().filter_map(|m| m.http2.as_ref()).collect();
    let kinds: Vec<&Errors> = loads.iter().filter_map(|m| m.errors.as_ref()).collect();
    let errors =
        |f: fn(&Errors) -> u64| (!kinds.is_empty()).then(|| kinds.iter().map(|e| f(e)).sum());
    H2Figures {
        streams: laps[0].params.transport.streams.unwrap_or(1),
        max_concurrent_streams: stream_limit(&blocks),
        goaways: (!blocks.is_empty()).then(|| blocks.iter().map(|b| b.goaways).sum()),
        refused_streams: errors(|e| e.refused_stream),
        protocol_errors: errors(|e| e.protocol),
        h1_rps,
        ratio_to_h1: match (rps, h1_rps) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        },
    }
}

fn warning(row: &ProtocolRow, kind: WarningKind, message: String) -> Warning {
    Warning {
        kind,
        scenario: row.scenario.clone(),
        profile: row.profile.clone(),
        server: Some(row.server.clone()),
        message,
    }
}

/// The diagnostics of the protocol rows: no resumption (or no 0-RTT) when asked, a
/// client-bound handshake rate, refused streams and GOAWAYs.
pub(crate) fn diagnose(rows: &[ProtocolRow], records: &[LapRecord]) -> Vec<Warning> {
    let mut out = Vec::new();
    for row in rows {
        let at = format!("{} ({}, {})", row.server, row.scenario, row.profile);
        if let Some(t) = &row.tls {
            out.extend(never_resumes(row, t, &at));
            out.extend(client_bound_handshakes(row, t, records, &at));
        }
        if let Some(h) = &row.h2 {
            out.extend(refused(row, h, &at));
        }
        if let Some(h) = &row.h3 {
            out.extend(no_early_data(row, h, &at));
        }
    }
    out
}

fn never_resumes(row: &ProtocolRow, t: &TlsFigures, at: &str) -> Option<Warning> {
    let asked = t.resume.filter(|r| *r != TlsResume::Off)?;
    if t.handshakes == 0 || t.handshakes_resumed > 0 {
        return None;
    }
    let message = format!(
        "{at}: asked to resume TLS sessions ({asked}), the server resumed none of its {} \
         handshakes, so this is its full-handshake rate: it issues no session tickets (or no \
         session ids over TLS 1.2) or does not accept them back. Enable its session cache or \
         ticket keys to measure resumption.",
        t.handshakes
    );
    Some(warning(row, WarningKind::NoResumption, message))
}

/// `--0rtt` asked and no request accepted in 0-RTT: each was sent again after the handshake.
fn no_early_data(row: &ProtocolRow, h: &crate::h3_figures::H3Figures, at: &str) -> Option<Warning> {
    let z = h.zero_rtt.filter(|z| z.attempted > 0 && z.accepted == 0)?;
    let message = format!(
        "{at}: asked to send requests in 0-RTT (--0rtt), the server accepted none of the {} sent \
         so, each sent again after the handshake: it takes no early data (or issues tickets that \
         allow none). Enable its 0-RTT to measure it.",
        z.attempted
    );
    Some(warning(row, WarningKind::NoResumption, message))
}

fn client_bound_handshakes(
    row: &ProtocolRow,
    t: &TlsFigures,
    records: &[LapRecord],
    at: &str,
) -> Option<Warning> {
    let laps: Vec<&LapRecord> = records
        .iter()
        .filter(|r| r.status == LapStatus::Ok && r.params.transport.new_conn)
        .filter(|r| {
            (&r.server, &r.scenario, &r.profile) == (&row.server, &row.scenario, &row.profile)
        })
        .collect();
    let saturated = laps
        .iter()
        .filter(|r| r.load.as_ref().and_then(|m| m.client_saturated) == Some(true))
        .count();
    if laps.is_empty() || saturated * 2 <= laps.len() {
        return None;
    }
    let cost = |v: Option<f64>| v.map_or("?".to_owned(), |v| format!("{v:.0}"));
    let message = format!(
        "{at}: the handshake rate is bound by the client, which used all its CPUs in {saturated} \
         of {} laps (client {} µs per handshake, server {} µs): the server may handshake faster \
         than this. Give the client more CPUs (--client-cpus) or the server fewer.",
        laps.len(),
        cost(t.client_cpu_us_per_handshake),
        cost(t.server_cpu_us_per_handshake),
    );
    Some(warning(row, WarningKind::HandshakeClientBound, message))
}

fn refused(row: &ProtocolRow, h: &H2Figures, at: &str) -> Option<Warning> {
    let (refused, errors) = (
        h.refused_streams.unwrap_or(0),
        h.protocol_errors.unwrap_or(0),
    );
    if refused + h.goaways.unwrap_or(0) + errors == 0 {
        return None;
    }
    let limit = match h.max_concurrent_streams {
        StreamLimit::Max(m) => format!("it allows {m} concurrent streams"),
        StreamLimit::Unlimited => "it sets no SETTINGS_MAX_CONCURRENT_STREAMS".to_owned(),
        StreamLimit::NotReported => "its stream limit was not reported".to_owned(),
    };
    let goaways = h
        .goaways
        .map_or("an unreported number of".to_owned(), |g| g.to_string());
    let message = format!(
        "{at}: over {} with {} per connection the server refused {refused} streams \
         (REFUSED_STREAM), sent {goaways} GOAWAYs and caused {errors} HTTP/2 protocol errors; \
         {limit}. Refused streams are retried requests the figure does not count, and each \
         GOAWAY costs a new connection: ask for fewer streams than its limit, or raise the \
         limit.",
        row.protocol,
        if h.streams == 1 {
            "1 stream".to_owned()
        } else {
            format!("{} streams", h.streams)
        },
    );
    Some(warning(row, WarningKind::H2Refused, message))
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
