//! The one worker loop: an event loop per thread over a static share of the connections,
//! parameterised by protocol (HTTP/1.1, HTTP/2, TCP echo) x schedule x stop, by transport
//! (plain or TLS) x connection lifetime (keep-alive or one request per connection), and by
//! backend: an edge-triggered mio poll with `recv`/`send` ([`Backend::Epoll`]), or an io_uring
//! with multishot receives and queued sends ([`Backend::Uring`], in `uring.rs`). The backends
//! differ only in how bytes come in and go out; everything above them is shared.

use crate::config::{Config, Lifetime, Protocol, Schedule, Stop};
use crate::conn::{Conn, Flushed, Inflight, State};
use crate::h2;
use crate::http::{Response, ResponseParser};
use crate::idle::Napper;
use crate::request::Draw;
use crate::stats::{EntryStats, ErrorKind, Stats};
use crate::sys;
use crate::uring::Ring;
use mio::{Events, Poll, Token};
use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use serverbench_model::IoBackend;
use std::io::{self, Read};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

mod conns;
mod http2;
mod lowat;
mod phases;
mod rate;
mod read;
mod shared;
mod tls;
mod uring;
mod ws;

pub use shared::{Outcome, Plan, Shared};

use phases::Gate;
use rate::RateState;

const TIMER: Token = Token(usize::MAX - 1);
const READ_BUF: usize = 64 * 1024;
const STREAM_CHUNK: usize = 64 * 1024;
/// io_uring: one send per connection is in the kernel at a time, so each carries more (a send
/// that finds the socket full completes with what fit once it drains).
const URING_STREAM_CHUNK: usize = 256 * 1024;
const TICK_NS: u64 = 10_000_000;
const BACKOFF_NS: u64 = 10_000_000;
const LATE_NS: u64 = 1_000_000;
const DRAIN_NS: u64 = 1_000_000_000;

/// What a poll event says about reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Readable {
    No,
    Data,
    /// The peer closed or the socket has an error: read to EOF/EAGAIN.
    Closed,
}

/// How a worker's sockets are driven.
enum Backend {
    Epoll(Poll),
    Uring(Box<uring::Uring>),
}

struct Worker<'a> {
    cfg: &'a Config,
    io: Backend,
    /// Why this worker runs on epoll although io_uring was asked for.
    io_note: Option<String>,
    conns: Vec<Conn>,
    buf: Vec<u8>,
    pattern: Vec<u8>,
    stats: Stats,
    depth: usize,
    issued: u64,
    done: u64,
    quota: u64,
    rate: Option<RateState>,
    first_body: Vec<Option<(u64, u64)>>,
    /// Per URL (ping-pong: one), the smallest response seen, in bytes (0: none yet).
    expect: Vec<usize>,
    /// Whether low-water marks may count on predicted sizes (off once sizes keep shrinking).
    predicting: bool,
    shrinks: u32,
    next_url: usize,
    timeout_ns: u64,
    end: u64,
    stopping: bool,
    /// `https://`: this thread's client configuration (its own session cache) and SNI name.
    tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
    /// `--new-conn`: close after each response and connect again.
    per_request: bool,
    /// HTTP/2: this thread's memory of the Huffman strings servers send.
    strings: h2::Strings,
    /// Gated runs: no new request while waiting for the gate after the warm-up.
    paused: bool,
    /// This worker's slot on the live board, and the last request it answered.
    slot: usize,
    answered: u64,
    /// `--idle`: blocks or naps when the poll finds nothing.
    napper: Napper,
    /// WebSocket: seeds each connection's key and mask generator.
    ws_seeds: serverbench_wire::ws::Rng,
    /// HTTP/1.1: the generator of `{rand:A-B}` and body sizes, and the random body bytes.
    draw: Draw,
    /// `--mix`: draws each request's entry.
    draws: serverbench_wire::ws::Rng,
}

/// Runs one worker thread from setup to the end of the run.
pub fn run(
    cfg: &Config,
    plan: Plan,
    slot: usize,
    shared: &Shared,
    backend: IoBackend,
) -> io::Result<Outcome> {
    let built = match plan.cpu {
        Some(cpu) => serverbench_machine::affinity::pin_current_thread(cpu)
            .and_then(|()| Worker::new(cfg, &plan, slot, backend)),
        None => Worker::new(cfg, &plan, slot, backend),
    };
    let mut w = match built {
        Ok(w) => w,
        Err(e) => {
            shared.arrived.fetch_add(1, Ordering::SeqCst);
            shared.barrier.wait();
            shared.barrier.wait();
            return Err(e);
        }
    };
    let setup_failures = w.setup(&plan, &shared.up);
    shared
        .connected
        .fetch_add(plan.connections as u64 - setup_failures, Ordering::SeqCst);
    shared.arrived.fetch_add(1, Ordering::SeqCst);
    shared.barrier.wait();
    shared.barrier.wait();
    let (mut measured_ns, mut run_wait) = (0, None);
    if !shared.abort.load(Ordering::SeqCst) {
        (measured_ns, run_wait) = w.main_loop(shared)?;
        w.ws_at_end();
    }
    let in_flight = w.in_flight();
    w.stats.finish(sys::now_ns(), in_flight);
    w.publish(shared, true);
    w.stats.errors.connect += setup_failures;
    w.stats.naps = w.napper.stats;
    w.stats.close();
    Ok(Outcome {
        backend: match w.io {
            Backend::Epoll(_) => IoBackend::Epoll,
            Backend::Uring(_) => IoBackend::Uring,
        },
        note: w.io_note,
        stats: w.stats,
        connect_failures_at_setup: setup_failures,
        measured_ns,
        run_wait,
    })
}

impl<'a> Worker<'a> {
    fn new(cfg: &'a Config, plan: &Plan, slot: usize, backend: IoBackend) -> io::Result<Self> {
        let (head, verify, depth) = match (&cfg.protocol, cfg.schedule) {
            (Protocol::Http(h), Schedule::ClosedLoop { depth }) => (h.head, h.verify, depth),
            (Protocol::Http(h), Schedule::Rate { .. }) => (h.head, h.verify, 1),
            (Protocol::Http2(_), _) => (false, false, 0),
            (_, Schedule::ClosedLoop { depth }) => (false, false, depth),
            (_, Schedule::Rate { .. }) => (false, false, 1),
        };
        let conns = (0..plan.connections)
            .map(|_| Conn::new(ResponseParser::new(head, verify), depth as usize))
            .collect();
        let pattern = match &cfg.protocol {
            Protocol::TcpStream { message } => {
                let len = URING_STREAM_CHUNK + message.len();
                let mut p = Vec::with_capacity(len);
                while p.len() < len {
                    p.extend_from_slice(message);
                }
                p
            }
            Protocol::TcpPingPong { size } => vec![b'x'; *size],
            Protocol::Http(_) | Protocol::Http2(_) | Protocol::WebSocket(_) => Vec::new(),
        };
        let random_len = match &cfg.protocol {
            Protocol::Http(h) => h.requests.iter().map(|t| t.random_len()).max(),
            _ => None,
        };
        let random_len = random_len.unwrap_or(0);
        let urls = match &cfg.protocol {
            Protocol::Http(h) => h.requests.len(),
            Protocol::Http2(h) => h.requests.len(),
            _ => 1,
        };
        let closed_loop = matches!(cfg.schedule, Schedule::ClosedLoop { .. })
            && !matches!(cfg.protocol, Protocol::TcpStream { .. });
        let (mut io, io_note) = backend_for(backend, plan.connections)?;
        let mut stats = Stats::new(plan.rate_interval_ns.is_some());
        if let Some(m) = &cfg.mix {
            stats.mix = (0..m.entries.len()).map(|_| EntryStats::new()).collect();
        }
        let rate = match plan.rate_interval_ns {
            Some(interval) => Some(RateState::new(interval, &mut io)?),
            None => None,
        };
        Ok(Worker {
            cfg,
            io,
            io_note,
            conns,
            buf: vec![0; READ_BUF],
            pattern,
            stats,
            depth: depth as usize,
            issued: 0,
            done: 0,
            quota: plan.quota.unwrap_or(u64::MAX),
            rate,
            first_body: vec![None; urls],
            expect: match &cfg.protocol {
                Protocol::TcpPingPong { size } => vec![*size],
                _ => vec![0; urls],
            },
            predicting: true,
            shrinks: 0,
            next_url: 0,
            timeout_ns: cfg.timeout.as_nanos() as u64,
            end: u64::MAX,
            stopping: false,
            tls: cfg
                .tls
                .as_ref()
                .map(|t| (t.thread_config(plan.connections), t.server_name().clone())),
            per_request: cfg.lifetime == Lifetime::PerRequest,
            strings: h2::Strings::default(),
            paused: false,
            slot,
            answered: 0,
            napper: Napper::new(cfg.idle, closed_loop),
            ws_seeds: serverbench_wire::ws::Rng::from_os(slot as u64),
            draw: Draw::new(!(slot as u64), random_len, cfg.tls.is_some()),
            draws: serverbench_wire::ws::Rng::from_os(!(slot as u64)),
        })
    }

    /// Starts measuring at `measure` (monotonic ns): sets the window and the end.
    fn measure_from(&mut self, measure: u64) {
        self.end = match self.cfg.stop {
            Stop::Duration(d) => measure.saturating_add(d.as_nanos() as u64),
            Stop::Requests(_) => u64::MAX,
        };
        self.stats.set_window(measure, self.end);
    }

    /// Runs until the stop condition; returns the nanoseconds measured and, over them, how long
    /// this thread waited for a CPU (see [`Outcome::run_wait`]).
    fn main_loop(&mut self, shared: &Shared) -> io::Result<(u64, Option<(u64, u64)>)> {
        let start = sys::now_ns();
        let mut gated = shared.gated;
        let pause_at = start + self.cfg.warmup.as_nanos() as u64;
        let mut measure = if gated {
            u64::MAX
        } else {
            start + self.cfg.warmup.as_nanos() as u64
        };
        self.measure_from(measure);
        if let Some(r) = &mut self.rate {
            r.start = start;
        }
        for i in 0..self.conns.len() {
            if self.conns[i].state == State::Connected {
                self.on_connected(i, start, None);
            }
        }
        let mut events = Events::with_capacity(1024);
        let mut next_tick = start + TICK_NS;
        // (CPU wait so far, when) read once measuring has begun.
        let mut waited_from: Option<Option<(u64, u64)>> = None;
        loop {
            if gated {
                // Until the gate opens nothing is measured (end and window at infinity).
                match self.watch_gate(shared, pause_at) {
                    Gate::Shut => {}
                    Gate::CalledOff => break,
                    Gate::Open(at) => {
                        gated = false;
                        measure = at;
                        self.measure_from(at);
                    }
                }
            }
            let now = sys::now_ns();
            if now >= self.end || self.done >= self.quota {
                break;
            }
            if waited_from.is_none() && now >= measure {
                waited_from =
                    Some(serverbench_machine::process::thread_run_wait_ns().map(|w| (w, now)));
            }
            let nap = self.napper.span_ns();
            let wait = nap.map_or((self.end - now).min(TICK_NS), |_| 0);
            let any = match self.io {
                Backend::Epoll(_) => self.epoll_turn(&mut events, wait, now)?,
                Backend::Uring(_) => self.uring_turn(wait, Some(now))?,
            };
            if let (Some(ns), false) = (nap, any) {
                self.napper.nap(ns.min(self.end - now));
            }
            let now = sys::now_ns();
            // After the end nothing times out: what is in flight then stays so (a WebSocket
            // upgrade is counted unanswered), not dropped uncounted.
            if now >= next_tick && now < self.end {
                next_tick = now + TICK_NS;
                self.housekeeping(now);
                self.publish(shared, false);
            }
        }
        if matches!(self.cfg.protocol, Protocol::TcpStream { .. }) {
            self.drain_stream(&mut events);
        }
        let now = sys::now_ns();
        let run_wait = waited_from.flatten().and_then(|(w0, t0)| {
            Some((
                serverbench_machine::process::thread_run_wait_ns()?.saturating_sub(w0),
                now - t0,
            ))
        });
        Ok((now.min(self.end).saturating_sub(measure), run_wait))
    }

    /// One epoll wait of up to `wait_ns` (from `now`, which the napper learns from) and its
    /// events handled; returns whether any came.
    fn epoll_turn(&mut self, events: &mut Events, wait_ns: u64, now: u64) -> io::Result<bool> {
        let Backend::Epoll(poll) = &mut self.io else {
            return Ok(false);
        };
        if let Err(e) = poll.poll(events, Some(Duration::from_nanos(wait_ns))) {
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        self.napper.polled(now, events.is_empty());
        for ev in events.iter() {
            let now = sys::now_ns();
            if now >= self.end {
                break; // nothing after the end is sent or counted (TCP stream drains below)
            }
            if ev.token() == TIMER {
                if let Some(r) = &mut self.rate {
                    r.timer.drain();
                }
                self.dispatch(now);
                continue;
            }
            let closed = ev.is_read_closed() || ev.is_error();
            let readable = if closed {
                Readable::Closed
            } else if ev.is_readable() {
                Readable::Data
            } else {
                Readable::No
            };
            self.on_event(ev.token().0, readable, ev.is_writable(), now);
        }
        Ok(!events.is_empty())
    }

    fn on_event(&mut self, i: usize, readable: Readable, writable: bool, now: u64) {
        match self.conns[i].state {
            State::Connecting(t) => match self.conns[i].check_connected(writable) {
                Some(true) => self.on_connected(i, now, Some(t)),
                Some(false) => self.fail(i, now, ErrorKind::Connect, BACKOFF_NS),
                None => {}
            },
            State::Handshaking(_) => self.handshake(i, now, false),
            State::Ready => {
                if readable != Readable::No
                    && !self.on_readable(i, readable == Readable::Closed, now)
                {
                    return;
                }
                if writable {
                    self.flush(i, now);
                }
            }
            State::Backoff(_) | State::Connected => {}
        }
    }

    /// A connection is ready for requests: start sending according to the schedule (HTTP/2:
    /// the preface first; requests follow the server's SETTINGS).
    fn on_ready(&mut self, i: usize, now: u64) {
        if let Protocol::Http2(h) = &self.cfg.protocol {
            let c = &mut self.conns[i];
            let urls = h.requests.len();
            c.h2 = Some(Box::new(h2::H2Conn::new(
                h.window, h.verify, urls, &mut c.out,
            )));
            self.flush(i, now);
        } else if let Protocol::WebSocket(_) = &self.cfg.protocol {
            self.ws_upgrade(i, now);
        } else if self.rate.is_some() {
            self.make_idle(i);
            self.dispatch(now);
        } else {
            self.fill(i, now);
            self.flush(i, now);
        }
    }

    /// Closed loop: tops the connection up to the pipeline depth (HTTP/2: the streams).
    fn fill(&mut self, i: usize, now: u64) {
        match self.cfg.protocol {
            Protocol::TcpStream { .. } => return, // no requests: `flush` keeps the socket full
            Protocol::Http2(_) => {
                while self.has_room(i) && self.can_issue() {
                    self.issue(i, now, now);
                }
                return;
            }
            Protocol::WebSocket(_) if !self.ws_open(i) || self.conn_due(i) => return,
            _ => {}
        }
        // Pipelined: refill once the whole window came back (as wrk does), so that one write
        // carries `depth` requests and the server reads them in one go.
        if !self.conns[i].inflight.is_empty() {
            return;
        }
        // `--reconnect-every N`: no more than N requests on one connection.
        let left = self.cfg.reconnect_every.map_or(usize::MAX, |n| {
            n.saturating_sub(self.conns[i].served) as usize
        });
        let window = self.depth.min(left);
        while self.conns[i].inflight.len() < window && self.can_issue() {
            self.issue(i, now, now);
        }
    }

    fn can_issue(&self) -> bool {
        !self.stopping && !self.paused && self.issued < self.quota
    }

    /// Appends one request to the connection's output (not written yet).
    fn issue(&mut self, i: usize, intended: u64, now: u64) {
        let c = &mut self.conns[i];
        let url = match &self.cfg.protocol {
            Protocol::Http(h) => {
                let u = next_request(
                    &mut self.next_url,
                    &mut self.draws,
                    self.cfg,
                    h.requests.len(),
                );
                let t = &h.requests[u];
                if t.is_constant() {
                    c.out.extend_from_slice(t.constant());
                    if t.constant_body_len() > 0 {
                        self.stats.request_body(now, t.constant_body_len());
                    }
                } else {
                    let n = t.write(&mut c.out, &mut c.splices, &mut self.draw);
                    self.stats.request_body(now, n);
                }
                u
            }
            Protocol::Http2(h) => {
                let u = next_request(
                    &mut self.next_url,
                    &mut self.draws,
                    self.cfg,
                    h.requests.len(),
                );
                let req = Inflight {
                    intended,
                    sent: now,
                    url: u as u32,
                };
                if let Some(conn) = c.h2.as_deref_mut() {
                    conn.open_stream(&h.requests[u], req, &mut c.out);
                    self.issued += 1;
                }
                return;
            }
            Protocol::TcpPingPong { .. } => {
                c.out.extend_from_slice(&self.pattern);
                0
            }
            Protocol::TcpStream { .. } => return,
            Protocol::WebSocket(w) => return self.ws_issue(i, w, intended, now),
        };
        c.inflight.push_back(Inflight {
            intended,
            sent: now,
            url: url as u32,
        });
        self.issued += 1;
    }

    /// Writes pending output (io_uring: queues it); on failure the connection is reset.
    /// Returns false if it was.
    fn flush(&mut self, i: usize, now: u64) -> bool {
        if let Backend::Uring(_) = self.io {
            return self.uring_flush(i, now);
        }
        let (n, how) = match &self.cfg.protocol {
            Protocol::TcpStream { message } => {
                if self.stopping || self.paused {
                    return true;
                }
                self.conns[i].stream_write(&self.pattern, message.len(), STREAM_CHUNK)
            }
            _ => self.conns[i].flush(),
        };
        self.stats.wrote(now, n);
        if how == Flushed::Failed {
            self.fail(i, now, ErrorKind::Write, 0);
            return false;
        }
        true
    }
}

/// The next request: drawn by weight with `--mix`, else the URLs in rotation.
#[inline]
fn next_request(
    next: &mut usize,
    draws: &mut serverbench_wire::ws::Rng,
    cfg: &Config,
    len: usize,
) -> usize {
    if let Some(m) = &cfg.mix {
        return m.picker.pick(draws.next_u64());
    }
    let u = *next;
    *next = if u + 1 == len { 0 } else { u + 1 };
    u
}

/// The backend asked for, or epoll with a note when the kernel refuses this thread a ring.
fn backend_for(backend: IoBackend, connections: usize) -> io::Result<(Backend, Option<String>)> {
    if backend != IoBackend::Uring {
        return Ok((Backend::Epoll(Poll::new()?), None));
    }
    Ok(match Ring::new(connections) {
        Ok(ring) => (
            Backend::Uring(Box::new(uring::Uring::new(ring, connections))),
            None,
        ),
        Err(e) => (
            Backend::Epoll(Poll::new()?),
            Some(crate::uring::refused_note(&e)),
        ),
    })
}
