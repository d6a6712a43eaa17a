//! The HTTP/3 driver (`--http3`): QUIC v1 over UDP with TLS 1.3 inside, a request per
//! bidirectional stream (`-m N` per connection, lowered by the server's stream credit).
//!
//! # Choices
//!
//! - **QUIC is quinn-proto** 0.11 (sans-IO: its `Endpoint` and `Connection` are driven by the
//!   worker's own loop: datagrams in through `Endpoint::handle`, out through
//!   `Connection::poll_transmit`, timers through `poll_timeout`/`handle_timeout`), with rustls
//!   on ring as the rest of the engine (the thread's TLS configuration, its trust flags and
//!   session cache, made TLS 1.3 and ALPN `h3`). It was chosen over quiche without measuring
//!   quiche here: quinn-proto uses the rustls the engine already builds, is sans-IO, and was
//!   already in Cargo.lock (quinn's), where quiche would bring BoringSSL and a C build.
//! - **UDP is quinn-udp** 0.5: `sendmsg` with `UDP_SEGMENT` (GSO: a batch of datagrams of one
//!   size per call, as quinn-proto's `Transmit::segment_size` asks) and `recvmmsg` with
//!   `UDP_GRO` (coalesced datagrams cut at `RecvMeta::stride`). One socket per connection,
//!   `connect`ed, so the kernel demultiplexes and each connection has its own 4-tuple; a
//!   socket shared by a thread's connections was not measured yet.
//! - **HTTP/3 and QPACK are hand-written** in `serverbench_wire::h3` (why: its module docs);
//!   the client allows no QPACK dynamic table.
//!
//! # How it rides on the worker
//!
//! The driver owns its transport (`Driver::UDP`): the worker asks it to open connection `i`
//! (a socket registered with the epoll under token `i`), hands it the poll's events on that
//! token, cuts its waits to the driver's earliest QUIC timer (a scan of the connections'
//! deadlines: a thread holds tens of connections, not thousands) and calls the due ones. The
//! schedule (closed loop, `-R`), the stop, the gate, the live view and the stats stay the
//! worker's: requests are in `Conn::inflight` (timeouts, in-flight counts), completed through
//! `Worker::complete`. A handshake completes the connection's "connect": its latency goes to
//! both the connect and the TLS handshake figures. QUIC has no io_uring path: `--io uring`
//! runs on epoll with a note.
//!
//! # Errors
//!
//! A handshake that gets no datagram back (or ICMP port unreachable) is `no answer on UDP`, a
//! refused ALPN `alpn: the server refused h3`, a certificate problem its cause, all in the
//! TLS block's errors. A connection closed with a QUIC transport error counts in
//! `transport_errors` by name (and as a `protocol` error, `connect` before the handshake);
//! with an HTTP/3 code, or when this client finds the server's frames wrong, in `h3_errors`;
//! a stream reset in `h3_errors` and `stream_resets` (both as `protocol` errors). A close
//! with H3_NO_ERROR (after a GOAWAY, or an idle server) reconnects without an error. At the
//! end every connection is closed with H3_NO_ERROR.
//!
//! `--0rtt` (with `--tls-resume tickets`): a connection whose session ticket allows early data
//! sends its requests with its first flight; the result counts those attempted and accepted,
//! and requests the server rejected are sent again after the handshake. A handshake counts as
//! resumed only when its 0-RTT was accepted: quinn-proto does not say whether a handshake
//! without early data resumed (those count as full).

mod quic;
mod streams;

use super::{Common, Driver};
use crate::config::{H3Spec, Schedule};
use crate::conn::{Inflight, State};
use crate::stats::{ErrorKind, Stats};
use crate::tls::{Negotiated, TlsCause};
use crate::worker::{Worker, BACKOFF_NS};
use mio::unix::SourceFd;
use mio::{Interest, Token};
use quic::{Fate, Lost, QConn, Quic};
use serverbench_model::result::{
    Http3Result, ProtocolResult, QuicCounters, QuicSocket, ZeroRttResult,
};
use serverbench_model::TlsVersion;
use serverbench_wire::h2::Strings;
use serverbench_wire::h3::Code;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use streams::Step;

/// HTTP/3 on one worker thread: the prepared requests, the QUIC endpoint, each connection's
/// QUIC state (by the worker's connection index), and this thread's Huffman strings.
pub struct H3<'a> {
    spec: &'a H3Spec,
    strings: Strings,
    quic: Quic,
    conns: Vec<Option<Box<QConn>>>,
    /// What the last round of a connection's events owes (reused).
    steps: Vec<Step>,
}

impl<'a> H3<'a> {
    pub fn new(spec: &'a H3Spec, connections: usize) -> Self {
        H3 {
            spec,
            strings: Strings::default(),
            quic: Quic::new(crate::sys::now_ns()),
            conns: (0..connections).map(|_| None).collect(),
            steps: Vec::new(),
        }
    }
}

/// The QUIC client configuration from the worker's TLS one (TLS 1.3, ALPN h3, the thread's
/// session cache, early data with `--0rtt`): the server may open no bidirectional stream, and
/// an idle connection sends a PING every 5 s.
fn client_config(
    tls: &Arc<rustls::ClientConfig>,
    zero_rtt: bool,
) -> std::io::Result<quinn_proto::ClientConfig> {
    let mut tls = (**tls).clone();
    tls.enable_early_data = zero_rtt;
    let crypto = quinn_proto::crypto::rustls::QuicClientConfig::try_from(tls)
        .map_err(std::io::Error::other)?;
    let mut c = quinn_proto::ClientConfig::new(Arc::new(crypto));
    let mut transport = quinn_proto::TransportConfig::default();
    transport.max_concurrent_bidi_streams(0u32.into());
    // A connection kept idle (a gate's pause, a slow -R) is not closed by an idle timeout.
    transport.keep_alive_interval(Some(std::time::Duration::from_secs(5)));
    c.transport_config(Arc::new(transport));
    Ok(c)
}

impl Driver for H3<'_> {
    const MULTIPLEXED: bool = true;
    const UDP: bool = true;

    /// Streams, not a pipeline: the window is the connection's streams.
    fn depth(&self, _schedule: Schedule) -> usize {
        self.spec.streams as usize
    }

    fn urls(&self) -> usize {
        self.spec.requests.len()
    }

    fn checks(&self) -> Option<(&[u16], bool)> {
        Some((&self.spec.expect_status, self.spec.verify))
    }

    fn fill(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        while w.has_room(i) && w.can_issue() {
            Self::issue(w, i, now, now);
        }
    }

    fn issue(w: &mut Worker<'_, Self>, i: usize, intended: u64, now: u64) {
        let spec = w.proto.spec;
        let u = w.next_request(spec.requests.len());
        let req = Inflight {
            intended,
            sent: now,
            url: u as u32,
        };
        let Some(q) = w.proto.conns[i].as_deref_mut() else {
            return;
        };
        if q.open_request(req, &spec.requests[u], spec.verify) {
            w.conns[i].inflight.push_back(req);
            w.issued += 1;
        }
    }

    /// Bytes come through the driver's own socket reads, never through the worker's.
    fn consume(_w: &mut Worker<'_, Self>, _i: usize, _data: &[u8], _now: u64) -> bool {
        true
    }

    fn has_room(w: &Worker<'_, Self>, i: usize) -> bool {
        let c = &w.conns[i];
        let Some(q) = w.proto.conns[i].as_deref() else {
            return false;
        };
        // In flight until its step is taken (a round's streams end before their steps run).
        let open = c.inflight.len() as u64;
        let limit = match (w.per_request, w.cfg.spec.work.reconnect_every) {
            (true, _) => 1,
            (false, Some(n)) => n,
            (false, None) => u64::MAX,
        };
        c.state == State::Ready
            && q.up
            && !q.blocked
            && !q.goaway
            && open < w.proto.spec.streams as u64
            && c.served + open < limit
    }

    fn lowat(_w: &mut Worker<'_, Self>, _i: usize, _window: bool) -> (usize, bool) {
        (1, false)
    }

    /// Every connection closes with H3_NO_ERROR; the thread's QUIC counters are summed.
    fn at_end(w: &mut Worker<'_, Self>) {
        for i in 0..w.conns.len() {
            Self::on_close(w, i);
        }
        let H3 { quic, .. } = &w.proto;
        let h3 = &mut w.stats.h3;
        h3.quic.send_calls += quic.totals.send_calls;
        h3.quic.recv_calls += quic.totals.recv_calls;
        (h3.gso, h3.gro) = (quic.gso, quic.gro);
    }

    fn open(w: &mut Worker<'_, Self>, i: usize, now: u64) -> std::io::Result<()> {
        if w.proto.quic.client.is_none() {
            let tls = w.tls.as_ref().map(|(c, _)| c.clone());
            let tls = tls.ok_or_else(|| std::io::Error::other("HTTP/3 needs TLS"))?;
            w.proto.quic.client = Some(client_config(&tls, w.proto.spec.zero_rtt)?);
        }
        let addr = w.cfg.addr;
        let (registry, proto) = w.registry_and_proto();
        let q = QConn::open(&mut proto.quic, addr, &proto.spec.server_name, now)?;
        if let Some(r) = registry {
            let fd = q.sock.as_raw_fd();
            r.register(&mut SourceFd(&fd), Token(i), Interest::READABLE)?;
        }
        proto.conns[i] = Some(Box::new(q));
        w.conns[i].state = State::Connected;
        Ok(())
    }

    /// The first flight (the Initial with the ClientHello) goes out; with `--0rtt` and a
    /// session ticket that allows early data, requests go out with it.
    fn start(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        let zero_rtt = w.proto.spec.zero_rtt;
        let Some(q) = w.proto.conns[i].as_deref_mut() else {
            return;
        };
        q.started = now;
        if zero_rtt && q.conn.has_0rtt() {
            q.early = true;
            q.up = true;
            q.open_control();
            w.stats.h3.zero_rtt_attempted += w.stats.measuring(now) as u64;
            w.conns[i].state = State::Ready;
            w.on_ready(i, now);
        }
        Self::transmit(w, i, now);
    }

    fn event(w: &mut Worker<'_, Self>, i: usize, now: u64) {
        let H3 { conns, quic, .. } = &mut w.proto;
        let Some(q) = conns[i].as_deref_mut() else {
            return;
        };
        let Some(read) = q.receive(quic, now) else {
            let lost = match q.refused {
                true => Lost::Handshake(TlsCause::NoUdpAnswer),
                false => Lost::Socket,
            };
            return lost_connection(w, i, lost, now);
        };
        w.stats.read(now, read);
        drive(w, i, now);
    }

    fn transmit(w: &mut Worker<'_, Self>, i: usize, now: u64) -> bool {
        let H3 { conns, quic, .. } = &mut w.proto;
        if let Some(q) = conns[i].as_deref_mut() {
            let sent = q.transmit(quic, now);
            w.stats.wrote(now, sent);
        }
        true
    }

    fn next_timer(w: &Worker<'_, Self>) -> u64 {
        (w.proto.conns.iter().flatten())
            .map(|q| q.deadline)
            .min()
            .unwrap_or(u64::MAX)
    }

    fn timers(w: &mut Worker<'_, Self>, now: u64) {
        for i in 0..w.proto.conns.len() {
            let H3 { conns, quic, .. } = &mut w.proto;
            let Some(q) = conns[i].as_deref_mut() else {
                continue;
            };
            if q.deadline <= now {
                q.on_timer(quic, now);
                drive(w, i, now);
            }
        }
    }

    fn on_close(w: &mut Worker<'_, Self>, i: usize) {
        let Some(mut q) = w.proto.conns[i].take() else {
            return;
        };
        let quic = &mut w.proto.quic;
        let now = crate::sys::now_ns();
        let no_error = quinn_proto::VarInt::from_u32(Code::NO_ERROR.0 as u32);
        q.conn
            .close(quic.instant(now), no_error, bytes::Bytes::new());
        q.transmit(quic, now);
        w.stats.h3.quic.add(&q.counters());
        let drained = quinn_proto::EndpointEvent::drained();
        let _ = quic.endpoint.handle_event(q.handle, drained);
    }

    fn handshake_timeout(w: &Worker<'_, Self>, i: usize) -> ErrorKind {
        match w.proto.conns[i].as_deref() {
            Some(q) if q.heard => ErrorKind::Tls(TlsCause::HandshakeTimeout),
            _ => ErrorKind::Tls(TlsCause::NoUdpAnswer),
        }
    }
}

/// Acts on connection `i`'s QUIC events: completes what ended, starts requests on a new
/// connection, replaces a closed one, and sends what is owed.
fn drive(w: &mut Worker<'_, H3<'_>>, i: usize, now: u64) {
    let H3 {
        spec,
        strings,
        quic,
        conns,
        steps,
    } = &mut w.proto;
    let Some(q) = conns[i].as_deref_mut() else {
        return;
    };
    q.endpoint_events(quic);
    let fate = q.events(quic, strings, &spec.requests, steps, now);
    let mut steps = std::mem::take(&mut w.proto.steps);
    for step in steps.drain(..) {
        on_step(w, i, step, now);
    }
    w.proto.steps = steps;
    match fate {
        Fate::Alive { refill } => {
            if refill {
                w.refill(i, now);
            }
        }
        Fate::Connected => connected(w, i, now),
        Fate::Lost(lost) => return lost_connection(w, i, lost, now),
    }
    if finished(w, i) {
        return w.reopen(i, now);
    }
    H3::transmit(w, i, now);
}

/// The handshake completed: it is counted, and requests start. Requests sent in 0-RTT that the
/// server rejected are sent again (quinn-proto forgot their streams).
fn connected(w: &mut Worker<'_, H3<'_>>, i: usize, now: u64) {
    let Some(q) = w.proto.conns[i].as_deref_mut() else {
        return;
    };
    let started = q.started;
    let accepted = q.early && q.conn.accepted_0rtt();
    let mut rejected = Vec::new();
    if q.early && !accepted {
        while !q.streams.is_empty() {
            rejected.push(q.retire(0).req);
        }
        q.open_control();
    }
    for req in rejected {
        forget(w, i, req);
        w.issued -= 1;
    }
    let measuring = w.stats.measuring(now);
    w.stats.h3.zero_rtt_accepted += (accepted && measuring) as u64;
    let ns = now.saturating_sub(started);
    let negotiated = Negotiated {
        version: TlsVersion::V1_3,
        cipher_suite: None,
        key_exchange_group: "unknown",
        alpn: Some("h3"),
    };
    w.stats.connected(now, ns);
    w.stats.handshake(now, ns, accepted, negotiated);
    w.conns[i].state = State::Ready;
    w.on_ready(i, now);
}

/// Whether connection `i` takes no more requests and has none open: `--new-conn` after its
/// answer, `--reconnect-every N` after its N, a GOAWAY.
fn finished(w: &Worker<'_, H3<'_>>, i: usize) -> bool {
    let Some(q) = w.proto.conns[i].as_deref() else {
        return false;
    };
    let served = w.conns[i].served;
    let due = w.cfg.spec.work.reconnect_every.is_some_and(|n| served >= n);
    w.conns[i].inflight.is_empty() && q.up && (q.goaway || due || (w.per_request && served > 0))
}

/// One step of a connection's events into the worker's stats and schedule.
fn on_step(w: &mut Worker<'_, H3<'_>>, i: usize, step: Step, now: u64) {
    let measuring = w.stats.measuring(now);
    let (req, kind, code) = match step {
        Step::Response(req, resp) => {
            forget(w, i, req);
            return w.complete(i, req, resp, now);
        }
        Step::Settings(s) => {
            let c = &mut w.stats.h3.qpack_max_table_capacity;
            c.get_or_insert(s.qpack_max_table_capacity);
            return;
        }
        Step::Goaway => {
            w.stats.h3.goaways += measuring as u64;
            return;
        }
        Step::Reset(req, code) => {
            w.stats.h3.stream_resets += measuring as u64;
            (req, ErrorKind::H3, code)
        }
        Step::Malformed(req, code) => (req, ErrorKind::H3, code),
    };
    forget(w, i, req);
    if measuring {
        w.stats.h3.h3_error(code.to_string());
    }
    w.stats.error(now, kind);
    if w.quota != u64::MAX {
        w.done += 1; // -n counts the attempt, so a resetting server ends the run
    }
    w.refill(i, now);
}

/// A request's stream ended: it leaves the connection's in-flight list.
fn forget(w: &mut Worker<'_, H3<'_>>, i: usize, req: Inflight) {
    let inflight = &mut w.conns[i].inflight;
    if let Some(k) = inflight.iter().position(|r| *r == req) {
        inflight.remove(k);
    }
}

/// Connection `i` ended: counted by cause, then replaced.
fn lost_connection(w: &mut Worker<'_, H3<'_>>, i: usize, lost: Lost, now: u64) {
    let measuring = w.stats.measuring(now);
    let up = w.proto.conns[i].as_deref().is_some_and(|q| q.up);
    let (kind, backoff) = match lost {
        Lost::Graceful => return w.reopen(i, now),
        Lost::Handshake(cause) => (ErrorKind::Tls(cause), BACKOFF_NS),
        Lost::Transport(name) => {
            if measuring {
                w.stats.h3.transport_error(name);
            }
            let kind = if up {
                ErrorKind::H3
            } else {
                ErrorKind::Connect
            };
            (kind, if up { 0 } else { BACKOFF_NS })
        }
        Lost::H3(name) => {
            if measuring {
                w.stats.h3.h3_error(name);
            }
            (ErrorKind::H3, 0)
        }
        Lost::TimedOut => (ErrorKind::Timeout, 0),
        Lost::Socket => (ErrorKind::Read, BACKOFF_NS),
    };
    w.fail(i, now, kind, backoff);
}

/// One thread's HTTP/3 block.
pub(crate) fn result(spec: &H3Spec, s: &Stats, (connection_mode, mix): Common) -> ProtocolResult {
    let h = &s.h3;
    let q = &h.quic;
    ProtocolResult::Http3(Http3Result {
        streams: spec.streams,
        connection_mode,
        max_streams_bidi: None,
        qpack_max_table_capacity: h.qpack_max_table_capacity,
        goaways: h.goaways,
        zero_rtt: spec.zero_rtt.then_some(ZeroRttResult {
            attempted: h.zero_rtt_attempted,
            accepted: h.zero_rtt_accepted,
        }),
        quic: QuicCounters {
            datagrams_sent: q.datagrams_sent,
            datagrams_received: q.datagrams_received,
            send_calls: q.send_calls,
            recv_calls: q.recv_calls,
            bytes_sent: q.bytes_sent,
            bytes_received: q.bytes_received,
            packets_lost: q.packets_lost,
            bytes_lost: q.bytes_lost,
            congestion_events: q.congestion_events,
            gso: h.gso,
            gro: h.gro,
            socket: QuicSocket::PerConnection,
        },
        transport_errors: h.transport_errors.clone(),
        h3_errors: h.h3_errors.clone(),
        stream_resets: h.stream_resets,
        mix,
    })
}
