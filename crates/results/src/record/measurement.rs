//! What the load tool measured in one lap ([`Measurement`]) and its latency percentiles
//! ([`LatencySummary`]), made from serverbench's own result or a capacity search.

use super::LoadParams;
use serde::{Deserialize, Serialize};
use serverbench_model::answers::Answers;
use serverbench_model::result::{
    Errors, Histograms, Http2Result, Http3Result, Latency, LoadResult, Silence, TimelinePoint,
    TlsResult,
};
use std::collections::BTreeMap;

/// Latency percentiles in microseconds; `None` where the tool does not report one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub p50: Option<f64>,
    pub p75: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub p9999: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub stdev: Option<f64>,
}

/// What the load tool measured (client side).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub requests: Option<u64>,
    pub duration_s: Option<f64>,
    pub rps: Option<f64>,
    pub bytes_read: Option<u64>,
    pub bytes_written: Option<u64>,
    pub latency_us: LatencySummary,
    /// Errors by kind (serverbench's own engine); external tools may only give `errors_total`.
    pub errors: Option<Errors>,
    pub errors_total: Option<u64>,
    pub non_2xx: Option<u64>,
    pub status: BTreeMap<String, u64>,
    pub client_cpu_s: Option<f64>,
    pub client_cpu_us_per_request: Option<f64>,
    pub client_saturated: Option<bool>,
    pub mbps_down: Option<f64>,
    pub mbps_up: Option<f64>,
    pub timeline: Vec<TimelinePoint>,
    /// serverbench's own engine: the latency histograms (merged over client hosts when there
    /// were several), so percentiles across laps come from merged histograms and any
    /// percentile can be redrawn later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<Histograms>,
    /// serverbench's own engine over TLS: handshakes, resumption and what was negotiated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsResult>,
    /// serverbench's own engine over HTTP/2: protocol, streams and the server's SETTINGS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2: Option<Http2Result>,
    /// serverbench's own engine over WebSocket: upgrades, closes by code, failures by cause.
    /// Absent from records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ws: Option<serverbench_model::result::WsResult>,
    /// serverbench's own engine over gRPC: the method, calls by grpc-status code, failures by
    /// cause, messages and the server's stream limit. Absent from other laps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<serverbench_model::result::GrpcResult>,
    /// serverbench's own engine over HTTP/3: streams, the server's limits, 0-RTT, datagrams
    /// per call, losses, errors by QUIC and HTTP/3 code. Absent from other laps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http3: Option<Http3Result>,
    /// A capacity search's whole result (a `find_max` lap); the figures above are then its
    /// step at the capacity (the highest rate that met the goal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<serverbench_model::capacity::CapacityResult>,
    /// serverbench's own engine with a mix: each entry's requests, errors and latency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<serverbench_model::result::MixEntryResult>,
    /// serverbench's own engine: requests (messages) sent and unanswered when the measured
    /// window ended (summed over client hosts); absent from other tools and older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight_at_end: Option<u64>,
    /// serverbench's own engine: the spans of a second or more without any answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub silences: Vec<Silence>,
}

impl Measurement {
    /// What the lap answered, for [`serverbench_model::answers::judge`]: `None` for a capacity
    /// search (its steps are judged by the search) or a tool that gave no request count.
    pub fn answers(&self, params: &LoadParams) -> Option<Answers<'_>> {
        if self.capacity.is_some() {
            return None;
        }
        let answered = self.requests?;
        Some(Answers {
            mode: params.work.mode,
            answered,
            errors: self.errors_total.unwrap_or(0),
            in_flight: self.in_flight_at_end,
            seconds: self.duration_s.or(params.duration_s).unwrap_or(0.0),
            p99_us: self.latency_us.p99.filter(|_| answered > 0),
            rate: params.rate,
            silences: &self.silences,
        })
    }
}

impl From<&Latency> for LatencySummary {
    /// Every field, from a tool that reports them all (the engine, wrk).
    fn from(l: &Latency) -> Self {
        LatencySummary {
            p50: Some(l.p50),
            p75: Some(l.p75),
            p90: Some(l.p90),
            p99: Some(l.p99),
            p999: Some(l.p999),
            p9999: Some(l.p9999),
            max: Some(l.max),
            mean: Some(l.mean),
            stdev: Some(l.stdev),
        }
    }
}

impl From<&LoadResult> for Measurement {
    fn from(r: &LoadResult) -> Self {
        let non_2xx = r
            .status
            .iter()
            .filter(|(code, _)| !code.starts_with('2'))
            .map(|(_, n)| *n)
            .sum();
        Measurement {
            requests: Some(r.requests),
            duration_s: Some(r.duration_s),
            rps: Some(r.rps),
            bytes_read: Some(r.bytes_read),
            bytes_written: Some(r.bytes_written),
            latency_us: LatencySummary::from(&r.latency_us),
            errors_total: Some(r.errors.total()),
            errors: Some(r.errors.clone()),
            non_2xx: Some(non_2xx),
            status: r.status.clone(),
            client_cpu_s: Some(r.client_cpu_s),
            client_cpu_us_per_request: r.client_cpu_us_per_request,
            client_saturated: Some(r.client_saturated),
            mbps_down: r.mbps_down(),
            mbps_up: r.mbps_up(),
            timeline: r.timeline.clone(),
            histograms: r.histograms.clone(),
            tls: r.tls.clone(),
            // The mix is kept once, below.
            http2: r.http2().cloned().map(|h| Http2Result {
                mix: Vec::new(),
                ..h
            }),
            ws: r.ws().cloned(),
            grpc: r.grpc().cloned(),
            http3: r.http3().cloned().map(|h| Http3Result {
                mix: Vec::new(),
                ..h
            }),
            capacity: None,
            mix: r.mix().to_vec(),
            in_flight_at_end: Some(r.in_flight_at_end),
            silences: r.silences.clone(),
        }
    }
}

impl From<&serverbench_model::capacity::CapacityResult> for Measurement {
    /// A capacity search as a lap's figures: its step at the capacity (else its first step),
    /// with the whole search kept in `capacity`.
    fn from(c: &serverbench_model::capacity::CapacityResult) -> Self {
        let at = c.capacity_step().or(c.steps.first());
        let mut m = Measurement {
            capacity: Some(c.clone()),
            ..Measurement::default()
        };
        if let Some(s) = at {
            let errors = (s.errors_pct / 100.0 * s.requests as f64).round() as u64;
            m.requests = Some(s.requests - errors.min(s.requests));
            m.duration_s = Some(s.duration_s);
            m.rps = Some(s.rate_achieved);
            m.errors_total = Some(errors);
            m.client_saturated = Some(s.client_saturated);
            m.latency_us = LatencySummary {
                p50: Some(s.p50_us),
                p90: Some(s.p90_us),
                p99: Some(s.p99_us),
                p999: Some(s.p999_us),
                ..LatencySummary::default()
            };
        }
        m
    }
}
