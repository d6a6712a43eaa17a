//! Per-thread statistics of gRPC calls: calls by `grpc-status` code, failures by cause,
//! messages and message bytes both ways.

use hdrhistogram::Histogram;
use serverbench_model::result::GrpcResult;
use serverbench_wire::grpc::Code;
use std::collections::BTreeMap;

/// Why a call failed by gRPC's rules (each is one `errors.verdict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrpcCause {
    /// A non-zero `grpc-status` (its code; `u16::MAX`: not a number).
    Status(u16),
    /// `:status` other than 200.
    HttpStatus,
    /// `content-type` absent or not `application/grpc`.
    ContentType,
    /// A message longer or shorter than its prefix says, or compressed.
    Framing,
    /// The stream ended without a `grpc-status` (no trailers).
    NoTrailers,
    /// `--verify`: the reply is not the expected one.
    Verify,
    /// `--stream`: a call that ended OK with another number of messages than it asked for
    /// (server, bidi) or one Count (client).
    MessageCount,
}

impl GrpcCause {
    /// Its name in the result's `failures`.
    pub fn name(self) -> &'static str {
        match self {
            GrpcCause::Status(_) => "grpc-status",
            GrpcCause::HttpStatus => "http status",
            GrpcCause::ContentType => "content-type",
            GrpcCause::Framing => "framing",
            GrpcCause::NoTrailers => "no trailers",
            GrpcCause::Verify => "verify",
            GrpcCause::MessageCount => "message count",
        }
    }
}

const CAUSES: usize = 7;

fn slot(c: GrpcCause) -> usize {
    match c {
        GrpcCause::Status(_) => 0,
        GrpcCause::HttpStatus => 1,
        GrpcCause::ContentType => 2,
        GrpcCause::Framing => 3,
        GrpcCause::NoTrailers => 4,
        GrpcCause::Verify => 5,
        GrpcCause::MessageCount => 6,
    }
}

const CAUSE_NAMES: [GrpcCause; CAUSES] = [
    GrpcCause::Status(0),
    GrpcCause::HttpStatus,
    GrpcCause::ContentType,
    GrpcCause::Framing,
    GrpcCause::NoTrailers,
    GrpcCause::Verify,
    GrpcCause::MessageCount,
];

#[derive(Debug, Clone, Default)]
pub struct GrpcStats {
    /// Calls by grpc-status code 0 to 16, and other codes by number.
    pub codes: [u64; 17],
    pub other_codes: Vec<(u16, u64)>,
    pub failures: [u64; CAUSES],
    pub messages_sent: u64,
    pub messages_received: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// `--stream`: each message's latency in µs (made with the first message measured).
    pub message_latency: Option<Histogram<u64>>,
}

impl GrpcStats {
    /// A call ended with this grpc-status.
    #[inline]
    pub fn status(&mut self, code: u16) {
        match self.codes.get_mut(code as usize) {
            Some(n) => *n += 1,
            None => match self.other_codes.iter_mut().find(|(c, _)| *c == code) {
                Some((_, n)) => *n += 1,
                None => self.other_codes.push((code, 1)),
            },
        }
    }

    pub fn failed(&mut self, cause: GrpcCause) {
        self.failures[slot(cause)] += 1;
    }

    /// Calls by code name, failures by cause, messages and bytes into `r`.
    pub fn fill(&self, r: &mut GrpcResult) {
        let mut codes = BTreeMap::new();
        for (n, &count) in self.codes.iter().enumerate().filter(|(_, &c)| c > 0) {
            let name = Code::from_u32(n as u32).map_or_else(|| n.to_string(), |c| c.name().into());
            codes.insert(name, count);
        }
        for &(code, count) in &self.other_codes {
            let name = match code {
                u16::MAX => "unreadable".to_string(),
                c => c.to_string(),
            };
            *codes.entry(name).or_insert(0) += count;
        }
        r.status_codes = codes;
        r.failures = CAUSE_NAMES
            .iter()
            .zip(self.failures)
            .filter(|(_, n)| *n > 0)
            .map(|(c, n)| (c.name().to_string(), n))
            .collect();
        r.messages_sent = self.messages_sent;
        r.messages_received = self.messages_received;
        r.message_bytes_sent = self.bytes_sent;
        r.message_bytes_received = self.bytes_received;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_named_and_failures_counted_by_cause() {
        let mut s = GrpcStats::default();
        s.status(0);
        s.status(13);
        s.status(13);
        s.status(99);
        s.failed(GrpcCause::Status(13));
        s.failed(GrpcCause::NoTrailers);
        let mut r = GrpcResult::default();
        s.fill(&mut r);
        assert_eq!(r.status_codes["OK"], 1);
        assert_eq!(r.status_codes["INTERNAL"], 2);
        assert_eq!(r.status_codes["99"], 1);
        assert_eq!(r.failures["grpc-status"], 1);
        assert_eq!(r.failures["no trailers"], 1);
    }
}
