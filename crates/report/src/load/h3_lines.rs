//! `serverbench load`'s HTTP/3 lines: streams and the server's limits, 0-RTT accepted of
//! attempted, datagrams per send and receive call (GSO, GRO), packets lost, and the closes and
//! resets by QUIC transport and HTTP/3 error code. The handshakes are the TLS lines' (QUIC's
//! handshake is TLS 1.3's).

use serverbench_model::result::{Http3Result, QuicCounters};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The HTTP/3 block's lines.
pub(super) fn render(s: &mut String, h: &Http3Result) {
    let limit = match h.max_streams_bidi {
        Some(n) => format!("server max {n}"),
        None => "no server limit seen".to_string(),
    };
    let qpack = h
        .qpack_max_table_capacity
        .map_or(String::new(), |n| format!(", QPACK table {n}"));
    let _ = writeln!(
        s,
        "  HTTP/3       {} streams per connection ({limit}{qpack}), {} GOAWAY",
        h.streams, h.goaways
    );
    if let Some(z) = &h.zero_rtt {
        let _ = writeln!(
            s,
            "  0-RTT        {} accepted of {} attempted",
            z.accepted, z.attempted
        );
    }
    datagram_lines(s, &h.quic);
    let mut errors = Vec::new();
    if !h.transport_errors.is_empty() {
        errors.push(format!("transport {}", counts(&h.transport_errors)));
    }
    if !h.h3_errors.is_empty() {
        errors.push(format!("HTTP/3 {}", counts(&h.h3_errors)));
    }
    if h.stream_resets > 0 {
        errors.push(format!("{} stream resets received", h.stream_resets));
    }
    if !errors.is_empty() {
        let _ = writeln!(s, "  QUIC errors  {}", errors.join("; "));
    }
}

/// Datagrams and calls each way, what GSO and GRO did, the sockets, and the losses.
fn datagram_lines(s: &mut String, q: &QuicCounters) {
    let per = |n: Option<f64>, offload: bool, name: &str| {
        let used = if offload {
            format!(", {name}")
        } else {
            String::new()
        };
        n.map_or(String::new(), |n| format!(" ({n:.1} per call{used})"))
    };
    let _ = writeln!(
        s,
        "  Datagrams    {} sent{}, {} received{}; {} sockets",
        q.datagrams_sent,
        per(q.datagrams_per_send(), q.gso, "GSO"),
        q.datagrams_received,
        per(q.datagrams_per_recv(), q.gro, "GRO"),
        q.socket
    );
    let _ = writeln!(
        s,
        "  Losses       {} packets ({} bytes) lost, {} congestion events",
        q.packets_lost, q.bytes_lost, q.congestion_events
    );
}

/// `PROTOCOL_VIOLATION 1, local: IDLE_TIMEOUT 2`.
fn counts(m: &BTreeMap<String, u64>) -> String {
    let c: Vec<String> = m.iter().map(|(c, n)| format!("{c} {n}")).collect();
    c.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::result::{QuicSocket, ZeroRttResult};

    fn h3() -> Http3Result {
        Http3Result {
            streams: 16,
            max_streams_bidi: Some(100),
            qpack_max_table_capacity: Some(0),
            goaways: 1,
            zero_rtt: Some(ZeroRttResult {
                attempted: 50,
                accepted: 45,
            }),
            quic: QuicCounters {
                datagrams_sent: 1200,
                datagrams_received: 2400,
                send_calls: 600,
                recv_calls: 1000,
                packets_lost: 12,
                bytes_lost: 14_000,
                congestion_events: 3,
                gso: true,
                socket: QuicSocket::PerConnection,
                ..Default::default()
            },
            transport_errors: [("local: IDLE_TIMEOUT".to_string(), 2)].into(),
            h3_errors: [("H3_MESSAGE_ERROR".to_string(), 3)].into(),
            stream_resets: 3,
            ..Default::default()
        }
    }

    #[test]
    fn the_http3_lines_name_the_limits_0rtt_datagrams_per_call_losses_and_codes() {
        let mut s = String::new();
        render(&mut s, &h3());
        assert!(
            s.contains("HTTP/3       16 streams per connection (server max 100, QPACK table 0), 1"),
            "{s}"
        );
        assert!(
            s.contains("0-RTT        45 accepted of 50 attempted"),
            "{s}"
        );
        assert!(
            s.contains(
                "1200 sent (2.0 per call, GSO), 2400 received (2.4 per call); per-connection"
            ),
            "{s}"
        );
        assert!(
            s.contains("12 packets (14000 bytes) lost, 3 congestion events"),
            "{s}"
        );
        assert!(
            s.contains("transport local: IDLE_TIMEOUT 2; HTTP/3 H3_MESSAGE_ERROR 3; 3 stream"),
            "{s}"
        );
        assert!(s.lines().all(|l| l.chars().count() <= 120), "{s}");
    }

    #[test]
    fn a_quiet_http3_load_says_no_limit_seen_and_has_no_error_or_0rtt_line() {
        let quiet = Http3Result {
            streams: 1,
            ..Default::default()
        };
        let mut s = String::new();
        render(&mut s, &quiet);
        assert!(s.contains("(no server limit seen)"), "{s}");
        assert!(
            s.contains("Datagrams    0 sent, 0 received; per-connection sockets"),
            "{s}"
        );
        assert!(!s.contains("0-RTT") && !s.contains("QUIC errors"), "{s}");
    }
}
