//! One connection's WebSocket state: where it is in its life (upgrading, open, closing), the
//! frame decoder and the bytes of a frame not whole yet, its mask generator, and how far the
//! echo of the message at the head of the window has been matched.

use serverbench_wire::ws::{Accept, Decoder, Rng, Role};

/// Where a WebSocket connection is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WsPhase {
    /// The upgrade request went out at `since`; the 101 must carry `accept`.
    Upgrading { accept: Accept, since: u64 },
    /// Upgraded: messages flow.
    Open,
    /// `--reconnect-every`: our close 1000 went out at `since`; the server's close is due.
    Closing { since: u64 },
}

pub struct WsConn {
    pub phase: WsPhase,
    pub decoder: Decoder,
    /// Received bytes not decoded yet: the rest of the 101's head, or a frame split across reads.
    pub pending: Vec<u8>,
    /// Masks (and the handshake key) for this connection.
    pub rng: Rng,
    /// Bytes of the echo at the head of the window matched so far (its frames may be split).
    pub echoed: usize,
}

impl WsConn {
    /// A connection about to send its upgrade, with masks from `seed`. The decoder does not
    /// check UTF-8: every echoed byte is compared with what was sent, which is stricter.
    pub fn new(seed: u64, accept: Accept, now: u64) -> WsConn {
        WsConn {
            phase: WsPhase::Upgrading { accept, since: now },
            decoder: Decoder::new(Role::Client).with_utf8_check(false),
            pending: Vec::new(),
            rng: Rng::new(seed),
            echoed: 0,
        }
    }

    pub fn is_open(&self) -> bool {
        self.phase == WsPhase::Open
    }

    /// Our close went out: the server's close (or its EOF) ends the connection as asked.
    pub fn is_closing(&self) -> bool {
        matches!(self.phase, WsPhase::Closing { .. })
    }

    /// When the upgrade or our close went out, while its answer is awaited (the timeout
    /// watches it).
    pub fn waiting_since(&self) -> Option<u64> {
        match self.phase {
            WsPhase::Upgrading { since, .. } | WsPhase::Closing { since } => Some(since),
            WsPhase::Open => None,
        }
    }
}
