//! The HTTP/1.1 driver: one prepared request per URL (`--mix`: per entry, drawn by weight),
//! written as constant bytes or from a template (`{rand:A-B}`, generated bodies, large bodies
//! spliced from shared bytes); keep-alive (`-p N`: a window of N pipelined requests, written in
//! one go once the last window came back), or a new connection per request (`--new-conn`,
//! `--reconnect-every`). Responses are parsed in order (Content-Length, chunked, or framed by
//! the close), checked (`--expect-status`, `--verify`) and, where the result reports bodies,
//! counted by coding.

use super::{Common, Driver};
use crate::config::HttpSpec;
use crate::conn::Inflight;
use crate::http::ResponseParser;
use crate::request::Draw;
use crate::stats::{ErrorKind, Stats};
use crate::worker::Worker;
use serverbench_model::result::{Http1Result, ProtocolResult};
use serverbench_wire::coding::Accepts;

/// HTTP/1.1 on one worker thread: the prepared requests and the generator of their random
/// parts.
pub struct Http1<'a> {
    spec: &'a HttpSpec,
    /// The generator of `{rand:A-B}` and body sizes, and the random body bytes.
    draw: Draw,
}

impl<'a> Http1<'a> {
    /// The driver of worker `slot` (`tls`: bodies are copied, not spliced).
    pub fn new(spec: &'a HttpSpec, slot: usize, tls: bool) -> Self {
        let random_len = spec.requests.iter().map(|t| t.random_len()).max();
        Http1 {
            spec,
            draw: Draw::new(!(slot as u64), random_len.unwrap_or(0), tls),
        }
    }
}

impl Driver for Http1<'_> {
    fn parser(&self) -> ResponseParser {
        ResponseParser::new(self.spec.head, self.spec.verify)
    }

    fn urls(&self) -> usize {
        self.spec.requests.len()
    }

    fn checks(&self) -> Option<(&[u16], bool)> {
        Some((&self.spec.expect_status, self.spec.verify))
    }

    #[inline]
    fn accepts(&self, url: usize) -> Option<Accepts> {
        self.spec
            .count_bodies
            .then(|| self.spec.requests[url].accepts)
    }

    #[inline]
    fn issue(w: &mut Worker<'_, Self>, i: usize, intended: u64, now: u64) {
        let spec = w.proto.spec;
        let u = w.next_request(spec.requests.len());
        let t = &spec.requests[u];
        let c = &mut w.conns[i];
        if t.is_constant() {
            c.out.extend_from_slice(t.constant());
            if t.constant_body_len() > 0 {
                w.stats.request_body(now, t.constant_body_len());
            }
        } else {
            let n = t.write(&mut c.out, &mut c.splices, &mut w.proto.draw);
            w.stats.request_body(now, n);
        }
        c.inflight.push_back(Inflight {
            intended,
            sent: now,
            url: u as u32,
        });
        w.issued += 1;
    }

    #[inline]
    fn consume(w: &mut Worker<'_, Self>, i: usize, mut data: &[u8], now: u64) -> bool {
        loop {
            match w.conns[i].parser.feed(data) {
                Ok(Some((resp, used))) => {
                    data = &data[used..];
                    let size = std::mem::take(&mut w.conns[i].partial) + used;
                    w.learn_size(i, size);
                    let Some(req) = w.conns[i].inflight.pop_front() else {
                        w.fail(i, now, ErrorKind::Parse, 0);
                        return false;
                    };
                    w.complete(i, req, resp, now);
                    let due = w.conn_due(i) && w.conns[i].inflight.is_empty();
                    if resp.close || w.per_request || due {
                        w.reopen(i, now);
                        return false;
                    }
                }
                Ok(None) => {
                    w.conns[i].partial += data.len();
                    return true;
                }
                Err(_) => {
                    w.fail(i, now, ErrorKind::Parse, 0);
                    return false;
                }
            }
        }
    }
}

/// One thread's HTTP/1.1 block: bodies where the result reports them.
pub(crate) fn result(spec: &HttpSpec, s: &Stats, (connection_mode, mix): Common) -> ProtocolResult {
    ProtocolResult::Http1(Http1Result {
        connection_mode,
        bodies: spec.count_bodies.then(|| s.bodies.result()),
        mix,
    })
}
