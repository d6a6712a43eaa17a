//! The one worker loop: an event loop per thread over a static share of the connections,
//! generic over its protocol driver ([`crate::proto::Driver`]: HTTP/1.1, HTTP/2, WebSocket, TCP
//! echo), parameterised by schedule x stop, by transport (plain or TLS) x connection lifetime
//! (keep-alive or one request per connection), and by backend: an edge-triggered mio poll with
//! `recv`/`send` ([`Backend::Epoll`]), or an io_uring with multishot receives and queued sends
//! ([`Backend::Uring`], in `uring.rs`). The backends differ only in how bytes come in and go
//! out; the drivers only in what the bytes mean; everything else is shared.

use crate::config::{Config, Lifetime, Schedule, Stop};
use crate::conn::{Conn, Flushed, State};
use crate::idle::Napper;
use crate::proto::Driver;
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
mod lowat;
mod phases;
mod rate;
mod read;
mod shared;
mod tls;
mod uring;

pub use shared::{Outcome, Plan, Shared};

use phases::Gate;
use rate::RateState;

const TIMER: Token = Token(usize::MAX - 1);
const READ_BUF: usize = 64 * 1024;
const STREAM_CHUNK: usize = 64 * 1024;
/// io_uring: one send per connection is in the kernel at a time, so each carries more (a send
/// that finds the socket full completes with what fit once it drains).
pub(crate) const URING_STREAM_CHUNK: usize = 256 * 1024;
const TICK_NS: u64 = 10_000_000;
pub(crate) const BACKOFF_NS: u64 = 10_000_000;
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

pub struct Worker<'a, D> {
    pub(crate) cfg: &'a Config,
    /// The protocol: its hooks and its per-thread state.
    pub(crate) proto: D,
    io: Backend,
    /// Why this worker runs on epoll although io_uring was asked for.
    io_note: Option<String>,
    pub(crate) conns: Vec<Conn>,
    buf: Vec<u8>,
    pub(crate) stats: Stats,
    depth: usize,
    pub(crate) issued: u64,
    pub(crate) done: u64,
    pub(crate) quota: u64,
    rate: Option<RateState>,
    first_body: Vec<Option<(u64, u64)>>,
    /// Per URL (ping-pong: one), the smallest response seen, in bytes (0: none yet).
    pub(crate) expect: Vec<usize>,
    /// Whether low-water marks may count on predicted sizes (off once sizes keep shrinking).
    predicting: bool,
    shrinks: u32,
    next_url: usize,
    timeout_ns: u64,
    pub(crate) end: u64,
    pub(crate) stopping: bool,
    /// `https://`: this thread's client configuration (its own session cache) and SNI name.
    pub(crate) tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
    /// `--new-conn`: close after each response and connect again.
    pub(crate) per_request: bool,
    /// Gated runs: no new request while waiting for the gate after the warm-up.
    pub(crate) paused: bool,
    /// This worker's slot on the live board, and the last request it answered.
    slot: usize,
    answered: u64,
    /// `--idle`: blocks or naps when the poll finds nothing.
    napper: Napper,
    /// `--mix`: draws each request's entry.
    draws: serverbench_wire::ws::Rng,
}

/// Runs one worker thread from setup to the end of the run.
pub fn run<D: Driver>(
    cfg: &Config,
    proto: D,
    plan: Plan,
    slot: usize,
    shared: &Shared,
    backend: IoBackend,
) -> io::Result<Outcome> {
    let built = match plan.cpu {
        Some(cpu) => serverbench_machine::affinity::pin_current_thread(cpu)
            .and_then(|()| Worker::new(cfg, proto, &plan, slot, backend)),
        None => Worker::new(cfg, proto, &plan, slot, backend),
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
        D::at_end(&mut w);
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

impl<'a, D: Driver> Worker<'a, D> {
    fn new(
        cfg: &'a Config,
        proto: D,
        plan: &Plan,
        slot: usize,
        backend: IoBackend,
    ) -> io::Result<Self> {
        let depth = proto.depth(cfg.schedule);
        let conns = (0..plan.connections)
            .map(|_| Conn::new(proto.parser(), depth))
            .collect();
        let urls = proto.urls();
        let closed_loop = matches!(cfg.schedule, Schedule::ClosedLoop { .. }) && !D::STREAM;
        let (mut io, io_note) = match (D::UDP, backend) {
            // The QUIC driver reads and writes its UDP sockets on the poll only.
            (true, IoBackend::Uring) => (
                Backend::Epoll(Poll::new()?),
                Some("HTTP/3 runs on epoll: its driver has no io_uring path yet".to_string()),
            ),
            _ => backend_for(backend, plan.connections)?,
        };
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
            stats,
            depth,
            issued: 0,
            done: 0,
            quota: plan.quota.unwrap_or(u64::MAX),
            rate,
            first_body: vec![None; urls],
            expect: proto.first_sizes(),
            proto,
            predicting: true,
            shrinks: 0,
            next_url: 0,
            timeout_ns: cfg.spec.timeout.as_nanos() as u64,
            end: u64::MAX,
            stopping: false,
            tls: cfg
                .tls
                .as_ref()
                .map(|t| (t.thread_config(plan.connections), t.server_name().clone())),
            per_request: cfg.lifetime == Lifetime::PerRequest,
            paused: false,
            slot,
            answered: 0,
            napper: Napper::new(cfg.idle, closed_loop),
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
        let pause_at = start + self.cfg.spec.warmup.as_nanos() as u64;
        let mut measure = if gated {
            u64::MAX
        } else {
            start + self.cfg.spec.warmup.as_nanos() as u64
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
            let mut wait = nap.map_or((self.end - now).min(TICK_NS), |_| 0);
            if D::UDP {
                wait = wait.min(D::next_timer(self).saturating_sub(now));
            }
            let any = match self.io {
                Backend::Epoll(_) => self.epoll_turn(&mut events, wait, now)?,
                Backend::Uring(_) => self.uring_turn(wait, Some(now))?,
            };
            if let (Some(ns), false) = (nap, any) {
                self.napper.nap(ns.min(self.end - now));
            }
            let now = sys::now_ns();
            if D::UDP && now < self.end {
                D::timers(self, now);
            }
            // After the end nothing times out: what is in flight then stays so (a WebSocket
            // upgrade is counted unanswered), not dropped uncounted.
            if now >= next_tick && now < self.end {
                next_tick = now + TICK_NS;
                self.housekeeping(now);
                self.publish(shared, false);
            }
        }
        if D::STREAM {
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
        if D::UDP {
            return D::event(self, i, now);
        }
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

    /// A connection is ready for requests: start sending according to the schedule (a driver
    /// with a session, HTTP/2 or WebSocket, opens it first: see [`Driver::on_ready`]).
    #[inline]
    pub(crate) fn on_ready(&mut self, i: usize, now: u64) {
        D::on_ready(self, i, now);
    }

    /// Requests start on connection `i`: `-R` makes it idle for the schedule, the closed loop
    /// fills its window.
    pub(crate) fn start_requests(&mut self, i: usize, now: u64) {
        if self.rate.is_some() {
            self.make_idle(i);
            self.dispatch(now);
        } else {
            self.fill(i, now);
            self.flush(i, now);
        }
    }

    /// Closed loop: tops the connection up to the pipeline depth (HTTP/2: the streams).
    #[inline]
    pub(crate) fn fill(&mut self, i: usize, now: u64) {
        D::fill(self, i, now);
    }

    /// Pipelined: refill once the whole window came back (as wrk does), so that one write
    /// carries `depth` requests and the server reads them in one go.
    pub(crate) fn fill_window(&mut self, i: usize, now: u64) {
        if !self.conns[i].inflight.is_empty() {
            return;
        }
        // `--reconnect-every N`: no more than N requests on one connection.
        let left = self.cfg.spec.work.reconnect_every.map_or(usize::MAX, |n| {
            n.saturating_sub(self.conns[i].served) as usize
        });
        let window = self.depth.min(left);
        while self.conns[i].inflight.len() < window && self.can_issue() {
            D::issue(self, i, now, now);
        }
    }

    pub(crate) fn can_issue(&self) -> bool {
        !self.stopping && !self.paused && self.issued < self.quota
    }

    /// Appends one request to the connection's output (not written yet).
    #[inline]
    pub(crate) fn issue(&mut self, i: usize, intended: u64, now: u64) {
        D::issue(self, i, intended, now);
    }

    /// The request to send next: drawn by weight with `--mix`, else the URLs in rotation.
    #[inline]
    pub(crate) fn next_request(&mut self, len: usize) -> usize {
        if let Some(m) = &self.cfg.mix {
            return m.picker.pick(self.draws.next_u64());
        }
        let u = self.next_url;
        self.next_url = if u + 1 == len { 0 } else { u + 1 };
        u
    }

    /// Writes pending output (io_uring: queues it); on failure the connection is reset.
    /// Returns false if it was.
    pub(crate) fn flush(&mut self, i: usize, now: u64) -> bool {
        if D::UDP {
            return D::transmit(self, i, now);
        }
        if let Backend::Uring(_) = self.io {
            return self.uring_flush(i, now);
        }
        let (n, how) = match self.proto.stream() {
            Some((pattern, message_len)) => {
                if self.stopping || self.paused {
                    return true;
                }
                self.conns[i].stream_write(pattern, message_len, STREAM_CHUNK)
            }
            None => self.conns[i].flush(),
        };
        self.stats.wrote(now, n);
        if how == Flushed::Failed {
            self.fail(i, now, ErrorKind::Write, 0);
            return false;
        }
        true
    }

    /// `--reconnect-every N`: connection `i` has answered its N responses.
    pub(crate) fn conn_due(&self, i: usize) -> bool {
        self.cfg
            .spec
            .work
            .reconnect_every
            .is_some_and(|n| self.conns[i].served >= n)
    }
}

impl<D: Driver> Worker<'_, D> {
    /// The epoll registry a driver that owns its sockets registers them with, and the
    /// driver's own state beside it.
    pub(crate) fn registry_and_proto(&mut self) -> (Option<&mio::Registry>, &mut D) {
        match &self.io {
            Backend::Epoll(poll) => (Some(poll.registry()), &mut self.proto),
            Backend::Uring(_) => (None, &mut self.proto),
        }
    }
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
