//! What connections, TLS and HTTP/2 did, merged across client hosts: the negotiated names are
//! the first host's (the first that completed a handshake), marked `mixed` when another host,
//! or one host's own handshakes, negotiated something else; handshakes, connects, GOAWAYs and
//! errors by cause add up; rates are over the merged duration; the connection mode and the
//! server's HTTP/2 settings are the same from every host; WebSocket upgrades, messages sent,
//! close codes, failures by cause and upgrades unanswered at the end add up, and so do request and response bodies.

use serverbench_model::result::{
    BodyResult, Http2Result, Latency, LoadResult, TlsResult, WsResult,
};
use std::collections::BTreeMap;

/// Merges the connections, TLS and HTTP/2 parts of `rs` into `m`, whose counters, duration and
/// client CPU are already merged. `connect_latency` is read from the summed connect
/// histograms; the caller sets the TLS handshake latency from the summed handshake ones.
pub(super) fn merge_into(m: &mut LoadResult, rs: &[&LoadResult], connect_latency: Option<Latency>) {
    let secs = m.duration_s.max(1e-9);
    m.connection_mode = rs[0].connection_mode.clone();
    m.connects = rs.iter().map(|r| r.connects).sum::<Option<u64>>();
    m.connects_per_s = m.connects.map(|n| n as f64 / secs);
    m.connect_latency_us = connect_latency;
    let tls: Vec<&TlsResult> = rs.iter().filter_map(|r| r.tls.as_ref()).collect();
    m.tls = (!tls.is_empty()).then(|| merge_tls(&tls, secs, m.client_cpu_s));
    let h2: Vec<&Http2Result> = rs.iter().filter_map(|r| r.http2.as_ref()).collect();
    m.http2 = (!h2.is_empty()).then(|| merge_http2(&h2));
    let ws: Vec<&WsResult> = rs.iter().filter_map(|r| r.ws.as_ref()).collect();
    m.ws = (!ws.is_empty()).then(|| merge_ws(&ws, secs));
    let bodies: Vec<&BodyResult> = rs.iter().filter_map(|r| r.bodies.as_ref()).collect();
    m.bodies = (!bodies.is_empty()).then(|| BodyResult::sum(&bodies));
}

/// The hosts' WebSocket blocks as one; `upgrade_latency_us` is left for the caller.
fn merge_ws(ws: &[&WsResult], secs: f64) -> WsResult {
    let upgrades = ws.iter().map(|w| w.upgrades).sum::<u64>();
    WsResult {
        message_kind: ws[0].message_kind.clone(),
        message_size: ws[0].message_size,
        reconnect_every: ws[0].reconnect_every,
        messages_sent: ws.iter().map(|w| w.messages_sent).sum(),
        upgrades,
        upgrades_per_s: upgrades as f64 / secs,
        upgrade_latency_us: Latency::default(),
        upgrade_failures: add_counts(ws.iter().map(|w| &w.upgrade_failures)),
        close_codes: add_counts(ws.iter().map(|w| &w.close_codes)),
        protocol_errors: add_counts(ws.iter().map(|w| &w.protocol_errors)),
        upgrades_unanswered: ws.iter().map(|w| w.upgrades_unanswered).sum(),
    }
}

/// Sums maps of counts by name (TLS errors by cause, HTTP/2 errors by code).
fn add_counts<'a>(maps: impl Iterator<Item = &'a BTreeMap<String, u64>>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (k, n) in maps.flatten() {
        *out.entry(k.clone()).or_insert(0) += n;
    }
    out
}

type Names = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

fn names(t: &TlsResult) -> Names {
    (
        t.version.clone(),
        t.cipher_suite.clone(),
        t.key_exchange_group.clone(),
        t.alpn.clone(),
    )
}

/// The hosts' TLS blocks as one; `handshake_latency_us` is left for the caller.
fn merge_tls(ts: &[&TlsResult], secs: f64, client_cpu_s: f64) -> TlsResult {
    let first = ts.iter().find(|t| t.version.is_some()).unwrap_or(&ts[0]);
    let mixed = ts
        .iter()
        .any(|t| t.mixed || (t.version.is_some() && names(t) != names(first)));
    let sum = |f: fn(&TlsResult) -> u64| ts.iter().map(|t| f(t)).sum::<u64>();
    let handshakes = sum(|t| t.handshakes);
    let per_handshake = ts.iter().any(|t| t.client_cpu_us_per_handshake.is_some());
    let (version, cipher_suite, key_exchange_group, alpn) = names(first);
    TlsResult {
        version,
        cipher_suite,
        key_exchange_group,
        alpn,
        mixed,
        resume: first.resume.clone(),
        handshakes,
        handshakes_full: sum(|t| t.handshakes_full),
        handshakes_resumed: sum(|t| t.handshakes_resumed),
        handshakes_per_s: handshakes as f64 / secs,
        handshake_latency_us: Latency::default(),
        client_cpu_us_per_handshake: (per_handshake && handshakes > 0)
            .then(|| client_cpu_s * 1e6 / handshakes as f64),
        errors: add_counts(ts.iter().map(|t| &t.errors)),
    }
}

fn merge_http2(hs: &[&Http2Result]) -> Http2Result {
    Http2Result {
        protocol: hs[0].protocol.clone(),
        streams: hs[0].streams,
        max_concurrent_streams: hs.iter().find_map(|h| h.max_concurrent_streams),
        initial_window_size: hs.iter().find_map(|h| h.initial_window_size),
        max_frame_size: hs.iter().find_map(|h| h.max_frame_size),
        goaways: hs.iter().map(|h| h.goaways).sum(),
        errors: add_counts(hs.iter().map(|h| &h.errors)),
    }
}
