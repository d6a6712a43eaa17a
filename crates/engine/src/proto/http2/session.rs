//! The HTTP/2 connection machinery every driver over HTTP/2 shares (the HTTP/2 driver and
//! gRPC's): the session opened on a connection, streams issued and counted against `-m` and
//! the server's limit, received bytes fed to the connection's protocol state, resets, GOAWAYs
//! and the connection replaced when it takes no more streams. A driver says what a stream
//! that ended whole means ([`OverH2::stream_ended`]); everything here is generic over it, so
//! each driver gets its own static copy (no dynamic dispatch on the hot path).

use super::super::Driver;
use crate::conn::{Inflight, State};
use crate::h2::{self, frame, Ctx, Event};
use crate::stats::{new_histogram, ErrorKind};
use crate::worker::Worker;

/// What a driver's HTTP/2 sessions are: `-m`, the window, `--verify`, the requests, gRPC.
#[derive(Debug, Clone, Copy)]
pub(crate) struct H2Config {
    /// `-m/--streams`: concurrent streams per connection.
    pub streams: u32,
    /// The receive window advertised per stream and for the connection.
    pub window: u32,
    /// DATA hashed (`--verify`).
    pub verify: bool,
    /// Prepared requests.
    pub urls: usize,
    /// Streams are gRPC calls ([`h2::H2Conn::for_grpc`]).
    pub grpc: bool,
    /// gRPC streaming calls: messages timed into `stats.grpc`, and no predicted low-water
    /// mark (a bidi call's next echo comes only after we send).
    pub streaming: bool,
}

/// A driver whose connections are HTTP/2 sessions.
pub(crate) trait OverH2: Driver {
    fn config(&self) -> H2Config;
    /// This thread's Huffman strings and the prepared requests.
    fn parts(&mut self) -> (&mut h2::Strings, &[h2::Request]);
    /// A stream ended whole (`Event::Response`, or `Event::Call` for gRPC): complete it;
    /// returns false if the connection was closed (see [`Worker::after_stream`]).
    fn stream_ended(w: &mut Worker<'_, Self>, i: usize, ev: Event, now: u64) -> bool;
}

/// The preface and SETTINGS go out; requests follow the server's SETTINGS.
pub(crate) fn on_ready<D: OverH2>(w: &mut Worker<'_, D>, i: usize, now: u64) {
    let h = w.proto.config();
    let c = &mut w.conns[i];
    let mut session = h2::H2Conn::new(h.window, h.verify, h.urls, &mut c.out);
    if h.grpc {
        session.for_grpc(h.streaming);
    }
    c.h2 = Some(Box::new(session));
    w.flush(i, now);
}

/// Its preface and SETTINGS are done: a new session would send a second preface on the same
/// connection.
pub(crate) fn resume<D: OverH2>(w: &mut Worker<'_, D>, i: usize, now: u64) {
    if w.conns[i].h2.is_some() {
        w.refill(i, now);
        w.flush(i, now);
    } else {
        on_ready(w, i, now);
    }
}

pub(crate) fn fill<D: OverH2>(w: &mut Worker<'_, D>, i: usize, now: u64) {
    while w.has_room(i) && w.can_issue() {
        D::issue(w, i, now, now);
    }
}

/// Opens a stream for the next request on connection `i`; returns the request's index.
#[inline]
pub(crate) fn issue<D: OverH2>(w: &mut Worker<'_, D>, i: usize, intended: u64, now: u64) -> usize {
    issue_with(w, i, intended, now, None)
}

/// [`issue`], with a body of the call's own instead of the request's (a gRPC message drawn
/// per call).
#[inline]
pub(crate) fn issue_with<D: OverH2>(
    w: &mut Worker<'_, D>,
    i: usize,
    intended: u64,
    now: u64,
    body: Option<&[u8]>,
) -> usize {
    let urls = w.proto.config().urls;
    let u = w.next_request(urls);
    let req = Inflight {
        intended,
        sent: now,
        url: u as u32,
    };
    let (_, requests) = w.proto.parts();
    let c = &mut w.conns[i];
    if let Some(conn) = c.h2.as_deref_mut() {
        match body {
            Some(body) => conn.open_stream_with(&requests[u], body, req, &mut c.out),
            None => conn.open_stream(&requests[u], req, &mut c.out),
        }
        w.issued += 1;
    }
    u
}

#[inline]
pub(crate) fn has_room<D: OverH2>(w: &Worker<'_, D>, i: usize) -> bool {
    let c = &w.conns[i];
    c.state == State::Ready
        && c.h2
            .as_deref()
            .is_some_and(|conn| conn.has_room(w.proto.config().streams))
}

/// Each stream's frames are counted as they arrive: the mark is the smallest response seen per
/// URL times the open streams, less what has arrived for them (`-m` > 1 only).
pub(crate) fn lowat<D: OverH2>(w: &mut Worker<'_, D>, i: usize, window: bool) -> (usize, bool) {
    let H2Config {
        streams, streaming, ..
    } = w.proto.config();
    if streaming {
        return (1, false);
    }
    let Worker { conns, expect, .. } = w;
    let expected = conns[i]
        .h2
        .as_deref_mut()
        .and_then(|h2| h2.warm().then(|| h2.expected_bytes(expect)).flatten());
    let want = match expected {
        Some(bytes) if window && streams > 1 => bytes as usize,
        _ => 1,
    };
    (want, want > 1)
}

impl<D: OverH2> Worker<'_, D> {
    /// Feeds received bytes to connection `i`'s HTTP/2 state; returns false if the connection
    /// was closed (reset, or reopened after a GOAWAY).
    pub(crate) fn consume_h2(&mut self, i: usize, mut data: &[u8], now: u64) -> bool {
        let timed = self.proto.config().streaming && self.stats.measuring(now);
        loop {
            let (strings, requests) = self.proto.parts();
            let c = &mut self.conns[i];
            let Some(conn) = c.h2.as_deref_mut() else {
                return false;
            };
            let messages = &mut self.stats.grpc.message_latency;
            let mut cx = Ctx {
                out: &mut c.out,
                strings,
                requests,
                now,
                message_latency: timed.then(|| messages.get_or_insert_with(new_histogram)),
            };
            match conn.feed(data, &mut cx) {
                Ok((None, _)) => return true,
                Ok((Some(ev), used)) => {
                    data = &data[used..];
                    if !self.on_h2_event(i, ev, now) {
                        return false;
                    }
                }
                Err(code) => {
                    // Best effort: the server learns why (we processed none of its streams).
                    frame::put_goaway(&mut self.conns[i].out, 0, code);
                    let _ = self.conns[i].flush();
                    self.fail(i, now, ErrorKind::H2(code), 0);
                    return false;
                }
            }
        }
    }

    /// Acts on one event; returns false if the connection was closed.
    fn on_h2_event(&mut self, i: usize, ev: Event, now: u64) -> bool {
        match ev {
            Event::Ready => {
                if let Some(conn) = self.conns[i].h2.as_deref() {
                    self.stats.h2.settings(conn.peer());
                }
                self.refill(i, now);
                true
            }
            Event::Response(..) | Event::Call(..) => D::stream_ended(self, i, ev, now),
            Event::Reset(_, code) => {
                let kind = match code {
                    frame::REFUSED_STREAM => ErrorKind::RefusedStream,
                    code => ErrorKind::H2(code),
                };
                self.stats.error(now, kind);
                self.unexpected_end(); // its bytes will not come: a low-water mark overshoots
                if self.quota != u64::MAX {
                    self.done += 1; // -n counts the attempt, so a refusing server ends the run
                }
                if !self.per_request {
                    self.refill(i, now);
                }
                self.after_stream(i, now)
            }
            Event::GoAway { code, lost } => {
                self.stats.goaway(now, code);
                self.issued -= lost as u64; // sent again on another connection
                self.after_stream(i, now)
            }
        }
    }

    /// A stream ended: a connection that takes no more streams and has none open is replaced
    /// (after a GOAWAY, with `--new-conn`, or when stream ids run out). Returns false if it was.
    pub(crate) fn after_stream(&mut self, i: usize, now: u64) -> bool {
        let Some(conn) = self.conns[i].h2.as_deref() else {
            return false;
        };
        let done = self.per_request || conn.draining() || conn.exhausted();
        if done && conn.open() == 0 {
            self.reopen(i, now);
            return false;
        }
        true
    }
}
