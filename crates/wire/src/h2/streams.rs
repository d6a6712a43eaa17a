//! The streams open on one connection, by id. A client opens streams 1, 3, 5, ... in order and
//! they close in any order, so a deque indexed by `(id - base) / 2` finds a stream in O(1), and
//! its front is the oldest stream still open (the one the request timeout watches).

use crate::Inflight;
use std::collections::VecDeque;

/// One open stream: its request and the response so far.
#[derive(Debug, Clone)]
pub struct Stream {
    pub req: Inflight,
    /// The final status (0: no final HEADERS yet).
    pub status: u16,
    pub body_len: u64,
    pub body_hash: u64,
    /// DATA bytes received since the last stream WINDOW_UPDATE.
    pub unacked: u32,
    /// What the server lets us send on this stream (request bodies).
    pub send_window: i64,
    /// Request body bytes sent so far.
    pub body_sent: usize,
    /// Request body bytes that may go out (all of it, or a ping-pong call's messages sent).
    pub released: usize,
    /// A ping-pong call's END_STREAM went out.
    pub ended: bool,
    /// Wire bytes of this stream's frames so far (headers included).
    pub wire: u32,
    /// gRPC: what the call's headers, messages and trailers said so far.
    pub call: Call,
}

/// A gRPC call as its response arrives: the fields judged and the length-prefixed messages
/// (RFC-less, see `crates/wire/src/grpc/`), counted without copying.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Call {
    /// `content-type` of the response headers (see [`crate::h2::hpack::Fields`]).
    pub content_type: Option<u16>,
    /// `grpc-status` of the trailers (or of a trailers-only response).
    pub grpc_status: Option<u16>,
    /// A header block ended the stream: trailers (or a trailers-only response) arrived.
    pub trailers: bool,
    /// Whole messages received.
    pub messages: u32,
    /// A message's prefix had a flag other than 0 (we accept no compression).
    pub bad_flag: bool,
    /// A ping-pong call ([`crate::h2::SendMode::PingPong`]): messages released to be sent.
    pub sent: u32,
    /// Streaming calls: when the call started or its last message came (monotonic ns).
    pub last_at: u64,
    /// Bytes of the current prefix read (0 to 4; at 5 the message starts).
    have: u8,
    prefix: [u8; 4],
    /// Bytes of the current message still to come.
    left: u32,
}

impl Call {
    /// A call started at `at` (monotonic ns).
    pub fn started(at: u64) -> Call {
        Call {
            last_at: at,
            ..Call::default()
        }
    }

    /// Takes DATA content bytes: prefixes read, messages skipped and counted.
    pub fn deframe(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.left > 0 {
                let n = (self.left as usize).min(data.len());
                self.left -= n as u32;
                data = &data[n..];
                if self.left == 0 {
                    self.messages += 1;
                }
                continue;
            }
            let b = data[0];
            data = &data[1..];
            match self.have {
                0 => self.bad_flag |= b != 0,
                k => self.prefix[k as usize - 1] = b,
            }
            self.have += 1;
            if self.have == 5 {
                self.have = 0;
                self.left = u32::from_be_bytes(self.prefix);
                if self.left == 0 {
                    self.messages += 1;
                }
            }
        }
    }

    /// `got` messages came at `now`: the first timed from the call's start or its last
    /// message, the others at 0 (they came in the same read); recorded in µs into `h`.
    pub fn timed(&mut self, got: u32, now: u64, h: Option<&mut hdrhistogram::Histogram<u64>>) {
        if let Some(h) = h {
            h.saturating_record(now.saturating_sub(self.last_at).div_ceil(1000));
            if got > 1 {
                h.saturating_record_n(0, (got - 1) as u64);
            }
        }
        self.last_at = now;
    }

    /// The DATA ended on a message boundary (no prefix or message cut short).
    pub fn framed(&self) -> bool {
        self.have == 0 && self.left == 0
    }
}

#[derive(Debug, Default)]
pub struct Streams {
    /// The id of `slots[0]`.
    base: u32,
    slots: VecDeque<Option<Stream>>,
    open: u32,
}

impl Streams {
    pub fn open(&self) -> u32 {
        self.open
    }

    /// Adds stream `id`, the next id after every stream added before.
    pub fn push(&mut self, id: u32, s: Stream) {
        if self.slots.is_empty() {
            self.base = id;
        }
        debug_assert_eq!(id, self.base + 2 * self.slots.len() as u32);
        self.slots.push_back(Some(s));
        self.open += 1;
    }

    fn index(&self, id: u32) -> Option<usize> {
        if id < self.base || id % 2 != self.base % 2 {
            return None;
        }
        let i = ((id - self.base) / 2) as usize;
        (i < self.slots.len()).then_some(i)
    }

    pub fn get_mut(&mut self, id: u32) -> Option<&mut Stream> {
        let i = self.index(id)?;
        self.slots[i].as_mut()
    }

    /// Closes stream `id`; returns it if it was open.
    pub fn remove(&mut self, id: u32) -> Option<Stream> {
        let i = self.index(id)?;
        let s = self.slots[i].take()?;
        self.open -= 1;
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
            self.base += 2;
        }
        Some(s)
    }

    /// Closes every stream above `last` (a GOAWAY's last stream id), handing each to `gone`;
    /// returns how many.
    pub fn remove_above(&mut self, last: u32, mut gone: impl FnMut(&Stream)) -> u32 {
        let mut n = 0;
        while let Some(slot) = self.slots.back() {
            let id = self.base + 2 * (self.slots.len() as u32 - 1);
            if id <= last {
                break;
            }
            if let Some(s) = slot {
                gone(s);
                n += 1;
            }
            self.slots.pop_back();
        }
        self.open -= n;
        n
    }

    /// The oldest stream still open.
    pub fn oldest(&self) -> Option<&Stream> {
        self.slots.front().and_then(Option::as_ref)
    }

    /// Every open stream (for a change of the server's initial window).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Stream> {
        self.slots.iter_mut().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(sent: u64) -> Stream {
        Stream {
            req: Inflight {
                intended: sent,
                sent,
                url: 0,
            },
            status: 0,
            body_len: 0,
            body_hash: 0,
            unacked: 0,
            send_window: 0,
            body_sent: 0,
            released: 0,
            ended: false,
            wire: 0,
            call: Call::default(),
        }
    }

    #[test]
    fn streams_closing_out_of_order_keep_the_oldest_in_front() {
        let mut s = Streams::default();
        for (n, id) in [1, 3, 5, 7].into_iter().enumerate() {
            s.push(id, stream(n as u64));
        }
        assert!(s.remove(3).is_some());
        assert_eq!(s.oldest().unwrap().req.sent, 0);
        assert!(s.remove(1).is_some());
        assert_eq!(
            s.oldest().unwrap().req.sent,
            2,
            "stream 5 is the oldest now"
        );
        assert!(s.remove(1).is_none() && s.get_mut(2).is_none() && s.get_mut(9).is_none());
        assert_eq!(s.open(), 2);
    }

    #[test]
    fn a_goaway_closes_the_streams_above_its_last_id() {
        let mut s = Streams::default();
        for id in [1, 3, 5, 7, 9] {
            s.push(id, stream(0));
        }
        s.remove(7);
        let mut gone = Vec::new();
        assert_eq!(s.remove_above(3, |s| gone.push(s.req.sent)), 2);
        assert_eq!(gone, vec![0, 0], "5 and 9 were open, 7 had closed");
        assert_eq!(s.open(), 2);
        assert!(s.get_mut(5).is_none() && s.get_mut(3).is_some());
    }
}

#[cfg(test)]
mod call_tests {
    use super::Call;

    fn call_of(chunks: &[&[u8]]) -> Call {
        let mut c = Call::default();
        for ch in chunks {
            c.deframe(ch);
        }
        c
    }

    #[test]
    fn messages_split_anywhere_are_counted_once_each() {
        let c = call_of(&[&[0, 0, 0], &[0, 2, 7], &[8, 0, 0, 0, 0, 0]]);
        assert_eq!((c.messages, c.framed(), c.bad_flag), (2, true, false));
    }

    #[test]
    fn a_message_longer_or_shorter_than_its_prefix_is_not_framed() {
        assert!(!call_of(&[&[0, 0, 0, 0, 2, 1, 2, 3]]).framed());
        assert!(!call_of(&[&[0, 0, 0, 0, 9, 1]]).framed());
        assert!(call_of(&[&[1, 0, 0, 0, 0]]).bad_flag);
    }
}
