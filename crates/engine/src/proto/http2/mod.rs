//! The HTTP/2 driver (h2 over TLS, negotiated by ALPN, or h2c with prior knowledge): a
//! connection that is up sends the preface and its SETTINGS; requests follow the server's
//! SETTINGS as streams (`-m N` per connection, lowered by the server's
//! SETTINGS_MAX_CONCURRENT_STREAMS). Received bytes go to the connection's protocol state,
//! whose events complete streams, count resets and GOAWAYs, and free stream slots for the
//! schedule (closed loop: a new stream at once; `-R`: the connection is idle again).

use super::{Common, Driver};
use crate::config::{Config, Http2Spec, Schedule};
use crate::conn::{Inflight, State};
use crate::h2::{self, frame, Ctx, Event};
use crate::stats::{ErrorKind, Stats};
use crate::worker::Worker;
use serverbench_model::result::{Http2Result, ProtocolResult};

/// HTTP/2 on one worker thread: the prepared requests and this thread's memory of the
/// Huffman strings servers send.
pub struct Http2<'a> {
    spec: &'a Http2Spec,
    strings: h2::Strings,
}

impl<'a> Http2<'a> {
    pub fn new(spec: &'a Http2Spec) -> Self {
        Http2 {
            spec,
            strings: h2::Strings::default(),
        }
    }
}

impl Driver for Http2<'_> {
    const MULTIPLEXED: bool = true;
    const ALPN: Option<&'static [u8]> = Some(b"h2");

    /// Streams, not a pipeline: the window is the connection's streams.
    fn depth(&self, _schedule: Schedule) -> usize {
        0
    }

    fn urls(&self) -> usize {
        self.spec.requests.len()
    }

    fn checks(&self) -> Option<(&[u16], bool)> {
        Some((&self.spec.expect_status, self.spec.verify))
    }

    /// The preface and SETTINGS go out; requests follow the server's SETTINGS.
    fn on_ready(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        let h = w.proto.spec;
        let c = &mut w.conns[i];
        let session = h2::H2Conn::new(h.window, h.verify, h.requests.len(), &mut c.out);
        c.h2 = Some(Box::new(session));
        w.flush(i, now);
    }

    /// Its preface and SETTINGS are done: a new session would send a second preface on the
    /// same connection.
    fn resume(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        if w.conns[i].h2.is_some() {
            w.refill(i, now);
            w.flush(i, now);
        } else {
            Self::on_ready(w, i, now);
        }
    }

    fn fill(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        while w.has_room(i) && w.can_issue() {
            Self::issue(w, i, now, now);
        }
    }

    #[inline]
    fn issue(w: &mut Worker<'_, Self>, i: usize, intended: u64, now: u64) {
        let spec = w.proto.spec;
        let u = w.next_request(spec.requests.len());
        let req = Inflight {
            intended,
            sent: now,
            url: u as u32,
        };
        let c = &mut w.conns[i];
        if let Some(conn) = c.h2.as_deref_mut() {
            conn.open_stream(&spec.requests[u], req, &mut c.out);
            w.issued += 1;
        }
    }

    #[inline]
    fn consume(w: &mut Worker<'_, Self>, i: usize, data: &[u8], now: u64) -> bool {
        w.consume_h2(i, data, now)
    }

    #[inline]
    fn has_room(w: &Worker<'_, Self>, i: usize) -> bool {
        let c = &w.conns[i];
        c.state == State::Ready
            && c.h2
                .as_deref()
                .is_some_and(|conn| conn.has_room(w.proto.spec.streams))
    }

    /// Each stream's frames are counted as they arrive: the mark is the smallest response seen
    /// per URL times the open streams, less what has arrived for them (`-m` > 1 only).
    fn lowat(w: &mut Worker<'_, Self>, i: usize, window: bool) -> (usize, bool) {
        let streams = w.proto.spec.streams;
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

    /// A reset stream or a dropped mark: the sizes overshoot.
    fn mark_dropped(w: &mut Worker<'_, Self>) {
        w.unexpected_end();
    }
}

impl Worker<'_, Http2<'_>> {
    /// Feeds received bytes to connection `i`'s HTTP/2 state; returns false if the connection
    /// was closed (reset, or reopened after a GOAWAY).
    fn consume_h2(&mut self, i: usize, mut data: &[u8], now: u64) -> bool {
        let spec = self.proto.spec;
        loop {
            let c = &mut self.conns[i];
            let Some(conn) = c.h2.as_deref_mut() else {
                return false;
            };
            let mut cx = Ctx {
                out: &mut c.out,
                strings: &mut self.proto.strings,
                requests: &spec.requests,
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
            Event::Response(req, resp, wire) => {
                self.learn(req.url, wire as usize);
                self.complete(i, req, resp, now);
                self.after_stream(i, now)
            }
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
    fn after_stream(&mut self, i: usize, now: u64) -> bool {
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

/// One thread's HTTP/2 block: the server's SETTINGS, GOAWAYs and stream errors.
pub(crate) fn result(
    config: &Config,
    spec: &Http2Spec,
    s: &Stats,
    (connection_mode, mix): Common,
) -> ProtocolResult {
    let settings = s.h2.settings;
    ProtocolResult::Http2(Http2Result {
        protocol: if config.tls.is_some() { "h2" } else { "h2c" }.to_string(),
        streams: spec.streams,
        max_concurrent_streams: settings.and_then(|s| s.max_concurrent_streams),
        initial_window_size: settings.map(|s| s.initial_window_size),
        max_frame_size: settings.map(|s| s.max_frame_size),
        goaways: s.h2.goaways,
        errors: (s.h2.errors_by_name())
            .map(|(name, n)| (name.to_string(), n))
            .collect(),
        connection_mode,
        mix,
    })
}
