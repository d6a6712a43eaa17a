//! [`ProtocolResult`]: what only one protocol measures, one variant per [`Workload`], held by a
//! [`LoadResult`] in its one `protocol` field.
//!
//! What every protocol has stays common in [`LoadResult`]: requests (messages, streams),
//! latency, errors by kind, status codes, bytes, CPU, the timeline, `-R`'s rate and coordinated
//! omission, connects, TLS (a layer under any TCP driver, and QUIC's handshake next), idle naps
//! and silences. Everything else (HTTP/1.1 bodies, the server's HTTP/2 SETTINGS, WebSocket
//! upgrades and closes, TCP stream bytes in flight, `--mix` entries, Mbps) is one variant's, and
//! is merged by that variant's exact merge ([`ProtocolResult::merge`]). A new protocol adds a
//! variant here, beside its `Workload`, and an arm to the merge.
//!
//! The encoded histograms stay in the one common [`super::Histograms`] block, the protocol's
//! slots included (`upgrade_latency_us`, `mix_latency_us`): lap records keep that block as it
//! is (`results.jsonl`), and reports merge `--mix` entries across laps from it; the protocol's
//! merge reads its slots there and writes the merged ones back.

use super::{
    BodyResult, GrpcResult, Http2Result, Http3Result, LoadResult, MixEntryResult, Mode, WsResult,
};
use crate::Workload;
use serde::{Deserialize, Serialize};

/// The part of a result only one protocol has, tagged by its workload (`"workload": "http1"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "workload", rename_all = "kebab-case")]
pub enum ProtocolResult {
    /// HTTP/1.1: the connection mode, bodies and `--mix` entries.
    Http1(Http1Result),
    /// HTTP/2: the protocol, streams, the server's SETTINGS, GOAWAYs, `--mix` entries.
    Http2(Http2Result),
    /// WebSocket: upgrades, messages sent, closes, failures by cause, Mbps.
    WebSocket(WsResult),
    /// TCP echo stream: Mbps and the bytes whose echo never came back.
    TcpStream(TcpStreamResult),
    /// TCP echo ping-pong: Mbps.
    TcpPingPong(TcpPingPongResult),
    /// gRPC: calls by status code, failures by cause, messages and bytes both ways.
    Grpc(GrpcResult),
    /// HTTP/3: streams, the server's limits, 0-RTT, UDP and QUIC counters, errors by code.
    Http3(Http3Result),
}

impl Default for ProtocolResult {
    fn default() -> Self {
        ProtocolResult::Http1(Http1Result::default())
    }
}

impl ProtocolResult {
    /// The workload this block belongs to.
    pub fn workload(&self) -> Workload {
        match self {
            ProtocolResult::Http1(_) => Workload::Http1,
            ProtocolResult::Http2(_) => Workload::Http2,
            ProtocolResult::WebSocket(_) => Workload::WebSocket,
            ProtocolResult::TcpStream(_) => Workload::TcpStream,
            ProtocolResult::TcpPingPong(_) => Workload::TcpPingPong,
            ProtocolResult::Grpc(_) => Workload::Grpc,
            ProtocolResult::Http3(_) => Workload::Http3,
        }
    }

    /// The megabits per second received and sent, and bytes (both ways) per connection, of a
    /// mode that counts bytes (WebSocket and TCP); `None` for HTTP.
    pub fn throughput(&self) -> Option<&Throughput> {
        match self {
            ProtocolResult::WebSocket(w) => Some(&w.throughput),
            ProtocolResult::TcpStream(t) => Some(&t.throughput),
            ProtocolResult::TcpPingPong(t) => Some(&t.throughput),
            ProtocolResult::Http1(_)
            | ProtocolResult::Http2(_)
            | ProtocolResult::Grpc(_)
            | ProtocolResult::Http3(_) => None,
        }
    }
}

/// HTTP/1.1 (mode `http`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Http1Result {
    /// `keep-alive` or `new-conn` (a connection per request). Absent from the oldest results
    /// (keep-alive then).
    #[serde(default)]
    pub connection_mode: ConnectionMode,
    /// Request bodies, `--verify` or `Accept-Encoding`: bodies sent and received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bodies: Option<BodyResult>,
    /// `--mix`: each entry's requests, errors and latency, in the mix file's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<MixEntryResult>,
}

/// Megabits per second each way and bytes per connection, from the common byte counts over
/// the measured duration (a merge recomputes them from the merged counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Throughput {
    pub mbps_down: f64,
    pub mbps_up: f64,
    pub bytes_per_connection: f64,
}

impl Throughput {
    /// `read` and `written` bytes over `secs` on `connections` connections.
    pub fn of(read: u64, written: u64, secs: f64, connections: u32) -> Throughput {
        let mbps = |b: u64| b as f64 * 8.0 / secs.max(1e-9) / 1e6;
        Throughput {
            mbps_down: mbps(read),
            mbps_up: mbps(written),
            bytes_per_connection: (read + written) as f64 / f64::from(connections.max(1)),
        }
    }
}

/// The TCP echo stream (mode `tcp-stream`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpStreamResult {
    #[serde(flatten)]
    pub throughput: Throughput,
    /// Bytes sent whose echo had not come back when the drain after the end gave up (0 when
    /// every echo came back; then `bytes_read` equals `bytes_written`).
    pub bytes_in_flight: u64,
}

/// The TCP echo ping-pong (mode `tcp-pingpong`): `requests` counts echoed messages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpPingPongResult {
    #[serde(flatten)]
    pub throughput: Throughput,
}

/// How HTTP connections were used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConnectionMode {
    /// Connections stay open across requests.
    #[default]
    KeepAlive,
    /// A connection per request (`--new-conn`).
    NewConn,
}

impl ConnectionMode {
    /// The spelling in the JSON result: `keep-alive` or `new-conn`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectionMode::KeepAlive => "keep-alive",
            ConnectionMode::NewConn => "new-conn",
        }
    }
}

impl std::fmt::Display for ConnectionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Accessors to the protocol block, so readers need not match on it.
impl LoadResult {
    /// Which driver ran.
    pub fn workload(&self) -> Workload {
        self.protocol.workload()
    }

    /// The mode as suites and lap records spell it (HTTP/1.1, HTTP/2 and HTTP/3 are `http`).
    pub fn mode(&self) -> Mode {
        self.workload().mode()
    }

    /// HTTP/1.1's block.
    pub fn http1(&self) -> Option<&Http1Result> {
        match &self.protocol {
            ProtocolResult::Http1(h) => Some(h),
            _ => None,
        }
    }

    /// HTTP/2's block.
    pub fn http2(&self) -> Option<&Http2Result> {
        match &self.protocol {
            ProtocolResult::Http2(h) => Some(h),
            _ => None,
        }
    }

    /// HTTP/3's block.
    pub fn http3(&self) -> Option<&Http3Result> {
        match &self.protocol {
            ProtocolResult::Http3(h) => Some(h),
            _ => None,
        }
    }

    /// gRPC's block.
    pub fn grpc(&self) -> Option<&GrpcResult> {
        match &self.protocol {
            ProtocolResult::Grpc(g) => Some(g),
            _ => None,
        }
    }

    /// WebSocket's block.
    pub fn ws(&self) -> Option<&WsResult> {
        match &self.protocol {
            ProtocolResult::WebSocket(w) => Some(w),
            _ => None,
        }
    }

    /// HTTP/1.1's request and response bodies, when they were counted.
    pub fn bodies(&self) -> Option<&BodyResult> {
        self.http1()?.bodies.as_ref()
    }

    /// `--mix`: each entry's figures (empty without a mix).
    pub fn mix(&self) -> &[MixEntryResult] {
        match &self.protocol {
            ProtocolResult::Http1(h) => &h.mix,
            ProtocolResult::Http2(h) => &h.mix,
            ProtocolResult::Http3(h) => &h.mix,
            _ => &[],
        }
    }

    /// HTTP: `keep-alive` or `new-conn`; `None` for the other protocols.
    pub fn connection_mode(&self) -> Option<ConnectionMode> {
        match &self.protocol {
            ProtocolResult::Http1(h) => Some(h.connection_mode),
            ProtocolResult::Http2(h) => Some(h.connection_mode),
            ProtocolResult::Http3(h) => Some(h.connection_mode),
            _ => None,
        }
    }

    /// WebSocket and TCP: megabits per second received.
    pub fn mbps_down(&self) -> Option<f64> {
        self.protocol.throughput().map(|t| t.mbps_down)
    }

    /// WebSocket and TCP: megabits per second sent.
    pub fn mbps_up(&self) -> Option<f64> {
        self.protocol.throughput().map(|t| t.mbps_up)
    }

    /// WebSocket and TCP: bytes both ways per connection.
    pub fn bytes_per_connection(&self) -> Option<f64> {
        self.protocol.throughput().map(|t| t.bytes_per_connection)
    }

    /// TCP stream: bytes sent whose echo never came back.
    pub fn bytes_in_flight(&self) -> Option<u64> {
        match &self.protocol {
            ProtocolResult::TcpStream(t) => Some(t.bytes_in_flight),
            _ => None,
        }
    }
}
