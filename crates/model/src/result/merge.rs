//! The exact merge of each protocol's block, and of TLS (a layer under any of them): what
//! threads, laps and client hosts (`--hosts`) use to make one result of several.
//!
//! Counts add up; maps of counts by cause or code add up; latencies are read from the sum of
//! the parts' HdrHistograms (never averaged); rates, means and Mbps are recomputed from the
//! merged counts over the merged duration; what the server said once (HTTP/2 SETTINGS) or what
//! the load was given (message size, streams) is the first part's that has it.

use super::{
    BodyResult, GrpcResult, Histograms, Http1Result, Http2Result, Http3Result, Latency, LoadResult,
    MixEntryResult, ProtocolResult, TcpPingPongResult, TcpStreamResult, Throughput, TlsResult,
    WsResult,
};
use crate::histo::{self, latency_of, new_histogram, HistogramError};
use crate::Workload;
use std::collections::BTreeMap;

/// One part to merge: its protocol block and its raw histograms (which carry the WebSocket
/// upgrade latencies and each `--mix` entry's).
#[derive(Debug, Clone, Copy)]
pub struct ProtocolPart<'a> {
    pub protocol: &'a ProtocolResult,
    pub histograms: Option<&'a Histograms>,
}

impl<'a> From<&'a LoadResult> for ProtocolPart<'a> {
    fn from(r: &'a LoadResult) -> Self {
        ProtocolPart {
            protocol: &r.protocol,
            histograms: r.histograms.as_ref(),
        }
    }
}

/// Why parts cannot be merged; [`MergeError::part`] says which (by index).
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A part ran another workload than the first.
    #[error("its result ran workload {found}, the first ran {first}")]
    Workload {
        part: usize,
        first: Workload,
        found: Workload,
    },
    /// A part's `--mix` entries (or their histograms) are not the first's.
    #[error("its result has other --mix entries than the first")]
    Mix { part: usize },
    /// A part's histogram does not decode.
    #[error("{source}")]
    Histogram { part: usize, source: HistogramError },
}

impl MergeError {
    /// The index of the part at fault.
    pub fn part(&self) -> usize {
        match self {
            MergeError::Workload { part, .. }
            | MergeError::Mix { part }
            | MergeError::Histogram { part, .. } => *part,
        }
    }
}

impl ProtocolResult {
    /// The parts' blocks as one. `merged` holds the common figures already merged (duration,
    /// connections, bytes), which rates and Mbps are recomputed from; the merged upgrade and
    /// `--mix` histograms are written into `histograms`.
    pub fn merge(
        parts: &[ProtocolPart<'_>],
        merged: &LoadResult,
        histograms: &mut Histograms,
    ) -> Result<ProtocolResult, MergeError> {
        let Some(first) = parts.first() else {
            return Ok(merged.protocol.clone());
        };
        let first_w = first.protocol.workload();
        if let Some((part, p)) =
            (parts.iter().enumerate()).find(|(_, p)| p.protocol.workload() != first_w)
        {
            let found = p.protocol.workload();
            return Err(MergeError::Workload {
                part,
                first: first_w,
                found,
            });
        }
        let throughput = || {
            let (secs, c) = (merged.duration_s, merged.connections);
            Throughput::of(merged.bytes_read, merged.bytes_written, secs, c)
        };
        let secs = merged.duration_s.max(1e-9);
        Ok(match first.protocol {
            ProtocolResult::Http1(h) => {
                let hs: Vec<&Http1Result> = each(parts, |p| match p {
                    ProtocolResult::Http1(h) => Some(h),
                    _ => None,
                });
                let bodies: Vec<&BodyResult> =
                    hs.iter().filter_map(|h| h.bodies.as_ref()).collect();
                ProtocolResult::Http1(Http1Result {
                    connection_mode: h.connection_mode,
                    bodies: (!bodies.is_empty()).then(|| BodyResult::sum(&bodies)),
                    mix: merge_mix(parts, &h.mix, histograms)?,
                })
            }
            ProtocolResult::Http2(h) => {
                let hs: Vec<&Http2Result> = each(parts, |p| match p {
                    ProtocolResult::Http2(h) => Some(h),
                    _ => None,
                });
                ProtocolResult::Http2(merge_http2(h, &hs, merge_mix(parts, &h.mix, histograms)?))
            }
            ProtocolResult::WebSocket(_) => {
                let ws: Vec<&WsResult> = each(parts, |p| match p {
                    ProtocolResult::WebSocket(w) => Some(w),
                    _ => None,
                });
                let texts = parts
                    .iter()
                    .map(|p| p.histograms.and_then(|h| h.upgrade_latency_us.as_deref()));
                let upgrade = sum_encoded(texts)?;
                histograms.upgrade_latency_us = Some(histo::encode(&upgrade));
                let mut w = merge_ws(&ws, secs, latency_of(&upgrade));
                w.throughput = throughput();
                ProtocolResult::WebSocket(w)
            }
            ProtocolResult::TcpStream(_) => ProtocolResult::TcpStream(TcpStreamResult {
                throughput: throughput(),
                bytes_in_flight: (parts.iter())
                    .filter_map(|p| match p.protocol {
                        ProtocolResult::TcpStream(t) => Some(t.bytes_in_flight),
                        _ => None,
                    })
                    .sum(),
            }),
            ProtocolResult::TcpPingPong(_) => ProtocolResult::TcpPingPong(TcpPingPongResult {
                throughput: throughput(),
            }),
            ProtocolResult::Grpc(_) => {
                let gs: Vec<&GrpcResult> = each(parts, |p| match p {
                    ProtocolResult::Grpc(g) => Some(g),
                    _ => None,
                });
                let mut g = GrpcResult::merge(&gs);
                if let Some(stream) = g.stream.as_mut() {
                    let texts = parts
                        .iter()
                        .map(|p| p.histograms.and_then(|h| h.message_latency_us.as_deref()));
                    let messages = sum_encoded(texts)?;
                    histograms.message_latency_us = Some(histo::encode(&messages));
                    stream.message_latency_us = latency_of(&messages);
                    stream.messages_per_s = g.messages_received as f64 / secs;
                }
                ProtocolResult::Grpc(g)
            }
            ProtocolResult::Http3(h) => {
                let hs: Vec<&Http3Result> = each(parts, |p| match p {
                    ProtocolResult::Http3(h) => Some(h),
                    _ => None,
                });
                ProtocolResult::Http3(Http3Result::merge(
                    &hs,
                    merge_mix(parts, &h.mix, histograms)?,
                ))
            }
        })
    }
}

/// Each part's block of the first's variant.
fn each<'a, T>(
    parts: &[ProtocolPart<'a>],
    f: fn(&'a ProtocolResult) -> Option<&'a T>,
) -> Vec<&'a T> {
    parts.iter().filter_map(|p| f(p.protocol)).collect()
}

/// The sum of encoded histograms (a part without one adds nothing).
fn sum_encoded<'a>(
    texts: impl Iterator<Item = Option<&'a str>>,
) -> Result<hdrhistogram::Histogram<u64>, MergeError> {
    let mut acc = new_histogram();
    for (part, text) in texts.enumerate() {
        if let Some(text) = text {
            histo::add_encoded(&mut acc, text)
                .map_err(|source| MergeError::Histogram { part, source })?;
        }
    }
    Ok(acc)
}

/// `--mix`: each entry's requests and errors add up, its latency read from the sum of the
/// parts' histograms for it; the merged histograms go into `histograms.mix_latency_us`.
fn merge_mix(
    parts: &[ProtocolPart<'_>],
    first: &[MixEntryResult],
    histograms: &mut Histograms,
) -> Result<Vec<MixEntryResult>, MergeError> {
    let mut entries = first.to_vec();
    let mut hists: Vec<_> = first.iter().map(|_| new_histogram()).collect();
    for e in &mut entries {
        e.requests = 0;
        e.errors = Default::default();
    }
    for (part, p) in parts.iter().enumerate() {
        let mix = match p.protocol {
            ProtocolResult::Http1(h) => &h.mix,
            ProtocolResult::Http2(h) => &h.mix,
            ProtocolResult::Http3(h) => &h.mix,
            _ => return Err(MergeError::Mix { part }),
        };
        let texts = p.histograms.map_or(&[][..], |h| &h.mix_latency_us[..]);
        if mix.len() != first.len() || texts.len() != first.len() {
            return Err(MergeError::Mix { part });
        }
        for ((acc, e), (h, text)) in entries.iter_mut().zip(mix).zip(hists.iter_mut().zip(texts)) {
            acc.requests += e.requests;
            acc.errors.add(&e.errors);
            histo::add_encoded(h, text).map_err(|source| MergeError::Histogram { part, source })?;
        }
    }
    for (e, h) in entries.iter_mut().zip(&hists) {
        e.latency_us = latency_of(h);
    }
    histograms.mix_latency_us = hists.iter().map(histo::encode).collect();
    Ok(entries)
}

/// The parts' HTTP/2 blocks as one: the SETTINGS are the first that came.
fn merge_http2(first: &Http2Result, hs: &[&Http2Result], mix: Vec<MixEntryResult>) -> Http2Result {
    Http2Result {
        protocol: first.protocol.clone(),
        streams: first.streams,
        max_concurrent_streams: hs.iter().find_map(|h| h.max_concurrent_streams),
        initial_window_size: hs.iter().find_map(|h| h.initial_window_size),
        max_frame_size: hs.iter().find_map(|h| h.max_frame_size),
        goaways: hs.iter().map(|h| h.goaways).sum(),
        errors: add_counts(hs.iter().map(|h| &h.errors)),
        connection_mode: first.connection_mode,
        mix,
    }
}

/// The parts' WebSocket blocks as one (throughput left for the caller).
fn merge_ws(ws: &[&WsResult], secs: f64, upgrade_latency_us: Latency) -> WsResult {
    let upgrades = ws.iter().map(|w| w.upgrades).sum::<u64>();
    WsResult {
        message_kind: ws[0].message_kind.clone(),
        message_size: ws[0].message_size,
        reconnect_every: ws[0].reconnect_every,
        messages_sent: ws.iter().map(|w| w.messages_sent).sum(),
        upgrades,
        upgrades_per_s: upgrades as f64 / secs,
        upgrade_latency_us,
        upgrade_failures: add_counts(ws.iter().map(|w| &w.upgrade_failures)),
        close_codes: add_counts(ws.iter().map(|w| &w.close_codes)),
        protocol_errors: add_counts(ws.iter().map(|w| &w.protocol_errors)),
        upgrades_unanswered: ws.iter().map(|w| w.upgrades_unanswered).sum(),
        throughput: Throughput::default(),
    }
}

/// Sums maps of counts by name (errors by cause or code, closes by code).
pub(crate) fn add_counts<'a>(
    maps: impl Iterator<Item = &'a BTreeMap<String, u64>>,
) -> BTreeMap<String, u64> {
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

impl TlsResult {
    /// Several parts' TLS as one: the negotiated names are the first's that completed a
    /// handshake, marked `mixed` when another part (or one part's own handshakes) negotiated
    /// something else; handshakes and errors by cause add up; the rate is over `secs`, the CPU
    /// per handshake from the merged `client_cpu_s`; the latency is the caller's, read from
    /// the summed handshake histograms.
    pub fn merge(
        ts: &[&TlsResult],
        secs: f64,
        client_cpu_s: f64,
        handshake_latency_us: Latency,
    ) -> Option<TlsResult> {
        let first = ts.iter().find(|t| t.version.is_some()).or(ts.first())?;
        let mixed = ts
            .iter()
            .any(|t| t.mixed || (t.version.is_some() && names(t) != names(first)));
        let sum = |f: fn(&TlsResult) -> u64| ts.iter().map(|t| f(t)).sum::<u64>();
        let handshakes = sum(|t| t.handshakes);
        let per_handshake = ts.iter().any(|t| t.client_cpu_us_per_handshake.is_some());
        let (version, cipher_suite, key_exchange_group, alpn) = names(first);
        Some(TlsResult {
            version,
            cipher_suite,
            key_exchange_group,
            alpn,
            mixed,
            resume: first.resume.clone(),
            handshakes,
            handshakes_full: sum(|t| t.handshakes_full),
            handshakes_resumed: sum(|t| t.handshakes_resumed),
            handshakes_per_s: handshakes as f64 / secs.max(1e-9),
            handshake_latency_us,
            client_cpu_us_per_handshake: (per_handshake && handshakes > 0)
                .then(|| client_cpu_s * 1e6 / handshakes as f64),
            errors: add_counts(ts.iter().map(|t| &t.errors)),
        })
    }
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
