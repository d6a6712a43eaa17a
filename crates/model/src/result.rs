//! The result of one load run, serialized as `spec/load-result.schema.json` (schema version 2;
//! version 1 still reads, see [`stored`]): the common figures in [`LoadResult`], the protocol's
//! own in [`ProtocolResult`], and their exact merge ([`ProtocolResult::merge`]).
//!
//! These JSON keys are relied on by the harness and by users' scripts: keep their names.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod errors;
mod grpc;
mod h3;
mod merge;
mod protocol;
pub mod stored;
mod ws;
pub use crate::silence::Silence;
pub use errors::Errors;
pub use grpc::{GrpcResult, GrpcStreamResult};
pub use h3::{Http3Result, QuicCounters, QuicSocket, ZeroRttResult};
pub use merge::{MergeError, ProtocolPart};
pub use protocol::{
    ConnectionMode, Http1Result, ProtocolResult, TcpPingPongResult, TcpStreamResult, Throughput,
};
pub use stored::SchemaVersion;
pub use ws::WsResult;

/// Latency percentiles and moments, in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub p9999: f64,
    pub max: f64,
    pub mean: f64,
    pub stdev: f64,
}

/// One second of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Seconds since the start of measurement (0 for the first second).
    pub second: u32,
    pub requests: u64,
    pub errors: u64,
    pub latency_mean_us: f64,
    pub latency_p99_us: f64,
    /// Bytes read during this second (TCP modes use it for the Mbps curve).
    pub bytes_read: u64,
}

/// What kind of load ran: the spelling in suites and lap records (a result's is
/// [`LoadResult::mode`], from its workload).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// HTTP/1.1 requests.
    #[default]
    Http,
    /// TCP echo: a message repeated into large writes, bytes counted both ways.
    TcpStream,
    /// TCP echo: one message at a time, latency per round trip.
    TcpPingpong,
    /// WebSocket (RFC 6455) echo over HTTP/1.1 upgrade: one frame per message each way,
    /// latency per message.
    Ws,
    /// gRPC calls over HTTP/2 (h2c, or h2 over TLS).
    Grpc,
}

impl Mode {
    /// The spelling in suites, `results.jsonl` and the JSON result.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Http => "http",
            Mode::TcpStream => "tcp-stream",
            Mode::TcpPingpong => "tcp-pingpong",
            Mode::Ws => "ws",
            Mode::Grpc => "grpc",
        }
    }

    /// HTTP requests (the default, left out of records where absent means it).
    pub fn is_http(&self) -> bool {
        *self == Mode::Http
    }

    /// A TCP echo mode (no HTTP requests).
    pub fn is_tcp(self) -> bool {
        matches!(self, Mode::TcpStream | Mode::TcpPingpong)
    }

    /// A mode whose unit is a message (TCP ping-pong, WebSocket), not a request.
    pub fn counts_messages(self) -> bool {
        matches!(self, Mode::TcpPingpong | Mode::Ws)
    }

    /// The stream mode, whose figures are Mbps and messages rather than requests.
    pub fn is_stream(self) -> bool {
        self == Mode::TcpStream
    }

    /// The unit of its rate in tables and sentences: `msg/s` where the unit is a message
    /// (WebSocket, TCP stream and ping-pong), `calls/s` for gRPC, else `req/s`.
    pub fn rate_unit(self) -> &'static str {
        match self {
            Mode::TcpStream | Mode::TcpPingpong | Mode::Ws => "msg/s",
            Mode::Grpc => "calls/s",
            Mode::Http => "req/s",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The whole result of `serverbench load`: what every protocol has, and the protocol's own
/// block in [`LoadResult::protocol`] (read it through [`LoadResult::http2`], [`LoadResult::ws`],
/// [`LoadResult::bodies`]...). Serialized as schema version 2; a result without
/// `schema_version` (version 1, where each protocol's fields sat beside the common ones)
/// reads into the same type (see [`stored`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct LoadResult {
    /// The shape of this JSON: 2 (written by every serverbench since the protocol block).
    pub schema_version: SchemaVersion,
    /// The URL(s) or `host:port` that were loaded.
    pub target: Vec<String>,
    pub connections: u32,
    pub threads: u32,
    /// Requests (HTTP), streams (HTTP/2) or echoed messages (WebSocket, TCP ping-pong)
    /// completed in the measured period.
    pub requests: u64,
    pub duration_s: f64,
    pub rps: f64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub latency_us: Latency,
    pub errors: Errors,
    /// Responses per HTTP status code, e.g. `{"200": 1000, "404": 3}`.
    pub status: BTreeMap<String, u64>,
    pub client_cpu_s: f64,
    pub client_cpu_us_per_request: Option<f64>,
    /// The client's threads were busy or runnable but waiting for a CPU ≥ 90% of the measured
    /// span, on the CPUs they ran on: the result may measure the client.
    pub client_saturated: bool,
    pub timeline: Vec<TimelinePoint>,
    /// `-R`: the requested and achieved rates (requests/s), the count of requests that could not
    /// start on time, and latency measured from the actual send instead of the intended one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_target: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_achieved: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us_uncorrected: Option<Latency>,
    /// TCP connections established during measurement, per second, and how long a connect took
    /// (`connect()` to writable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connects: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connects_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_latency_us: Option<Latency>,
    /// `https://`, `wss://`: handshakes and what they negotiated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsResult>,
    /// When measurement started, in seconds since the Unix epoch (this host's clock). With
    /// `--barrier` it is the instant of the release plus a fixed lead, the same on every host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_start_unix_s: Option<f64>,
    /// The raw latency data, for exact merging across threads, processes and hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<Histograms>,
    /// `--idle`: what the threads did with nothing to do, and the naps they took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<IdleResult>,
    /// `--io`: the backend that ran (absent from results written before `--io` existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<crate::IoBackend>,
    /// What the engine chose or fell back to on its own, one line each (e.g. io_uring refused).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Requests (WebSocket and TCP ping-pong: messages; HTTP/2: streams) sent and not yet
    /// answered when the measured window ended: counted nowhere else. 0 in results written
    /// before it was counted.
    #[serde(default)]
    pub in_flight_at_end: u64,
    /// The spans of the measured window in which no answer came at all, each at least a second
    /// long (see [`Silence`]); empty when answers never stopped that long, for the TCP stream
    /// mode (no answers to time) and in results written before silences were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub silences: Vec<Silence>,
    /// What only this load's protocol measured, tagged by its workload.
    pub protocol: ProtocolResult,
}

impl Serialize for LoadResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        LoadResult::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for LoadResult {
    /// Reads schema version 2, or version 1 (no `schema_version`) through its old shape.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut v = serde_json::Value::deserialize(d)?;
        stored::upgrade(&mut v).map_err(serde::de::Error::custom)?;
        LoadResult::deserialize(v).map_err(serde::de::Error::custom)
    }
}

impl LoadResult {
    /// Why no request succeeded: every one failed at the socket, or every answer had an error
    /// status (e.g. plain HTTP sent to an HTTPS port gets 400s); `None` when some did. A load
    /// like that measured nothing about the server.
    pub fn no_success(&self) -> Option<String> {
        if let Some(why) = self.ws().and_then(|w| w.no_success(self)) {
            return Some(why);
        }
        if let Some(why) = self.grpc().and_then(|g| g.no_success(self.requests)) {
            return Some(why);
        }
        if let Some(why) = self.http3().and_then(|h| h.no_success(self)) {
            return Some(why);
        }
        if self.requests == 0 && self.errors.total() > 0 {
            return Some(format!(
                "no request succeeded ({} errors)",
                self.errors.total()
            ));
        }
        if self.requests > 0 && self.errors.status >= self.requests {
            let codes: Vec<String> = self
                .status
                .iter()
                .map(|(c, n)| format!("{n} x {c}"))
                .collect();
            let https = self.status.contains_key("400")
                && self.target.iter().any(|t| t.starts_with("http://"));
            let https = match https {
                true => " (a 400 to every request: is this an https:// port?)",
                false => "",
            };
            return Some(format!(
                "no request succeeded: every answer had an error status ({}){https}",
                codes.join(", ")
            ));
        }
        None
    }
}

/// Request and response bodies of an HTTP/1.1 run (measured period): what was sent, and for
/// each response its bytes on the wire beside its decoded size (the same without a coding;
/// decoded only with `--verify`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BodyResult {
    /// Requests that carried a body, their bytes (chunk framing excluded) and the mean.
    pub requests_with_body: u64,
    pub request_body_bytes: u64,
    pub request_body_bytes_mean: f64,
    /// Responses counted, their body bytes as received, and decoded.
    pub responses: u64,
    pub wire_body_bytes: u64,
    pub wire_body_bytes_mean: f64,
    pub decoded_body_bytes: u64,
    pub decoded_body_bytes_mean: f64,
    /// Responses by `Content-Encoding` (`identity` without one).
    pub encodings: BTreeMap<String, u64>,
    /// `--verify`: encoding errors by cause (`unlisted gzip`: a coding the request did not list;
    /// `undecodable br`; `unknown x-foo`).
    pub encoding_errors: BTreeMap<String, u64>,
}

impl BodyResult {
    /// Several hosts' (or threads') bodies as one: counts add up, means are recomputed.
    pub fn sum(parts: &[&BodyResult]) -> BodyResult {
        let mut m = BodyResult::default();
        for p in parts {
            m.requests_with_body += p.requests_with_body;
            m.request_body_bytes += p.request_body_bytes;
            m.responses += p.responses;
            m.wire_body_bytes += p.wire_body_bytes;
            m.decoded_body_bytes += p.decoded_body_bytes;
            for (maps, from) in [
                (&mut m.encodings, &p.encodings),
                (&mut m.encoding_errors, &p.encoding_errors),
            ] {
                for (k, n) in from {
                    *maps.entry(k.clone()).or_insert(0) += n;
                }
            }
        }
        let mean = |bytes: u64, n: u64| if n == 0 { 0.0 } else { bytes as f64 / n as f64 };
        m.request_body_bytes_mean = mean(m.request_body_bytes, m.requests_with_body);
        m.wire_body_bytes_mean = mean(m.wire_body_bytes, m.responses);
        m.decoded_body_bytes_mean = mean(m.decoded_body_bytes, m.responses);
        m
    }
}

/// One entry of a `--mix` load. Its `requests` are the responses to it in the measured window
/// (they add up to the run's); its `errors` are those known to concern it: a status or body
/// error of its response, or a timeout, read or parse error while it was the oldest request in
/// flight on its connection (connect errors concern no entry).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MixEntryResult {
    pub name: String,
    pub method: String,
    pub path: String,
    pub weight: f64,
    pub requests: u64,
    pub errors: Errors,
    pub latency_us: Latency,
}

/// What `--idle` chose (see `crate::idle`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdlePolicy {
    /// Naps that follow the latency, or blocks below 10 µs.
    #[default]
    Auto,
    /// Waits for the kernel.
    Block,
    /// Naps of a fixed span.
    Nap,
}

/// The threads' naps over the whole run (warm-up included). A nap delays noticing a response
/// by at most its span, so `nap_us_max` bounds what napping added to any latency.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleResult {
    pub policy: IdlePolicy,
    pub naps: u64,
    /// Mean and longest nap as slept (0 without naps).
    pub nap_us_mean: f64,
    pub nap_us_max: f64,
}

/// The HTTP/2 side of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Http2Result {
    /// `h2` (over TLS, negotiated by ALPN) or `h2c` (cleartext, prior knowledge).
    pub protocol: String,
    /// `-m/--streams`: concurrent streams per connection asked for.
    pub streams: u32,
    /// The server's SETTINGS (null: none arrived, or it did not set a limit).
    pub max_concurrent_streams: Option<u32>,
    pub initial_window_size: Option<u32>,
    pub max_frame_size: Option<u32>,
    /// GOAWAY frames received (each closes its connection once its streams end).
    pub goaways: u64,
    /// `errors.protocol` by error code, e.g. `{"PROTOCOL_ERROR": 1}`.
    pub errors: BTreeMap<String, u64>,
    /// `keep-alive` (absent from lap records written before schema version 2).
    #[serde(default)]
    pub connection_mode: ConnectionMode,
    /// `--mix`: each entry's requests, errors and latency, in the mix file's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<MixEntryResult>,
}

/// TLS handshakes of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TlsResult {
    /// What the handshakes negotiated (null when none completed): `TLSv1.3`,
    /// `TLS_AES_256_GCM_SHA384`, `X25519`, `http/1.1`.
    pub version: Option<String>,
    pub cipher_suite: Option<String>,
    pub key_exchange_group: Option<String>,
    pub alpn: Option<String>,
    /// Some handshakes negotiated something other than the values above.
    pub mixed: bool,
    /// `--tls-resume`: `tickets`, `ids` or `off`.
    pub resume: String,
    /// Handshakes completed during measurement: full and resumed.
    pub handshakes: u64,
    pub handshakes_full: u64,
    pub handshakes_resumed: u64,
    pub handshakes_per_s: f64,
    /// From the TCP connection being up to the handshake done.
    pub handshake_latency_us: Latency,
    /// `--new-conn`: client CPU per handshake, its request included.
    pub client_cpu_us_per_handshake: Option<f64>,
    /// `errors.tls` by cause, e.g. `{"certificate unknown issuer": 12}`.
    pub errors: BTreeMap<String, u64>,
}

/// Latency histograms of a run (see [`crate::histo`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histograms {
    /// `latency_us` as an HdrHistogram, V2 compressed, base64 (values in µs, 1 µs to 60 s,
    /// 3 significant digits).
    pub latency_us: String,
    /// `-R`: the uncorrected latency, encoded the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us_uncorrected: Option<String>,
    /// Per timeline second, the `(bucket, count)` pairs of its log-linear latency buckets
    /// (see [`crate::histo::bucket_mid`]): what the per-second p99 is read from.
    #[serde(default)]
    pub timeline_buckets: Vec<Vec<(u16, u32)>>,
    /// `connect_latency_us`, encoded the same way (when connections were made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_latency_us: Option<String>,
    /// `https://`: `tls.handshake_latency_us`, encoded the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake_latency_us: Option<String>,
    /// `ws://`: `ws.upgrade_latency_us`, encoded the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_latency_us: Option<String>,
    /// `--mix`: each entry's `latency_us`, encoded the same way, in the mix's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix_latency_us: Vec<String>,
    /// `grpc://` with `--stream`: `grpc.stream.message_latency_us`, encoded the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_latency_us: Option<String>,
}

#[cfg(test)]
mod body_tests {
    use super::*;

    #[test]
    fn bodies_of_several_hosts_add_up_and_their_means_are_recomputed() {
        let a = BodyResult {
            responses: 1,
            wire_body_bytes: 100,
            decoded_body_bytes: 400,
            encodings: [("gzip".to_string(), 1)].into(),
            ..Default::default()
        };
        let b = BodyResult {
            responses: 3,
            wire_body_bytes: 300,
            decoded_body_bytes: 400,
            encodings: [("gzip".to_string(), 3)].into(),
            ..Default::default()
        };
        let m = BodyResult::sum(&[&a, &b]);
        assert_eq!(
            (m.wire_body_bytes_mean, m.decoded_body_bytes_mean),
            (100.0, 200.0)
        );
        assert_eq!(m.encodings["gzip"], 4);
    }
}
