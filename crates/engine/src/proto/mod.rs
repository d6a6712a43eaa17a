//! The protocol seam: what a protocol driver does on top of the worker loop, and the one place
//! a driver is chosen ([`run`]; with [`protocol_part`] and [`stream_message_len`], the only
//! matches on [`Protocol`] outside `config`).
//!
//! # Who owns what
//!
//! The worker ([`crate::worker`]) owns everything that is not a protocol: the backend (an
//! epoll poll, or one io_uring per thread), the sockets and their connects, TLS (a layer under
//! any TCP driver: a driver sees plaintext), timers (housekeeping every 10 ms, the `-R`
//! timerfd), the schedule (closed loop or `-R`), the stop (duration, `-n`, a gate) and the
//! [`crate::stats::Stats`] every completion and error goes into. A driver owns the bytes on a
//! connection: what opens a session on it ([`Driver::on_ready`]: HTTP/2's preface, a WebSocket
//! upgrade), what is written when a request is due ([`Driver::issue`]), what the bytes read
//! mean ([`Driver::consume`], which completes requests through `Worker::complete` and reports
//! errors through `Worker::fail`), when a connection can take another request
//! ([`Driver::has_room`]) and what an end of stream or a timeout means.
//!
//! The worker is generic over its driver (`Worker<D: Driver>`), instantiated once per driver
//! in [`run`] (and its result block made by the driver, in `protocol_part`, the other match
//! on the same enum): every hook is a static call the compiler inlines, so the hot path has no
//! dynamic dispatch and no allocation a driver does not make itself. A driver's per-thread
//! state (its prepared requests, HPACK strings, random generators) is its `Self`; a
//! connection's protocol state sits on the connection.
//!
//! | driver            | folder            | [`serverbench_model::Workload`] |
//! |-------------------|-------------------|---------------------------------|
//! | HTTP/1.1          | [`http1`]         | `Http1`                         |
//! | HTTP/2 (h2, h2c)  | [`http2`]         | `Http2`                         |
//! | WebSocket echo    | [`ws`]            | `WebSocket`                     |
//! | TCP echo          | [`tcp`]           | `TcpStream`, `TcpPingPong`      |
//! | gRPC (unary)      | [`grpc`]          | `Grpc`                          |
//! | HTTP/3 over QUIC  | [`h3`]            | `Http3`                         |
//!
//! # Adding a driver
//!
//! A folder here with a type implementing [`Driver`] (its hooks and, as an `impl Worker<'_,
//! TheDriver>` block, its protocol steps) and a `result` function making its block of the
//! result, a variant of `serverbench_model::Workload` (and of the model's `ProtocolResult`) and
//! of `config::Protocol` carrying its prepared spec, and an arm in each match of this module. No other driver and
//! no part of the worker loop changes: gRPC, for one, is the HTTP/2 driver with its own
//! request encoding and status checks.
//!
//! # A transport that is not TCP: the shape of the QUIC / HTTP/3 driver
//!
//! The TCP drivers let the worker read and write their sockets, because every TCP protocol
//! moves bytes the same way (`recv`/`send`, or multishot receives and queued sends on
//! io_uring). QUIC moves datagrams and runs its own state machine (loss recovery, congestion
//! control, stream flow control) with its own timers, so its driver owns the transport and the
//! worker keeps the rest:
//!
//! - **Sockets**: one UDP socket per connection (`connect`ed, so the kernel demultiplexes and
//!   each connection keeps its own 4-tuple); one shared per thread, with connection IDs
//!   telling them apart, is not built. The driver opens them when the worker asks it to open
//!   connection `i` and registers them with the worker's epoll under connection `i`'s token,
//!   as the TCP connect does.
//! - **Datagrams in**: the worker's poll says socket `i` is readable; the driver drains it with `recvmmsg` (with UDP GRO, `UDP_GRO`, one call
//!   returns many coalesced datagrams and a segment size) and feeds each datagram to the
//!   QUIC connection, whose stream events then complete requests as HTTP/2's do
//!   (`Worker::complete`, `Worker::fail` into the same stats).
//! - **Datagrams out**: [`Driver::issue`] opens a request stream (HEADERS over QPACK); the
//!   write that follows asks the QUIC state machine for what is due and sends it with
//!   `sendmsg` + `UDP_SEGMENT` (GSO: one call, many datagrams of one size), paced as it asks.
//! - **Timers**: after each step the QUIC connection names its next deadline (loss detection,
//!   ack delay, idle timeout, pacing). The worker already wakes at least every 10 ms and on
//!   the `-R` timerfd; its wait is cut to the earliest of the QUIC driver's deadlines (a scan
//!   of its connections': a thread holds tens) and the driver's timers run after each wait.
//! - **What stays the worker's**: the schedule, the stop, the gate, the live view, the stats;
//!   TLS is not (QUIC carries TLS 1.3 inside: the driver keeps its own rustls QUIC session,
//!   and the handshake figures go to the same stats). `--io uring` runs on epoll with a note:
//!   the driver has no ring path.
//!
//! The hooks below that name bytes (`issue`, `consume`) are transport-neutral already; the
//! QUIC driver adds, as default methods of this trait that the TCP drivers never override and
//! that the worker calls only under `if D::UDP` (a constant, so the TCP loops compile without
//! them): `open` (make connection `i`'s socket), `start` (its first flight), `event` (drain
//! it), `transmit` (the worker's flush), `next_timer` and `timers`, `on_close`, and
//! `handshake_timeout`.

pub mod grpc;
pub mod h3;
pub mod http1;
pub mod http2;
pub mod tcp;
pub mod ws;

use crate::config::{Config, Protocol, Schedule};
use crate::conn::State;
use crate::http::ResponseParser;
use crate::stats::{ErrorKind, Stats};
use crate::worker::{self, Outcome, Plan, Shared, Worker};
use serverbench_model::result::{ConnectionMode, Histograms, MixEntryResult, ProtocolResult};
use serverbench_model::IoBackend;
use serverbench_wire::coding::Accepts;

/// One protocol over a connection: the hooks the worker loop calls. Defaults are what a
/// request/response protocol without sessions does (TCP ping-pong takes them all but two).
pub trait Driver: Sized {
    /// No requests: the driver writes [`Driver::stream`]'s pattern as fast as the socket takes
    /// it and reads echoes back, drained after the end (TCP stream).
    const STREAM: bool = false;
    /// Several requests in flight share a connection at once (HTTP/2 streams): with `-R` a
    /// connection that still has room goes back to the idle list after a send.
    const MULTIPLEXED: bool = false;
    /// The ALPN protocol a TLS handshake must negotiate for this driver to run.
    const ALPN: Option<&'static [u8]> = None;

    /// Requests in flight per connection in the closed loop (`-p`), and with `-R`.
    fn depth(&self, schedule: Schedule) -> usize {
        match schedule {
            Schedule::ClosedLoop { depth } => depth as usize,
            Schedule::Rate { .. } => 1,
        }
    }

    /// A connection's HTTP/1.1 response parser (drivers that parse none keep the default).
    fn parser(&self) -> ResponseParser {
        ResponseParser::new(false, false)
    }

    /// How many distinct requests (URLs) the driver sends.
    fn urls(&self) -> usize {
        1
    }

    /// Each URL's response size known before any arrived (0: learn it).
    fn first_sizes(&self) -> Vec<usize> {
        vec![0; self.urls()]
    }

    /// TCP stream: the pattern (the message repeated, longer than a write) and the message's
    /// length.
    fn stream(&self) -> Option<(&[u8], usize)> {
        None
    }

    /// `--expect-status` and `--verify`, for drivers whose answers carry a status and a body.
    fn checks(&self) -> Option<(&[u16], bool)> {
        None
    }

    /// HTTP/1.1 counting bodies: the codings request `url` accepts.
    fn accepts(&self, _url: usize) -> Option<Accepts> {
        None
    }

    /// Connection `i` is up (TCP, and TLS where asked): open the session, or start requests.
    fn on_ready(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        w.start_requests(i, now);
    }

    /// A gate opened: connection `i`, up and paused, takes requests again.
    fn resume(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        Self::on_ready(w, i, now);
    }

    /// Closed loop: tops connection `i` up to its window.
    fn fill(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        w.fill_window(i, now);
    }

    /// Appends one request to connection `i`'s output (not written yet) and counts it issued.
    fn issue(w: &mut Worker<'_, Self>, i: usize, intended: u64, now: u64);

    /// Feeds bytes read on connection `i` to the protocol; returns false if the connection was
    /// closed (reset, reopened).
    fn consume(w: &mut Worker<'_, Self>, i: usize, data: &[u8], now: u64) -> bool;

    /// Whether connection `i` can take a request now.
    fn has_room(w: &Worker<'_, Self>, i: usize) -> bool {
        let c = &w.conns[i];
        c.state == State::Ready && c.inflight.is_empty() && !w.conn_due(i)
    }

    /// The peer closed connection `i`.
    fn on_eof(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        w.eof_of_responses(i, now);
    }

    /// The receive low-water mark connection `i` wants now (`window`: marks may count on
    /// predicted sizes), and whether it is predicted.
    fn lowat(w: &mut Worker<'_, Self>, i: usize, window: bool) -> (usize, bool) {
        let c = &w.conns[i];
        let exact = c.parser.body_remaining().map(|n| n as usize);
        w.window_lowat(i, window, exact, c.partial)
    }

    /// The low-water mark's guard dropped a predicted mark on a connection.
    fn mark_dropped(_w: &mut Worker<'_, Self>) {}

    /// Connection `i` broke (a read or write error).
    fn on_lost(_w: &mut Worker<'_, Self>, _i: usize, _now: u64) {}

    /// What a timeout on connection `i` is.
    fn timeout_kind(_w: &Worker<'_, Self>, _i: usize) -> ErrorKind {
        ErrorKind::Timeout
    }

    /// The run ended: count what only the driver knows.
    fn at_end(_w: &mut Worker<'_, Self>) {}

    // The transport hooks of a driver that owns its sockets (QUIC over UDP: see "A transport
    // that is not TCP" above). The worker calls them only where `UDP` is true, a constant, so
    // the TCP drivers' loops compile without them.

    /// The driver owns its transport: UDP sockets it opens, reads and writes itself.
    const UDP: bool = false;

    /// Opens connection `i`'s transport (its socket registered with the worker's poll under
    /// token `i`) and leaves it `State::Connected`; the worker then starts it
    /// ([`Worker::on_connected`](crate::worker::Worker)).
    fn open(_w: &mut Worker<'_, Self>, _i: usize, _now: u64) -> std::io::Result<()> {
        unreachable!("only a driver that owns its transport is asked to open one")
    }

    /// Connection `i`'s transport starts (its handshake's first flight goes out).
    fn start(_w: &mut Worker<'_, Self>, _i: usize, _now: u64) {}

    /// The poll says connection `i`'s socket has something: drain it and act on it.
    fn event(_w: &mut Worker<'_, Self>, _i: usize, _now: u64) {}

    /// Sends what connection `i` owes (the worker's flush); false if the connection was reset.
    fn transmit(_w: &mut Worker<'_, Self>, _i: usize, _now: u64) -> bool {
        true
    }

    /// The earliest deadline of the driver's timers (monotonic ns; `u64::MAX`: none).
    fn next_timer(_w: &Worker<'_, Self>) -> u64 {
        u64::MAX
    }

    /// Runs the timers due at `now`.
    fn timers(_w: &mut Worker<'_, Self>, _now: u64) {}

    /// Connection `i` is being closed by the worker (reopened, failed, or at the end).
    fn on_close(_w: &mut Worker<'_, Self>, _i: usize) {}

    /// What a handshake that outlived the timeout on connection `i` is.
    fn handshake_timeout(_w: &Worker<'_, Self>, _i: usize) -> ErrorKind {
        ErrorKind::Tls(crate::tls::TlsCause::HandshakeTimeout)
    }
}

/// What every HTTP driver's result block carries: keep-alive or a connection per request, and
/// the `--mix` entries' figures.
pub(crate) type Common = (ConnectionMode, Vec<MixEntryResult>);

/// One thread's protocol block (see `stats::assemble`), made by the driver `config` runs;
/// a driver's histograms of its own go into `h`.
pub(crate) fn protocol_part(
    config: &Config,
    s: &Stats,
    common: Common,
    h: &mut Histograms,
) -> ProtocolResult {
    match &config.protocol {
        Protocol::Http(spec) => http1::result(spec, s, common),
        Protocol::Http2(spec) => http2::result(config, spec, s, common),
        Protocol::WebSocket(spec) => ws::result(config, spec, s, h),
        Protocol::TcpStream { .. } => tcp::stream_result(s),
        Protocol::TcpPingPong { .. } => tcp::ping_pong_result(),
        Protocol::Grpc(spec) => grpc::result(config, spec, s, h),
        Protocol::Http3(spec) => h3::result(spec, s, common),
    }
}

/// TCP stream: the message's length (a request is a message echoed); None for other drivers.
pub(crate) fn stream_message_len(config: &Config) -> Option<usize> {
    match &config.protocol {
        Protocol::TcpStream { message } => Some(message.len()),
        _ => None,
    }
}

/// Runs one worker thread with the driver `config` asks for: the one place a driver is chosen.
pub fn run(
    config: &Config,
    plan: Plan,
    slot: usize,
    shared: &Shared,
    backend: IoBackend,
) -> std::io::Result<Outcome> {
    let tls = config.tls.is_some();
    match &config.protocol {
        Protocol::Http(h) => {
            let d = http1::Http1::new(h, slot, tls);
            worker::run(config, d, plan, slot, shared, backend)
        }
        Protocol::Http2(h) => {
            worker::run(config, http2::Http2::new(h), plan, slot, shared, backend)
        }
        Protocol::WebSocket(s) => {
            worker::run(config, ws::Ws::new(s, slot), plan, slot, shared, backend)
        }
        Protocol::TcpStream { message } => {
            let d = tcp::Stream::new(message);
            worker::run(config, d, plan, slot, shared, backend)
        }
        Protocol::TcpPingPong { size } => {
            let d = tcp::PingPong::new(*size);
            worker::run(config, d, plan, slot, shared, backend)
        }
        Protocol::Grpc(g) => worker::run(
            config,
            grpc::Grpc::new(g, slot),
            plan,
            slot,
            shared,
            backend,
        ),
        Protocol::Http3(h) => {
            let d = h3::H3::new(h, plan.connections);
            worker::run(config, d, plan, slot, shared, backend)
        }
    }
}
