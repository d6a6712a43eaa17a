//! Per-thread statistics of HTTP/3 connections: the server's SETTINGS as the first connection
//! saw them, GOAWAYs, QUIC and HTTP/3 errors by name, stream resets, 0-RTT, and the QUIC
//! counters of every connection the thread opened (summed as each closes, and at the end).

use std::collections::BTreeMap;

/// The UDP and loss counters of QUIC connections, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuicTotals {
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    /// `sendmsg` calls (with GSO, one carries several datagrams).
    pub send_calls: u64,
    /// `recvmsg`/`recvmmsg` calls that returned datagrams (with GRO, one carries several).
    pub recv_calls: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub packets_lost: u64,
    pub bytes_lost: u64,
    pub congestion_events: u64,
}

impl QuicTotals {
    pub fn add(&mut self, o: &QuicTotals) {
        self.datagrams_sent += o.datagrams_sent;
        self.datagrams_received += o.datagrams_received;
        self.send_calls += o.send_calls;
        self.recv_calls += o.recv_calls;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        self.packets_lost += o.packets_lost;
        self.bytes_lost += o.bytes_lost;
        self.congestion_events += o.congestion_events;
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct H3Stats {
    /// The server's SETTINGS_QPACK_MAX_TABLE_CAPACITY, on the first connection that got them.
    pub qpack_max_table_capacity: Option<u64>,
    /// GOAWAY frames received during measurement.
    pub goaways: u64,
    /// Connections closed with a QUIC transport error, by its name (`local: ` when we closed).
    pub transport_errors: BTreeMap<String, u64>,
    /// HTTP/3 errors by name: connection closes with an H3 code, stream resets, and what this
    /// client found wrong in the server's frames.
    pub h3_errors: BTreeMap<String, u64>,
    /// RESET_STREAM frames received on request streams.
    pub stream_resets: u64,
    /// `--0rtt`: connections that sent their request in 0-RTT, and those whose 0-RTT the
    /// server accepted.
    pub zero_rtt_attempted: u64,
    pub zero_rtt_accepted: u64,
    pub quic: QuicTotals,
    /// Whether the sockets sent with GSO / received with GRO (all of them).
    pub gso: bool,
    pub gro: bool,
}

impl H3Stats {
    pub fn transport_error(&mut self, name: String) {
        *self.transport_errors.entry(name).or_default() += 1;
    }

    pub fn h3_error(&mut self, name: String) {
        *self.h3_errors.entry(name).or_default() += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_add_up_by_name_and_totals_by_field() {
        let mut s = H3Stats::default();
        s.h3_error("H3_MESSAGE_ERROR".into());
        s.h3_error("H3_MESSAGE_ERROR".into());
        s.transport_error("PROTOCOL_VIOLATION".into());
        assert_eq!(s.h3_errors["H3_MESSAGE_ERROR"], 2);
        assert_eq!(s.transport_errors["PROTOCOL_VIOLATION"], 1);
        let one = QuicTotals {
            datagrams_sent: 3,
            send_calls: 1,
            ..QuicTotals::default()
        };
        s.quic.add(&one);
        s.quic.add(&one);
        assert_eq!((s.quic.datagrams_sent, s.quic.send_calls), (6, 2));
    }
}
