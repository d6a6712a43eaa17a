//! The HTTP/2 steps of the worker loop: received bytes go to the connection's protocol state,
//! whose events complete streams, count resets and GOAWAYs, and free stream slots for the
//! schedule (closed loop: a new stream at once; `-R`: the connection is idle again).

use super::Worker;
use crate::config::Protocol;
use crate::h2::{frame, Ctx, Event};
use crate::stats::ErrorKind;

impl Worker<'_> {
    /// Feeds received bytes to connection `i`'s HTTP/2 state; returns false if the connection
    /// was closed (reset, or reopened after a GOAWAY).
    pub(super) fn consume_h2(&mut self, i: usize, mut data: &[u8], now: u64) -> bool {
        let cfg = self.cfg;
        let Protocol::Http2(spec) = &cfg.protocol else {
            return false;
        };
        loop {
            let c = &mut self.conns[i];
            let Some(conn) = c.h2.as_deref_mut() else {
                return false;
            };
            let mut cx = Ctx {
                out: &mut c.out,
                strings: &mut self.strings,
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
