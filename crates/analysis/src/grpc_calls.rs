//! The gRPC side of a protocol row ([`crate::protocol::ProtocolRow::grpc`]): the method, the
//! streams asked for and the server's limit, and every call of the successful laps by how it
//! ended: OK, a non-zero `grpc-status` by its code's name, or a failure of another cause (no
//! trailers, an HTTP status, a content type, the framing, a reset stream, a call that timed out
//! or whose connection failed). Counts are summed
//! over the laps; nothing is averaged.

use crate::protocol::StreamLimit;
use serde::Serialize;
use serverbench_model::result::GrpcResult;
use serverbench_results::record::LapRecord;
use std::collections::BTreeMap;

/// The cause under which the engine counts a call that ended with a non-zero `grpc-status`
/// (its code is in the status counts instead).
const STATUS_CAUSE: &str = "grpc-status";

/// Calls of one server x scenario x profile, over its successful laps.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GrpcCalls {
    /// `/package.Service/Method`.
    pub method: String,
    /// Concurrent calls per connection asked for.
    pub streams: u32,
    pub max_concurrent_streams: StreamLimit,
    /// Calls that ended with `grpc-status: 0`.
    pub ok: u64,
    /// Calls that ended with another status, by its code's name (`INTERNAL`, or the number
    /// sent when gRPC defines no such code).
    pub statuses: BTreeMap<String, u64>,
    /// Calls that failed without a non-zero status, by cause (`no trailers`, `http status`,
    /// `content-type`, `framing`, `verify`, reset streams, `timeout`, `connect`, `read`,
    /// `write`, `tls`).
    pub failures: BTreeMap<String, u64>,
}

impl GrpcCalls {
    /// Calls that failed, whatever the cause.
    pub fn failed(&self) -> u64 {
        self.statuses.values().sum::<u64>() + self.failures.values().sum::<u64>()
    }
}

/// The calls of `laps` (one server x scenario x profile), `None` when no lap kept a gRPC
/// block.
pub fn grpc_calls(laps: &[&LapRecord]) -> Option<GrpcCalls> {
    let blocks: Vec<&GrpcResult> = laps
        .iter()
        .filter_map(|r| r.load.as_ref()?.grpc.as_ref())
        .collect();
    let first = blocks.first()?;
    let mut out = GrpcCalls {
        method: first.method.clone(),
        streams: laps[0].params.transport.streams.unwrap_or(first.streams),
        max_concurrent_streams: match blocks.iter().find_map(|b| b.max_concurrent_streams) {
            Some(m) => StreamLimit::Max(m),
            None => StreamLimit::Unlimited,
        },
        ..GrpcCalls::default()
    };
    for errors in laps.iter().filter_map(|r| r.load.as_ref()?.errors.as_ref()) {
        let transport = [
            ("timeout", errors.timeout),
            ("connect", errors.connect),
            ("read", errors.read),
            ("write", errors.write),
            ("tls", errors.tls),
        ];
        for (cause, n) in transport.into_iter().filter(|(_, n)| *n > 0) {
            *out.failures.entry(cause.to_string()).or_insert(0) += n;
        }
    }
    for b in &blocks {
        for (code, n) in &b.status_codes {
            match code.as_str() {
                "OK" => out.ok += n,
                _ => *out.statuses.entry(code.clone()).or_insert(0) += n,
            }
        }
        for (cause, n) in b.failures.iter().filter(|(c, _)| *c != STATUS_CAUSE) {
            *out.failures.entry(cause.clone()).or_insert(0) += n;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_results::record::Measurement;

    fn lap(codes: &[(&str, u64)], failures: &[(&str, u64)], limit: Option<u32>) -> LapRecord {
        let mut r = crate::fixture::lap();
        r.load = Some(Measurement {
            grpc: Some(GrpcResult {
                method: "/serverbench.Bench/Sum".into(),
                streams: 16,
                max_concurrent_streams: limit,
                status_codes: codes.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
                failures: failures.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
                ..GrpcResult::default()
            }),
            ..Measurement::default()
        });
        r
    }

    #[test]
    fn calls_of_every_lap_add_up_by_status_and_by_cause_without_counting_a_status_twice() {
        let a = lap(
            &[("OK", 90), ("INTERNAL", 10)],
            &[("grpc-status", 10)],
            None,
        );
        let b = lap(
            &[("OK", 95), ("INTERNAL", 2), ("UNAVAILABLE", 1)],
            &[("grpc-status", 3), ("no trailers", 4)],
            Some(100),
        );
        let c = grpc_calls(&[&a, &b]).unwrap();
        assert_eq!(c.ok, 185);
        assert_eq!(c.statuses["INTERNAL"], 12);
        assert_eq!(c.statuses["UNAVAILABLE"], 1);
        assert_eq!(c.failures.len(), 1);
        assert_eq!(c.failures["no trailers"], 4);
        assert_eq!(c.failed(), 17);
        assert_eq!(c.max_concurrent_streams, StreamLimit::Max(100));
        assert_eq!(c.method, "/serverbench.Bench/Sum");
    }

    #[test]
    fn calls_that_timed_out_or_lost_their_connection_are_failures_by_that_cause() {
        let mut a = lap(&[("OK", 90)], &[], None);
        let m = a.load.as_mut().unwrap();
        m.errors = Some(serverbench_model::result::Errors {
            timeout: 48,
            read: 2,
            ..Default::default()
        });
        let b = lap(&[("OK", 10)], &[], None);
        let c = grpc_calls(&[&a, &b]).unwrap();
        assert_eq!(c.failures["timeout"], 48);
        assert_eq!(c.failures["read"], 2);
        assert_eq!((c.failures.len(), c.failed()), (2, 50));
    }

    #[test]
    fn laps_without_a_grpc_block_have_no_grpc_calls() {
        let mut r = crate::fixture::lap();
        assert_eq!(grpc_calls(&[&r]), None);
        r.load = Some(Measurement::default());
        assert_eq!(grpc_calls(&[&r]), None);
    }
}
