//! The TCP echo drivers. [`Stream`] writes its message repeated, as fast as the socket takes
//! it, and counts the echoes' bytes (after the end, the echoes of what was measured are
//! drained); [`PingPong`] writes one `size`-byte message at a time (`-p N`: N in flight) and
//! completes it when its whole echo is back.

use super::Driver;
use crate::conn::Inflight;
use crate::http::Response;
use crate::stats::Stats;
use crate::worker::{Worker, URING_STREAM_CHUNK};
use serverbench_model::result::{ProtocolResult, TcpPingPongResult, TcpStreamResult};

/// TCP stream: the message, repeated past the largest write so any offset has a whole write.
pub struct Stream {
    pattern: Vec<u8>,
    message_len: usize,
}

impl Stream {
    pub fn new(message: &[u8]) -> Self {
        let len = URING_STREAM_CHUNK + message.len();
        let mut pattern = Vec::with_capacity(len);
        while pattern.len() < len {
            pattern.extend_from_slice(message);
        }
        Stream {
            pattern,
            message_len: message.len(),
        }
    }
}

impl Driver for Stream {
    const STREAM: bool = true;

    fn stream(&self) -> Option<(&[u8], usize)> {
        Some((&self.pattern, self.message_len))
    }

    /// No requests: `flush` keeps the socket full.
    fn fill(_w: &mut Worker<'_, Self>, _i: usize, _now: u64) {}

    fn issue(_w: &mut Worker<'_, Self>, _i: usize, _intended: u64, _now: u64) {}

    #[inline]
    fn consume(w: &mut Worker<'_, Self>, i: usize, data: &[u8], _now: u64) -> bool {
        w.conns[i].rd += data.len() as u64;
        true
    }
}

/// TCP ping-pong: the message, and its size (each echo's exact length).
pub struct PingPong {
    message: Vec<u8>,
}

impl PingPong {
    pub fn new(size: usize) -> Self {
        PingPong {
            message: vec![b'x'; size],
        }
    }
}

impl Driver for PingPong {
    fn first_sizes(&self) -> Vec<usize> {
        vec![self.message.len()]
    }

    #[inline]
    fn issue(w: &mut Worker<'_, Self>, i: usize, intended: u64, now: u64) {
        let c = &mut w.conns[i];
        c.out.extend_from_slice(&w.proto.message);
        c.inflight.push_back(Inflight {
            intended,
            sent: now,
            url: 0,
        });
        w.issued += 1;
    }

    #[inline]
    fn consume(w: &mut Worker<'_, Self>, i: usize, data: &[u8], now: u64) -> bool {
        let size = w.proto.message.len();
        w.conns[i].got += data.len();
        while w.conns[i].got >= size {
            let Some(req) = w.conns[i].inflight.pop_front() else {
                break;
            };
            w.conns[i].got -= size;
            w.complete(i, req, Response::status_only(0), now);
        }
        true
    }

    /// The rest of the echo is exact; the window's other echoes are the same size, so the
    /// mark is never a prediction the guard must watch.
    fn lowat(w: &mut Worker<'_, Self>, i: usize, window: bool) -> (usize, bool) {
        let got = w.conns[i].got;
        let exact = w.proto.message.len().saturating_sub(got);
        (w.window_lowat(i, window, Some(exact), got).0, false)
    }
}

/// One thread's TCP stream block: the bytes whose echo never came back.
pub(crate) fn stream_result(s: &Stats) -> ProtocolResult {
    ProtocolResult::TcpStream(TcpStreamResult {
        bytes_in_flight: s.bytes_in_flight,
        ..Default::default()
    })
}

/// One thread's TCP ping-pong block (its figures are the common ones).
pub(crate) fn ping_pong_result() -> ProtocolResult {
    ProtocolResult::TcpPingPong(TcpPingPongResult::default())
}
