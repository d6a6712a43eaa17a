//! The HTTP/3 block of a result: what only QUIC and HTTP/3 measure, beside the common figures
//! (requests, latency, status codes, errors by kind) and the common TLS block (QUIC's
//! handshakes: `TLSv1.3`, ALPN `h3`, full and resumed, latency from the first Initial sent to
//! the handshake confirmed). Its exact merge is [`Http3Result::merge`].

use super::{ConnectionMode, LoadResult, MixEntryResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The HTTP/3 side of a run (workload `http3`): `requests` counts streams answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Http3Result {
    /// `-m/--streams`: concurrent streams per connection asked for.
    pub streams: u32,
    /// `keep-alive` or `new-conn` (a QUIC connection per request).
    pub connection_mode: ConnectionMode,
    /// The server's `initial_max_streams_bidi` transport parameter (null: none seen).
    pub max_streams_bidi: Option<u64>,
    /// The server's `SETTINGS_QPACK_MAX_TABLE_CAPACITY` (null: no SETTINGS seen).
    pub qpack_max_table_capacity: Option<u64>,
    /// GOAWAY frames received.
    pub goaways: u64,
    /// `--0rtt`: requests sent in 0-RTT on resumed connections, and those the server took.
    pub zero_rtt: Option<ZeroRttResult>,
    /// UDP datagrams, syscalls, bytes and QUIC's losses.
    pub quic: QuicCounters,
    /// Connection closes by QUIC transport error name (`PROTOCOL_VIOLATION`; a close of the
    /// client's own is prefixed `local: `, e.g. `local: IDLE_TIMEOUT`).
    pub transport_errors: BTreeMap<String, u64>,
    /// Stream resets and connection closes by HTTP/3 error name (`H3_MESSAGE_ERROR`,
    /// `H3_REQUEST_REJECTED`...; an unknown code as `0x…`).
    pub h3_errors: BTreeMap<String, u64>,
    /// RESET_STREAM frames received.
    pub stream_resets: u64,
    /// `--mix`: each entry's requests, errors and latency, in the mix file's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<MixEntryResult>,
}

/// `--0rtt`: requests sent in 0-RTT, and accepted by the server (the rest were sent again
/// after the handshake).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZeroRttResult {
    pub attempted: u64,
    pub accepted: u64,
}

/// The UDP and QUIC counters of a run: quinn-proto's totals of each connection, so the whole
/// run, warm-up included (not only the measured window the request counts cover).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuicCounters {
    /// UDP datagrams sent and received.
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    /// Send and receive syscalls: datagrams per call above 1 is GSO/GRO (or sendmmsg,
    /// recvmmsg) at work.
    pub send_calls: u64,
    pub recv_calls: u64,
    /// UDP payload bytes sent and received.
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Packets and bytes QUIC declared lost, and congestion events (each a window cut).
    pub packets_lost: u64,
    pub bytes_lost: u64,
    pub congestion_events: u64,
    /// Whether the sockets sent with GSO and received with GRO (every part's, when merged).
    pub gso: bool,
    pub gro: bool,
    /// One socket per connection or one shared by a thread's connections.
    pub socket: QuicSocket,
}

/// How a thread's QUIC connections hold their UDP sockets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuicSocket {
    /// Each connection its own socket (its own source port).
    #[default]
    PerConnection,
    /// One socket per thread, its connections told apart by connection ID.
    Shared,
}

impl QuicSocket {
    /// The spelling in JSON and reports: `per-connection`, `shared`.
    pub fn as_str(self) -> &'static str {
        match self {
            QuicSocket::PerConnection => "per-connection",
            QuicSocket::Shared => "shared",
        }
    }
}

impl fmt::Display for QuicSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl QuicCounters {
    /// Datagrams per send call (None: no call).
    pub fn datagrams_per_send(&self) -> Option<f64> {
        (self.send_calls > 0).then(|| self.datagrams_sent as f64 / self.send_calls as f64)
    }

    /// Datagrams per receive call (None: no call).
    pub fn datagrams_per_recv(&self) -> Option<f64> {
        (self.recv_calls > 0).then(|| self.datagrams_received as f64 / self.recv_calls as f64)
    }

    /// Several parts' counters as one: counts summed, GSO and GRO only when every part had
    /// them, the socket the first's.
    pub fn merge(qs: &[&QuicCounters]) -> QuicCounters {
        let sum = |f: fn(&QuicCounters) -> u64| qs.iter().map(|q| f(q)).sum::<u64>();
        QuicCounters {
            datagrams_sent: sum(|q| q.datagrams_sent),
            datagrams_received: sum(|q| q.datagrams_received),
            send_calls: sum(|q| q.send_calls),
            recv_calls: sum(|q| q.recv_calls),
            bytes_sent: sum(|q| q.bytes_sent),
            bytes_received: sum(|q| q.bytes_received),
            packets_lost: sum(|q| q.packets_lost),
            bytes_lost: sum(|q| q.bytes_lost),
            congestion_events: sum(|q| q.congestion_events),
            gso: !qs.is_empty() && qs.iter().all(|q| q.gso),
            gro: !qs.is_empty() && qs.iter().all(|q| q.gro),
            socket: qs.first().map(|q| q.socket).unwrap_or_default(),
        }
    }
}

impl Http3Result {
    /// Why nothing was answered when no QUIC handshake completed either: no datagram came back
    /// (nothing listens on that UDP port), or the connections were closed by transport errors
    /// (named); `None` otherwise.
    pub fn no_success(&self, r: &LoadResult) -> Option<String> {
        let handshakes = r.tls.as_ref().map_or(0, |t| t.handshakes);
        let q = &self.quic;
        if r.requests > 0 || handshakes > 0 {
            return None;
        }
        if q.datagrams_sent > 0 && q.datagrams_received == 0 {
            return Some(format!(
                "no QUIC handshake completed: {} datagrams sent, none answered (is it the \
                 server's UDP port, its H3_PORT?)",
                q.datagrams_sent
            ));
        }
        let closes: Vec<String> = (self.transport_errors.iter().chain(&self.h3_errors))
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        (!closes.is_empty()).then(|| {
            format!(
                "no QUIC handshake completed: connections closed by {}",
                closes.join(", ")
            )
        })
    }

    /// The blocks of several threads or hosts as one: counts and maps summed, the server's
    /// limits the smallest any part saw, what the load was given the first's (`mix` is the
    /// caller's: its latencies come from the histograms).
    pub fn merge(hs: &[&Http3Result], mix: Vec<MixEntryResult>) -> Http3Result {
        let first = hs.first().copied().cloned().unwrap_or_default();
        let sum = |f: fn(&Http3Result) -> u64| hs.iter().map(|h| f(h)).sum::<u64>();
        let min = |f: fn(&Http3Result) -> Option<u64>| hs.iter().filter_map(|h| f(h)).min();
        let zero: Vec<&ZeroRttResult> = hs.iter().filter_map(|h| h.zero_rtt.as_ref()).collect();
        let quic: Vec<&QuicCounters> = hs.iter().map(|h| &h.quic).collect();
        Http3Result {
            streams: first.streams,
            connection_mode: first.connection_mode,
            max_streams_bidi: min(|h| h.max_streams_bidi),
            qpack_max_table_capacity: min(|h| h.qpack_max_table_capacity),
            goaways: sum(|h| h.goaways),
            zero_rtt: (!zero.is_empty()).then(|| ZeroRttResult {
                attempted: zero.iter().map(|z| z.attempted).sum(),
                accepted: zero.iter().map(|z| z.accepted).sum(),
            }),
            quic: QuicCounters::merge(&quic),
            transport_errors: super::merge::add_counts(hs.iter().map(|h| &h.transport_errors)),
            h3_errors: super::merge::add_counts(hs.iter().map(|h| &h.h3_errors)),
            stream_resets: sum(|h| h.stream_resets),
            mix,
        }
    }
}

#[cfg(test)]
#[path = "h3_tests.rs"]
mod tests;
