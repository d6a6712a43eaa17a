//! The read path of the worker loop: drain a socket (plain, or through rustls), feed the bytes to
//! the driver ([`Driver::consume`]), complete requests into the stats and send the next ones.

use super::*;
use crate::conn::Inflight;
use crate::http::Response;
use crate::stats::EncodingCause;
use serverbench_wire::coding::Accepts;
use serverbench_wire::http::Encoding;

impl<D: Driver> Worker<'_, D> {
    /// Reads until the socket is drained; returns false if the connection was reset.
    pub(super) fn on_readable(&mut self, i: usize, closed: bool, now: u64) -> bool {
        let mut buf = std::mem::take(&mut self.buf);
        let alive = self.read_all(i, closed, now, &mut buf);
        self.buf = buf;
        alive && self.after_read(i, now)
    }

    /// Bytes were read and consumed: send what the protocol owes now (and, in the closed loop,
    /// set the low-water mark for what comes next). Returns false if the connection was reset.
    pub(super) fn after_read(&mut self, i: usize, now: u64) -> bool {
        let stream = D::STREAM;
        // `-R` sends flush as they go; HTTP/2 may owe the server frames (acks, windows) anyway.
        let owed = self.rate.is_none() || !self.conns[i].out.is_empty();
        if owed && !stream {
            if !self.flush(i, now) {
                return false;
            }
            if self.rate.is_none() {
                self.arm_lowat(i);
            }
        }
        true
    }

    pub(super) fn read_all(&mut self, i: usize, closed: bool, now: u64, buf: &mut [u8]) -> bool {
        if self.conns[i].tls.is_some() {
            return self.read_all_tls(i, closed, now, buf);
        }
        loop {
            let Some(sock) = self.conns[i].sock.as_mut() else {
                return false;
            };
            match sock.read(buf) {
                Ok(0) => {
                    self.on_eof(i, now);
                    return false;
                }
                Ok(n) => {
                    self.stats.read(now, n);
                    self.conns[i].last_read = now;
                    self.conns[i].guard_queued = usize::MAX;
                    if !self.consume(i, &buf[..n], now) {
                        return false;
                    }
                    // A short read drained the socket; with edge triggering new data raises a
                    // new event, so there is no need for the extra read that returns EAGAIN.
                    // A FIN or error already signalled is not signalled again: read on to see it.
                    if n < buf.len() && !closed {
                        return true;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.fail(i, now, ErrorKind::Read, 0);
                    return false;
                }
            }
        }
    }

    /// Feeds received bytes to the driver; returns false if the connection was reset.
    #[inline]
    pub(crate) fn consume(&mut self, i: usize, data: &[u8], now: u64) -> bool {
        D::consume(self, i, data, now)
    }

    /// The response to `req` arrived: record it and schedule the next request.
    pub(crate) fn complete(&mut self, i: usize, req: Inflight, resp: Response, now: u64) {
        self.done += 1;
        self.conns[i].served += 1;
        self.napper.observe(now.saturating_sub(req.sent));
        self.stats.record(
            now,
            now.saturating_sub(req.intended),
            now.saturating_sub(req.sent),
            resp.status,
        );
        let mix = self.cfg.mix.is_some();
        if mix {
            let lat = now.saturating_sub(req.intended);
            self.stats.record_entry(now, req.url as usize, lat);
        }
        let checks = self.proto.checks().map(|(expect_status, verify)| {
            let bad_status = if expect_status.is_empty() {
                !(200..300).contains(&resp.status)
            } else {
                !expect_status.contains(&resp.status)
            };
            (bad_status, verify)
        });
        if let Some((bad_status, verify)) = checks {
            if bad_status {
                self.stats.error(now, ErrorKind::Status);
                if mix {
                    self.stats
                        .entry_error(now, req.url as usize, ErrorKind::Status);
                }
            }
            if let Some(accepts) = self.proto.accepts(req.url as usize) {
                if self.count_body(resp, accepts, verify, now) {
                    return self.after_complete(i, resp, now);
                }
            }
            if verify {
                let seen = &mut self.first_body[req.url as usize];
                match seen {
                    None => *seen = Some((resp.body_len, resp.body_hash)),
                    Some(first) if *first != (resp.body_len, resp.body_hash) => {
                        self.stats.error(now, ErrorKind::Body);
                        if mix {
                            self.stats
                                .entry_error(now, req.url as usize, ErrorKind::Body);
                        }
                    }
                    Some(_) => {}
                }
            }
        }
        self.after_complete(i, resp, now);
    }

    /// The next request, unless the connection closes after `resp`.
    fn after_complete(&mut self, i: usize, resp: Response, now: u64) {
        let closing = resp.close || self.per_request || self.conn_due(i);
        if !closing {
            self.refill(i, now);
        }
    }

    /// HTTP/1.1: counts the response's body (wire and decoded bytes, its coding); with
    /// `--verify`, a coding the request did not list or a body not valid in its coding is an
    /// error. Returns true if it was one (the body is then not compared).
    fn count_body(&mut self, resp: Response, accepts: Accepts, verify: bool, now: u64) -> bool {
        self.stats
            .response_body(now, resp.wire_len, resp.body_len, resp.encoding);
        if !verify {
            return false;
        }
        let cause = match resp.encoding {
            Encoding::Identity => return false,
            Encoding::Other => EncodingCause::Unknown,
            Encoding::One(c) if !accepts.has(c) => EncodingCause::Unlisted(c),
            Encoding::One(c) if resp.undecodable => EncodingCause::Undecodable(c),
            Encoding::One(_) => return false,
        };
        self.stats.error(now, ErrorKind::Encoding(cause));
        true
    }

    /// A request slot on connection `i` freed up: the schedule may use it.
    pub(crate) fn refill(&mut self, i: usize, now: u64) {
        if self.rate.is_none() {
            self.fill(i, now);
        } else if self.has_room(i) {
            self.make_idle(i);
            self.dispatch(now);
        }
    }

    /// Whether connection `i` can take a request now.
    #[inline]
    pub(crate) fn has_room(&self, i: usize) -> bool {
        D::has_room(self, i)
    }

    #[inline]
    pub(super) fn on_eof(&mut self, i: usize, now: u64) {
        D::on_eof(self, i, now);
    }

    /// The peer closed connection `i` of a request/response protocol: a response framed by
    /// the close completes, an idle keep-alive connection is reopened, anything else failed.
    pub(crate) fn eof_of_responses(&mut self, i: usize, now: u64) {
        let closed_body = self.conns[i].parser.eof();
        if let Some((resp, req)) = closed_body.zip(self.conns[i].inflight.pop_front()) {
            self.complete(i, req, resp, now);
            self.reopen(i, now);
        } else if self.conns[i].in_flight() == 0 && self.conns[i].parser.idle() {
            self.reopen(i, now); // the server closed an idle keep-alive connection
        } else if self.conns[i].parser.in_body() {
            self.fail(i, now, ErrorKind::Truncated, 0);
        } else {
            self.fail(i, now, ErrorKind::Read, 0);
        }
    }
}
