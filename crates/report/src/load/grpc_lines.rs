//! `serverbench load`'s gRPC lines: the method and streams, calls by status code, messages
//! and message bytes both ways, a stream's messages/s and per-message latency, and the
//! failures by cause beside `errors.verdict`.

use serverbench_model::result::GrpcResult;
use std::fmt::Write;

/// The gRPC block's lines.
pub(super) fn render(s: &mut String, g: &GrpcResult) {
    let limit = g
        .max_concurrent_streams
        .map_or(String::new(), |n| format!(" (server max {n})"));
    let deadline = g
        .deadline_ms
        .map_or(String::new(), |d| format!(", deadline {d} ms"));
    let _ = writeln!(
        s,
        "  gRPC         {} over {}, {} calls per connection{limit}{deadline}, {} GOAWAY",
        g.method, g.protocol, g.streams, g.goaways
    );
    if !g.status_codes.is_empty() {
        let codes: Vec<String> = (g.status_codes.iter())
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        let _ = writeln!(s, "  grpc-status  {}", codes.join(", "));
    }
    let _ = writeln!(
        s,
        "  Messages     {} sent, {} received ({} and {} bytes)",
        g.messages_sent, g.messages_received, g.message_bytes_sent, g.message_bytes_received
    );
    if let Some(st) = &g.stream {
        let _ = writeln!(
            s,
            "  Stream       {}: {} messages per call of {} data bytes, {:.1} messages/s received",
            st.kind, st.messages_per_call, st.message_size, st.messages_per_s
        );
        super::summary::latency(s, "Per message", &st.message_latency_us);
    }
}

/// ` (grpc-status 12, no trailers 3)`: the causes of `errors.verdict` and the reset streams.
pub(super) fn failed_codes(g: &GrpcResult) -> String {
    let c: Vec<String> = (g.failures.iter())
        .filter(|(k, _)| !k.starts_with("RST_STREAM"))
        .map(|(c, n)| format!("{c} {n}"))
        .collect();
    format!(" ({})", c.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grpc_lines_name_the_method_the_codes_and_the_messages() {
        let g = GrpcResult {
            protocol: "h2c".into(),
            method: "/serverbench.Bench/Sum".into(),
            streams: 16,
            max_concurrent_streams: Some(100),
            status_codes: [("INTERNAL".to_string(), 9)].into(),
            failures: [("grpc-status".to_string(), 9)].into(),
            messages_sent: 9,
            ..Default::default()
        };
        let mut s = String::new();
        render(&mut s, &g);
        assert!(
            s.contains("/serverbench.Bench/Sum over h2c, 16 calls per connection (server max 100)")
        );
        assert!(s.contains("grpc-status  INTERNAL 9"));
        assert_eq!(failed_codes(&g), " (grpc-status 9)");
        assert!(!s.contains("Stream"), "unary: {s}");
    }

    #[test]
    fn a_stream_adds_its_kind_messages_per_second_and_per_message_latency() {
        let g = GrpcResult {
            method: "/serverbench.Bench/BidiEcho".into(),
            stream: Some(serverbench_model::result::GrpcStreamResult {
                kind: serverbench_model::spec::GrpcStream::Bidi,
                messages_per_call: 100,
                message_size: 32,
                messages_per_s: 81234.5,
                message_latency_us: serverbench_model::result::Latency {
                    p50: 180.0,
                    ..Default::default()
                },
            }),
            ..Default::default()
        };
        let mut s = String::new();
        render(&mut s, &g);
        assert!(s.contains(
            "  Stream       bidi: 100 messages per call of 32 data bytes, 81234.5 messages/s received"
        ), "{s}");
        assert!(s.contains("  Per message  mean "), "{s}");
        assert!(s.contains("p50 180µs"), "{s}");
        assert!(s.lines().all(|l| l.chars().count() <= 120), "{s}");
    }
}
