//! Per-thread WebSocket statistics: upgrades and how long they took (an HdrHistogram, merged
//! like the message latency), messages sent, closes by code, upgrades unanswered at the end,
//! and failures by cause.

use super::new_histogram;
use hdrhistogram::Histogram;
use serverbench_wire::ws::{HandshakeError, ProtocolError};

/// Why a WebSocket connection failed: each is counted in `errors.protocol` and by name in the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsCause {
    /// The server's answer to the upgrade was not a WebSocket handshake.
    Upgrade(HandshakeError),
    /// No answer to the upgrade within the load's `--timeout`.
    UpgradeTimeout,
    /// The server closed the connection before answering the upgrade.
    UpgradeClosed,
    /// A frame broke RFC 6455 (a masked server frame, a reserved opcode...).
    Protocol(ProtocolError),
    /// An echo whose bytes, length or kind differ from the message sent.
    WrongEcho,
    /// A data frame where a pong was due (`--ws-ping`), or with no message in flight.
    UnexpectedMessage,
    /// The server closed the connection (a close frame, or EOF) without being asked.
    UnexpectedClose,
    /// `--reconnect-every`: no answer to our close within the load's `--timeout`.
    CloseTimeout,
}

impl WsCause {
    /// The name in the result (`status`, `wrong accept`, `masked frame`, `wrong echo`...).
    pub fn name(self) -> &'static str {
        match self {
            WsCause::Upgrade(e) => e.name(),
            WsCause::UpgradeTimeout => "timeout",
            WsCause::UpgradeClosed => "closed before answering",
            WsCause::Protocol(e) => e.name(),
            WsCause::WrongEcho => "wrong echo",
            WsCause::UnexpectedMessage => "unexpected message",
            WsCause::UnexpectedClose => "unexpected close",
            WsCause::CloseTimeout => "close timeout",
        }
    }

    /// A failed upgrade, reported apart from errors on an upgraded connection.
    pub fn is_upgrade(self) -> bool {
        matches!(
            self,
            WsCause::Upgrade(_) | WsCause::UpgradeTimeout | WsCause::UpgradeClosed
        )
    }
}

pub struct WsStats {
    /// From the connection being up (TLS included) to the 101 read, µs.
    pub upgrade: Histogram<u64>,
    pub upgrades: u64,
    pub messages_sent: u64,
    /// Closes by code, a handful at most: each close frame's (1005 for one without a code),
    /// and 1006 for a connection that ended without one.
    pub close_codes: Vec<(u16, u64)>,
    pub causes: Vec<(WsCause, u64)>,
    /// Upgrades sent and not answered when the run ended (counted once, at the end).
    pub upgrades_unanswered: u64,
}

impl Default for WsStats {
    fn default() -> Self {
        WsStats {
            upgrade: new_histogram(),
            upgrades: 0,
            messages_sent: 0,
            close_codes: Vec::new(),
            causes: Vec::new(),
            upgrades_unanswered: 0,
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

    pub fn closed(&mut self, code: u16) {
        bump(&mut self.close_codes, code, 1);
    }

    pub fn failed(&mut self, cause: WsCause) {
        bump(&mut self.causes, cause, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upgrades_closes_and_causes_are_counted_and_named() {
        let mut a = WsStats::default();
        a.upgraded(150_000);
        a.closed(1000);
        a.failed(WsCause::WrongEcho);
        a.upgrades_unanswered = 1;
        a.upgraded(50_000);
        a.closed(1000);
        a.closed(1011);
        a.failed(WsCause::Upgrade(HandshakeError::WrongAccept));
        a.failed(WsCause::WrongEcho);
        a.failed(WsCause::UpgradeTimeout);
        a.upgrades_unanswered = 2;
        assert_eq!((a.upgrades, a.upgrade.len()), (2, 2));
        assert_eq!(a.close_codes, [(1000, 2), (1011, 1)]);
        assert_eq!(a.upgrades_unanswered, 2);
        let names: Vec<_> = a.causes.iter().map(|(c, n)| (c.name(), *n)).collect();
        assert_eq!(
            names,
            [("wrong echo", 2), ("wrong accept", 1), ("timeout", 1)]
        );
    }
}
