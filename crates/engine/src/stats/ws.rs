//! Per-thread WebSocket statistics: upgrades and how long they took (an HdrHistogram, merged
//! like the message latency), messages sent, close frames by code, and failures by cause.

use super::new_histogram;
use hdrhistogram::Histogram;
use serverbench_wire::ws::{HandshakeError, ProtocolError};

/// Why a WebSocket connection failed: each is counted in `errors.ws` and by name in the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsCause {
    /// The server's answer to the upgrade was not a WebSocket handshake.
    Upgrade(HandshakeError),
    /// A frame broke RFC 6455 (a masked server frame, a reserved opcode...).
    Protocol(ProtocolError),
    /// An echo whose bytes, length or kind differ from the message sent.
    WrongEcho,
    /// A data frame where a pong was due (`--ws-ping`), or with no message in flight.
    UnexpectedMessage,
    /// The server closed the connection (a close frame, or EOF) without being asked.
    UnexpectedClose,
}

impl WsCause {
    /// The name in the result (`status`, `wrong accept`, `masked frame`, `wrong echo`...).
    pub fn name(self) -> &'static str {
        match self {
            WsCause::Upgrade(e) => e.name(),
            WsCause::Protocol(e) => e.name(),
            WsCause::WrongEcho => "wrong echo",
            WsCause::UnexpectedMessage => "unexpected message",
            WsCause::UnexpectedClose => "unexpected close",
        }
    }

    /// A failed upgrade, reported apart from errors on an upgraded connection.
    pub fn is_upgrade(self) -> bool {
        matches!(self, WsCause::Upgrade(_))
    }
}

pub struct WsStats {
    /// From the connection being up (TLS included) to the 101 read, µs.
    pub upgrade: Histogram<u64>,
    pub upgrades: u64,
    pub messages_sent: u64,
    /// Close frames received, by code (`None`: a close without one). A handful at most.
    pub close_codes: Vec<(Option<u16>, u64)>,
    pub causes: Vec<(WsCause, u64)>,
}

impl Default for WsStats {
    fn default() -> Self {
        WsStats {
            upgrade: new_histogram(),
            upgrades: 0,
            messages_sent: 0,
            close_codes: Vec::new(),
            causes: Vec::new(),
        }
    }
}

fn bump<K: PartialEq>(list: &mut Vec<(K, u64)>, key: K, n: u64) {
    match list.iter_mut().find(|(k, _)| *k == key) {
        Some((_, m)) => *m += n,
        None => list.push((key, n)),
    }
}

impl WsStats {
    pub fn upgraded(&mut self, ns: u64) {
        self.upgrades += 1;
        self.upgrade.saturating_record(ns.div_ceil(1000).max(1));
    }

    pub fn closed(&mut self, code: Option<u16>) {
        bump(&mut self.close_codes, code, 1);
    }

    pub fn failed(&mut self, cause: WsCause) {
        bump(&mut self.causes, cause, 1);
    }

    pub fn merge(&mut self, o: &WsStats) {
        self.upgrade.add(&o.upgrade).expect("same histogram bounds");
        self.upgrades += o.upgrades;
        self.messages_sent += o.messages_sent;
        for &(code, n) in &o.close_codes {
            bump(&mut self.close_codes, code, n);
        }
        for &(cause, n) in &o.causes {
            bump(&mut self.causes, cause, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_threads_add_upgrades_closes_and_causes() {
        let mut a = WsStats::default();
        a.upgraded(150_000);
        a.closed(Some(1000));
        a.failed(WsCause::WrongEcho);
        let mut b = WsStats::default();
        b.upgraded(50_000);
        b.closed(Some(1000));
        b.closed(None);
        b.failed(WsCause::Upgrade(HandshakeError::WrongAccept));
        b.failed(WsCause::WrongEcho);
        a.merge(&b);
        assert_eq!((a.upgrades, a.upgrade.len()), (2, 2));
        assert_eq!(a.close_codes, [(Some(1000), 2), (None, 1)]);
        let names: Vec<_> = a.causes.iter().map(|(c, n)| (c.name(), *n)).collect();
        assert_eq!(names, [("wrong echo", 2), ("wrong accept", 1)]);
    }
}
