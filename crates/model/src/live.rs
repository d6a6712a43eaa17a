//! The live view's figures as one tick of a load shows them: where the run is ([`Phase`]) and
//! its figures so far ([`Snapshot`]). The engine fills them (once a second, from its workers'
//! copies); serverbench-report draws them as `load`'s live line.

use crate::result::Errors;
use std::time::Duration;

/// Where the run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    /// Opening the connections.
    #[default]
    Connecting,
    /// Loading, not measured (also a gated run waiting for its gate).
    WarmUp,
    /// Measuring.
    Measuring,
}

/// The run so far, as of one tick. Counts and percentiles are those of the current phase
/// (the warm-up's during the warm-up, the measured ones after); the rates over the last second
/// span both.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    pub phase: Phase,
    /// Time spent in this phase.
    pub elapsed: Duration,
    /// Connections up (while connecting: so far).
    pub connected: u64,
    /// Connections asked for.
    pub connections: u64,
    /// Requests completed in this phase (TCP stream: none).
    pub requests: u64,
    /// Requests per second over the last second.
    pub rate_now: f64,
    pub errors: Errors,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// TLS handshakes completed in this phase.
    pub handshakes: u64,
    /// TLS handshakes per second over the last second.
    pub handshakes_now: f64,
    /// Latency percentiles of this phase, µs (`None`: no request yet).
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// Requests (HTTP/2: streams) in flight when the workers answered.
    pub in_flight: u64,
    /// gRPC streaming calls: messages received per second over the last second (measured
    /// ones only: 0 during the warm-up).
    pub messages_now: f64,
}

impl Snapshot {
    /// Requests per second over the whole phase.
    pub fn rate(&self) -> f64 {
        per_second(self.requests, self.elapsed)
    }

    /// Handshakes per second over the whole phase.
    pub fn handshake_rate(&self) -> f64 {
        per_second(self.handshakes, self.elapsed)
    }
}

fn per_second(n: u64, d: Duration) -> f64 {
    let s = d.as_secs_f64();
    if s > 0.0 {
        n as f64 / s
    } else {
        0.0
    }
}
