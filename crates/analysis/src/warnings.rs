//! The warnings of a report as types: what each is about ([`WarningKind`]) and the sentence
//! ([`Warning`]). [`crate::diagnostics::diagnose`] makes them in one pass.

use serde::Serialize;

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    Noisy,
    ClientSaturated,
    Errors,
    Non2xx,
    OutlierLap,
    FailedLaps,
    FewLaps,
    MissingBaseline,
    /// The server used clearly fewer cores than the CPUs it was pinned to.
    UnusedCpus,
    /// p99.9 latency far above p50: a long tail or a second mode.
    LongTail,
    /// The server's RSS grew through every lap.
    RssGrowth,
    /// Much slower on `/pingpong` than on `/payload`: the cost of message passing.
    MessagePassing,
    /// Neither the client nor the server was busy: something else bounds the figure.
    NeitherBusy,
    /// In a core sweep, req/s stopped growing with the CPUs.
    StopsScaling,
    /// The server declares deviations from the contract (its manifest's `[deviations]`).
    KnownDeviation,
    /// A client host of a lap over several machines saturated (named).
    HostSaturated,
    /// The client hosts started measuring more than 1 ms apart.
    StartSkew,
    /// A client host's share of the requests is off its share of the connections.
    HostShare,
    /// Resumption was asked and the server resumed no TLS handshake, or 0-RTT was asked
    /// (`--0rtt`) and the server accepted no early data.
    NoResumption,
    /// New connections per request over TLS with the client saturated: the handshake rate is
    /// the client's.
    HandshakeClientBound,
    /// HTTP/2 streams refused, GOAWAYs or protocol errors.
    H2Refused,
    /// WebSocket connections the server closed unasked, or upgrades failed or unanswered.
    WsCloses,
    /// Laps something other than the benchmark disturbed (steal, other processes...).
    Disturbed,
    /// Database laps outside the contract's statement rules: the row is left out of the ranks.
    OffContract,
}

impl WarningKind {
    /// The kind of chart a warning is about, as used in figure ids: `rps`, `latency`, `rss` or
    /// `cpu` (the figure of the warning's scenario and profile).
    pub fn figure(self) -> &'static str {
        match self {
            WarningKind::UnusedCpus
            | WarningKind::NeitherBusy
            | WarningKind::StopsScaling
            | WarningKind::HandshakeClientBound => "cpu",
            WarningKind::LongTail => "latency",
            WarningKind::RssGrowth => "rss",
            _ => "rps",
        }
    }
}

/// A plain sentence about one figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    pub kind: WarningKind,
    pub scenario: String,
    pub profile: String,
    pub server: Option<String>,
    pub message: String,
}
