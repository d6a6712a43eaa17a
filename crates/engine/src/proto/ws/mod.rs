//! The WebSocket steps of the worker loop. A connection that is up (TLS included) sends its
//! upgrade with a fresh key; the 101 is checked (status, `Upgrade`, `Connection`, the accept
//! key) and timed, and then the schedule sends messages as for HTTP: `-p N` frames in flight
//! (one write per window), or `-R` on idle connections. Received bytes are decoded as frames,
//! never counted by read events, so a server that splits or merges frames across segments is
//! counted exactly; each echo is matched byte for byte with the message sent (its frames may
//! be fragments), and completes the oldest message in flight. A ping from the server is
//! answered with a pong. `--reconnect-every N` sends a close 1000 after N echoes and opens a
//! new connection when the server's close (or its EOF) arrives.
//!
//! Every close is counted by code (1005 for a close frame without one, 1006 for a connection
//! that ended without a close frame, as RFC 6455 names them). A close the client did not ask
//! for is also an `unexpected close`: its frame is echoed (RFC 6455, 5.5.1), the TCP connection
//! closed and a new one opened, so the run goes on. An upgrade or a close unanswered for the
//! load's `--timeout` is a `timeout` (an upgrade failure) or a `close timeout`.
//!
//! Received bytes go through the connection's `pending` buffer, because a frame may end in a
//! later read and the decoder needs it whole: one copy of what is read, the price of counting
//! frames exactly.

mod conn;

pub use conn::{WsConn, WsPhase};

use super::Driver;
use crate::config::{Config, WsSpec};
use crate::conn::{Inflight, State};
use crate::http::Response;
use crate::stats::{ErrorKind, Stats, WsCause};
use crate::worker::{Worker, BACKOFF_NS};
use serverbench_model::result::{Histograms, ProtocolResult, WsResult};
use serverbench_wire::ws::{self, close, Decoded, Key, Opcode, Rng};
use std::ops::Range;

/// WebSocket echo on one worker thread: the message and the seeds of each connection's key
/// and masks.
pub struct Ws<'a> {
    spec: &'a WsSpec,
    seeds: Rng,
}

impl<'a> Ws<'a> {
    /// The driver of worker `slot`.
    pub fn new(spec: &'a WsSpec, slot: usize) -> Self {
        Ws {
            spec,
            seeds: Rng::from_os(slot as u64),
        }
    }
}

impl Driver for Ws<'_> {
    /// The upgrade goes out first; messages follow the 101.
    fn on_ready(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        w.ws_upgrade(i, now);
    }

    fn fill(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        if w.ws_open(i) && !w.conn_due(i) {
            w.fill_window(i, now);
        }
    }

    #[inline]
    fn issue(w: &mut Worker<'_, Self>, i: usize, intended: u64, now: u64) {
        w.ws_issue(i, intended, now);
    }

    #[inline]
    fn consume(w: &mut Worker<'_, Self>, i: usize, data: &[u8], now: u64) -> bool {
        w.consume_ws(i, data, now)
    }

    fn has_room(w: &Worker<'_, Self>, i: usize) -> bool {
        let c = &w.conns[i];
        c.state == State::Ready && c.inflight.is_empty() && w.ws_open(i) && !w.conn_due(i)
    }

    fn on_eof(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        w.ws_eof(i, now);
    }

    /// Every echo takes at least its unfragmented frame, but the server may send a smaller
    /// frame instead (a close, a ping): the guard watches the mark as predicted.
    fn lowat(w: &mut Worker<'_, Self>, i: usize, _window: bool) -> (usize, bool) {
        let c = &w.conns[i];
        let want = match c.ws.as_deref() {
            Some(ws) if ws.is_open() => {
                (c.inflight.len() * w.proto.spec.echo_frame_len()).saturating_sub(ws.pending.len())
            }
            _ => 1,
        };
        (want, want > 1)
    }

    fn on_lost(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        w.ws_lost(i, now);
    }

    fn timeout_kind(w: &Worker<'_, Self>, i: usize) -> ErrorKind {
        w.timeout_kind(i)
    }

    fn at_end(w: &mut Worker<'_, Self>) {
        w.ws_at_end();
    }
}

/// What one decoded frame asks of the loop.
enum Step {
    /// Nothing to do (a fragment matched so far, an unsolicited pong, a ping answered).
    Nothing,
    /// The echo (or pong) of the oldest message in flight is complete.
    Echoed,
    /// A close frame arrived with this code (1005 if it had none).
    Closed(u16),
    Fail(WsCause),
}

impl Worker<'_, Ws<'_>> {
    /// Connection `i` is up (TCP, and TLS for `wss://`): its upgrade request goes out.
    fn ws_upgrade(&mut self, i: usize, now: u64) {
        let spec = self.proto.spec;
        let mut rng = Rng::new(self.proto.seeds.next_u64());
        let key = Key::random(&mut rng);
        let c = &mut self.conns[i];
        ws::write_upgrade_request(&mut c.out, &spec.host, &spec.path, &key, None);
        c.ws = Some(Box::new(WsConn::new(rng.next_u64(), key.accept(), now)));
        self.flush(i, now);
    }

    /// Whether connection `i` sent its close and awaits the server's.
    fn ws_closing(&self, i: usize) -> bool {
        self.conns[i].ws.as_deref().is_some_and(WsConn::is_closing)
    }

    /// Whether connection `i` is upgraded and not closing.
    fn ws_open(&self, i: usize) -> bool {
        self.conns[i].ws.as_deref().is_some_and(WsConn::is_open)
    }

    /// Appends one message frame (masked with the connection's next mask) to `i`'s output.
    fn ws_issue(&mut self, i: usize, intended: u64, now: u64) {
        let spec = self.proto.spec;
        let c = &mut self.conns[i];
        let Some(ws) = c.ws.as_deref_mut() else {
            return;
        };
        ws::encode_client(
            &mut c.out,
            spec.kind.opcode(),
            true,
            &spec.payload,
            &mut ws.rng,
        );
        c.inflight.push_back(Inflight {
            intended,
            sent: now,
            url: 0,
        });
        self.issued += 1;
        self.stats.message_sent(now);
    }

    /// Bytes arrived on connection `i`; returns false if it was closed.
    fn consume_ws(&mut self, i: usize, data: &[u8], now: u64) -> bool {
        let Some(ws) = self.conns[i].ws.as_deref_mut() else {
            return false;
        };
        ws.pending.extend_from_slice(data);
        if let WsPhase::Upgrading { accept, since } = ws.phase {
            match ws::parse_response(&ws.pending, &accept, false) {
                Ok(None) => return true,
                Ok(Some(up)) => {
                    ws.pending.drain(..up.head_len);
                    ws.phase = WsPhase::Open;
                    self.stats.upgraded(now, now.saturating_sub(since));
                    self.refill(i, now);
                }
                Err(e) => {
                    self.fail(i, now, ErrorKind::Ws(WsCause::Upgrade(e)), BACKOFF_NS);
                    return false;
                }
            }
        }
        self.ws_frames(i, now)
    }

    /// Decodes and acts on every whole frame in `i`'s pending bytes; returns false if the
    /// connection was closed.
    fn ws_frames(&mut self, i: usize, now: u64) -> bool {
        let spec = self.proto.spec;
        let mut pos = 0;
        loop {
            let step = {
                let c = &mut self.conns[i];
                let Some(ws) = c.ws.as_deref_mut() else {
                    return false;
                };
                match ws.decoder.decode(&mut ws.pending[pos..]) {
                    Ok(Decoded::Incomplete { .. }) => {
                        ws.pending.drain(..pos);
                        return true;
                    }
                    Err(e) => Step::Fail(WsCause::Protocol(e)),
                    Ok(Decoded::Frame(f)) => {
                        let payload = pos + f.payload.start..pos + f.payload.end;
                        pos += f.len();
                        frame_step(spec, ws, &mut c.out, f.opcode, f.fin, payload)
                    }
                }
            };
            if !self.ws_step(i, step, now) {
                return false;
            }
        }
    }

    /// Acts on one frame's step; returns false if the connection was closed.
    fn ws_step(&mut self, i: usize, step: Step, now: u64) -> bool {
        match step {
            Step::Nothing => true,
            Step::Echoed => {
                let Some(req) = self.conns[i].inflight.pop_front() else {
                    return self.ws_fail(i, WsCause::UnexpectedMessage, now);
                };
                let echo = Response::status_only(0);
                self.complete(i, req, echo, now);
                if self.conn_due(i) && self.conns[i].inflight.is_empty() {
                    self.ws_close(i, now);
                }
                true
            }
            Step::Closed(code) => {
                self.stats.ws_closed(now, code);
                if self.ws_closing(i) {
                    self.reopen(i, now);
                    return false;
                }
                if self.ws_answer_close(i, code, now) {
                    return self.ws_fail(i, WsCause::UnexpectedClose, now);
                }
                // The echo failed to go out (a write error, counted): the close still counts.
                self.stats
                    .error(now, ErrorKind::Ws(WsCause::UnexpectedClose));
                false
            }
            Step::Fail(cause) => self.ws_fail(i, cause, now),
        }
    }

    /// `--reconnect-every`: sends a close 1000; the server's close (or EOF) reopens.
    fn ws_close(&mut self, i: usize, now: u64) {
        let c = &mut self.conns[i];
        let Some(ws) = c.ws.as_deref_mut() else {
            return;
        };
        ws::encode_close(&mut c.out, Some(close::NORMAL), b"", Some(ws.rng.mask()));
        ws.phase = WsPhase::Closing { since: now };
    }

    /// The server closed with `code` unasked: the close is echoed (1005 was no code, and is
    /// echoed as none) and sent before the connection is dropped. Best effort: behind a send
    /// still in io_uring's hands it goes when that send ends, which a dropped socket may not see.
    /// Returns false if the write failed (the connection is then closed).
    fn ws_answer_close(&mut self, i: usize, code: u16, now: u64) -> bool {
        let c = &mut self.conns[i];
        let Some(ws) = c.ws.as_deref_mut() else {
            return true;
        };
        let code = (code != close::NO_STATUS).then_some(code);
        ws::encode_close(&mut c.out, code, b"", Some(ws.rng.mask()));
        self.flush(i, now)
    }

    /// What a timeout on connection `i` is: a WebSocket upgrade or close unanswered, or (any
    /// other protocol too) a request or message.
    fn timeout_kind(&self, i: usize) -> ErrorKind {
        match self.conns[i].ws.as_deref().map(|w| &w.phase) {
            Some(WsPhase::Upgrading { .. }) => ErrorKind::Ws(WsCause::UpgradeTimeout),
            Some(WsPhase::Closing { .. }) => ErrorKind::Ws(WsCause::CloseTimeout),
            _ => ErrorKind::Timeout,
        }
    }

    /// The run ended: upgrades still unanswered are counted (a load that got none says so).
    fn ws_at_end(&mut self) {
        let upgrading = |c: &&crate::conn::Conn| {
            c.ws.as_deref()
                .is_some_and(|w| matches!(w.phase, WsPhase::Upgrading { .. }))
        };
        self.stats.ws.upgrades_unanswered = self.conns.iter().filter(upgrading).count() as u64;
    }

    /// Counts `cause` and replaces the connection; returns false (it is closed).
    fn ws_fail(&mut self, i: usize, cause: WsCause, now: u64) -> bool {
        self.fail(i, now, ErrorKind::Ws(cause), 0);
        false
    }

    /// The server closed connection `i`'s socket without a close frame: before the 101 that is
    /// a failed upgrade; after it a close 1006, which after our close is the end we asked for
    /// and otherwise an unexpected close.
    fn ws_eof(&mut self, i: usize, now: u64) {
        match self.conns[i].ws.as_deref().map(|w| &w.phase) {
            Some(WsPhase::Upgrading { .. }) => {
                let closed = ErrorKind::Ws(WsCause::UpgradeClosed);
                return self.fail(i, now, closed, BACKOFF_NS);
            }
            _ => self.ws_lost(i, now),
        }
        if self.ws_closing(i) {
            self.reopen(i, now);
        } else {
            self.fail(i, now, ErrorKind::Ws(WsCause::UnexpectedClose), 0);
        }
    }

    /// Connection `i` broke (a read or write error): once upgraded, that is a close 1006.
    fn ws_lost(&mut self, i: usize, now: u64) {
        let upgraded = self.conns[i]
            .ws
            .as_deref()
            .is_some_and(|w| !matches!(w.phase, WsPhase::Upgrading { .. }));
        if upgraded {
            self.stats.ws_closed(now, close::ABNORMAL);
        }
    }
}

/// What frame `opcode` (with `fin`, its payload at `payload` in `ws.pending`) means for the
/// message at the head of the window; a ping is answered into `out` at once.
fn frame_step(
    spec: &WsSpec,
    ws: &mut WsConn,
    out: &mut Vec<u8>,
    opcode: Opcode,
    fin: bool,
    payload: Range<usize>,
) -> Step {
    let WsConn {
        pending,
        rng,
        echoed,
        ..
    } = ws;
    let got = &pending[payload];
    let want = spec.kind.opcode();
    match opcode {
        Opcode::Ping => {
            ws::encode_client(out, Opcode::Pong, true, got, rng);
            Step::Nothing
        }
        Opcode::Pong if want == Opcode::Ping => match got == spec.payload.as_slice() {
            true => Step::Echoed,
            false => Step::Fail(WsCause::WrongEcho),
        },
        Opcode::Pong => Step::Nothing,
        Opcode::Close => match got {
            [a, b, ..] => Step::Closed(u16::from_be_bytes([*a, *b])),
            _ => Step::Closed(close::NO_STATUS),
        },
        _ if want == Opcode::Ping => Step::Fail(WsCause::UnexpectedMessage),
        Opcode::Text | Opcode::Binary if opcode != want => Step::Fail(WsCause::WrongEcho),
        Opcode::Text | Opcode::Binary | Opcode::Continuation => {
            let at = *echoed;
            if spec.payload.get(at..at + got.len()) != Some(got) {
                return Step::Fail(WsCause::WrongEcho);
            }
            *echoed += got.len();
            if !fin {
                return Step::Nothing;
            }
            let whole = *echoed == spec.payload.len();
            *echoed = 0;
            if whole {
                Step::Echoed
            } else {
                Step::Fail(WsCause::WrongEcho)
            }
        }
    }
}

/// One thread's WebSocket block: messages, upgrades (their latency histogram into `h`), closes
/// and protocol errors by cause.
pub(crate) fn result(
    config: &Config,
    spec: &WsSpec,
    s: &Stats,
    h: &mut Histograms,
) -> ProtocolResult {
    h.upgrade_latency_us = Some(serverbench_model::histo::encode(&s.ws.upgrade));
    let w = &s.ws;
    let by_name = |upgrade: bool| {
        let mut m = std::collections::BTreeMap::new();
        for (cause, n) in w.causes.iter().filter(|(c, _)| c.is_upgrade() == upgrade) {
            *m.entry(cause.name().to_string()).or_insert(0) += n;
        }
        m
    };
    ProtocolResult::WebSocket(WsResult {
        message_kind: spec.kind.as_str().to_string(),
        message_size: spec.payload.len() as u64,
        reconnect_every: config.spec.work.reconnect_every,
        messages_sent: w.messages_sent,
        upgrades: w.upgrades,
        upgrade_failures: by_name(true),
        close_codes: (w.close_codes.iter())
            .map(|(code, n)| (code.to_string(), *n))
            .collect(),
        protocol_errors: by_name(false),
        upgrades_unanswered: w.upgrades_unanswered,
        ..Default::default()
    })
}
