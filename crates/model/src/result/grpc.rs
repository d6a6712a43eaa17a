//! The gRPC block of a result: calls by status code, failures by cause, messages and message
//! bytes both ways, and its exact merge.

use super::Latency;
use crate::spec::GrpcStream;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The gRPC side of a run (workload `grpc`): `requests` counts calls answered (with or without
/// an error), `errors.verdict` the calls that failed by gRPC's rules (by cause in `failures`, by
/// code in `status_codes`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GrpcResult {
    /// `h2` (TLS, ALPN) or `h2c` (prior knowledge).
    pub protocol: String,
    /// The method called, `/package.Service/Method`.
    pub method: String,
    /// `-m/--streams`: concurrent calls per connection asked for.
    pub streams: u32,
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (None: not sent).
    pub max_concurrent_streams: Option<u32>,
    /// `--deadline` sent as `grpc-timeout`, in milliseconds.
    pub deadline_ms: Option<u64>,
    /// Calls that ended with a `grpc-status`, by its code's name (`OK`, `INTERNAL`,
    /// `UNAVAILABLE`...; an unknown number as itself).
    pub status_codes: BTreeMap<String, u64>,
    /// Calls that failed, by cause: `grpc-status` (non-zero code), `http status` (not 200),
    /// `content-type` (not application/grpc), `framing` (a message longer or shorter than its
    /// prefix, or compressed), `no trailers` (the stream ended without a grpc-status),
    /// `verify` (`--verify`: a reply that is not the expected one).
    pub failures: BTreeMap<String, u64>,
    /// Messages sent (one per call) and received during measurement.
    pub messages_sent: u64,
    pub messages_received: u64,
    /// Message bytes (prefixes included) sent and received during measurement.
    pub message_bytes_sent: u64,
    pub message_bytes_received: u64,
    /// GOAWAY frames received.
    pub goaways: u64,
    /// `--stream`: the streaming calls' figures (absent for unary calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<GrpcStreamResult>,
}

/// Streaming calls (`--stream`): a call is one stream of `messages_per_call` messages one way
/// (`server`: chunks received; `client`: chunks sent, one Count back) or both (`bidi`: each
/// chunk echoed before the next is sent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrpcStreamResult {
    /// `server`, `client` or `bidi`.
    pub kind: GrpcStream,
    /// `--stream-messages`: chunks per call (asked for, sent, or echoed).
    pub messages_per_call: u32,
    /// Data bytes of each chunk (`--message-size`).
    pub message_size: u32,
    /// Messages received per second over the measured window (`messages_received` / duration).
    pub messages_per_s: f64,
    /// Per-message latency, gRPC's own benchmark's: from the call's start, or from the call's
    /// previous message received, to each message received (`bidi`: each echo's round trip;
    /// `server`: the gap between chunks, 0 for chunks read together; `client`: the one Count,
    /// the call's latency). Read from the merged histogram (`histograms.message_latency_us`).
    pub message_latency_us: Latency,
}

impl GrpcResult {
    /// The blocks of several threads or hosts as one: counts summed, the server's settings the
    /// first that came.
    pub fn merge(gs: &[&GrpcResult]) -> GrpcResult {
        let first = gs.first().copied().cloned().unwrap_or_default();
        let sum = |f: fn(&GrpcResult) -> u64| gs.iter().map(|g| f(g)).sum();
        GrpcResult {
            max_concurrent_streams: gs.iter().find_map(|g| g.max_concurrent_streams),
            status_codes: super::merge::add_counts(gs.iter().map(|g| &g.status_codes)),
            failures: super::merge::add_counts(gs.iter().map(|g| &g.failures)),
            messages_sent: sum(|g| g.messages_sent),
            messages_received: sum(|g| g.messages_received),
            message_bytes_sent: sum(|g| g.message_bytes_sent),
            message_bytes_received: sum(|g| g.message_bytes_received),
            goaways: sum(|g| g.goaways),
            ..first
        }
    }

    /// Calls that ended with grpc-status 0.
    pub fn ok_calls(&self) -> u64 {
        self.status_codes.get("OK").copied().unwrap_or(0)
    }

    /// Why no call succeeded when calls were answered but every one failed by gRPC's rules
    /// (HTTP 200 with `grpc-status: 13`, say): `None` when one ended OK or none was answered
    /// (the socket errors say why then).
    pub fn no_success(&self, answered: u64) -> Option<String> {
        if answered == 0 || self.ok_calls() > 0 || self.failures.is_empty() {
            return None;
        }
        let mut causes: Vec<String> = self
            .status_codes
            .iter()
            .map(|(code, n)| format!("{n} x {code}"))
            .collect();
        causes.extend(
            self.failures
                .iter()
                .filter(|(cause, _)| *cause != "grpc-status")
                .map(|(cause, n)| format!("{n} x {cause}")),
        );
        Some(format!(
            "no call succeeded: every answered call failed ({})",
            causes.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_answered_200_that_all_failed_succeeded_at_nothing_and_say_by_what() {
        let g = GrpcResult {
            status_codes: [("INTERNAL".to_string(), 40)].into(),
            failures: [
                ("grpc-status".to_string(), 40),
                ("no trailers".to_string(), 2),
            ]
            .into(),
            ..Default::default()
        };
        let why = g.no_success(42).unwrap();
        assert_eq!(
            why,
            "no call succeeded: every answered call failed (40 x INTERNAL, 2 x no trailers)"
        );
        let mut one_ok = g.clone();
        one_ok.status_codes.insert("OK".into(), 1);
        assert_eq!(one_ok.no_success(43), None);
        assert_eq!(GrpcResult::default().no_success(0), None);
    }

    #[test]
    fn two_threads_blocks_merge_into_their_sums_by_code_and_cause() {
        let a = GrpcResult {
            protocol: "h2c".into(),
            method: "/serverbench.Bench/Sum".into(),
            status_codes: [("OK".to_string(), 5), ("INTERNAL".to_string(), 1)].into(),
            failures: [("grpc-status".to_string(), 1)].into(),
            messages_sent: 6,
            messages_received: 5,
            ..Default::default()
        };
        let b = GrpcResult {
            max_concurrent_streams: Some(100),
            status_codes: [("OK".to_string(), 2)].into(),
            failures: [("no trailers".to_string(), 3)].into(),
            messages_sent: 5,
            ..a.clone()
        };
        let m = GrpcResult::merge(&[&a, &b]);
        assert_eq!(m.ok_calls(), 7);
        assert_eq!(m.status_codes["INTERNAL"], 1);
        assert_eq!(m.failures["grpc-status"], 1);
        assert_eq!(m.failures["no trailers"], 3);
        assert_eq!((m.messages_sent, m.messages_received), (11, 10));
        assert_eq!(m.max_concurrent_streams, Some(100));
        assert_eq!(m.method, "/serverbench.Bench/Sum");
    }
}
