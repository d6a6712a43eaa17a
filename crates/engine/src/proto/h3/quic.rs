//! One QUIC connection of the HTTP/3 driver and the thread's QUIC endpoint: a `connect`ed UDP
//! socket per connection, datagrams in (quinn-udp's `recv`: `recvmmsg`, with GRO many
//! datagrams per buffer, cut at `RecvMeta::stride`) fed to quinn-proto, and what quinn-proto
//! owes sent (quinn-udp's `send`: `sendmsg` with `UDP_SEGMENT`, one call for a GSO batch).
//! Stream events become [`Step`]s the driver completes into the worker's stats.

use super::streams::Stream;
use crate::stats::QuicTotals;
use bytes::BytesMut;
use quinn_proto::{
    ClientConfig, Connection, ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig,
};
use quinn_udp::{RecvMeta, UdpSocketState};
use serverbench_wire::h3::{ResponseReader, UniReader};
use std::io::{self, IoSliceMut};
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Receive buffers per `recvmmsg` call.
const RX_BATCH: usize = 4;
/// One receive buffer: a GRO batch of up to 64 KiB.
const RX_BUF: usize = 64 * 1024;

/// The thread's QUIC endpoint (connection ids for all its connections), its clock, and the
/// buffers every connection's I/O goes through.
pub(crate) struct Quic {
    pub endpoint: Endpoint,
    /// The client configuration (TLS 1.3, ALPN h3, this thread's session cache), made at the
    /// first connect from the worker's TLS configuration.
    pub client: Option<ClientConfig>,
    /// quinn-proto's clock: an `Instant` and the worker's monotonic ns at the same moment.
    epoch: (Instant, u64),
    tx: Vec<u8>,
    rx: Vec<u8>,
    /// What a datagram sent back without a connection (a stateless reset) is built in.
    scratch: Vec<u8>,
    pub totals: QuicTotals,
    /// Whether every socket sent with GSO and received with GRO.
    pub gso: bool,
    pub gro: bool,
}

impl Quic {
    pub fn new(now: u64) -> Self {
        let endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), None, true, None);
        Quic {
            endpoint,
            client: None,
            epoch: (Instant::now(), now),
            tx: Vec::with_capacity(64 * 1024),
            rx: vec![0; RX_BATCH * RX_BUF],
            scratch: Vec::new(),
            totals: QuicTotals::default(),
            gso: true,
            gro: true,
        }
    }

    /// The worker's monotonic ns as quinn-proto's `Instant`.
    pub fn instant(&self, ns: u64) -> Instant {
        self.epoch.0 + Duration::from_nanos(ns.saturating_sub(self.epoch.1))
    }

    /// quinn-proto's `Instant` as the worker's monotonic ns.
    pub fn ns(&self, t: Instant) -> u64 {
        self.epoch.1 + t.saturating_duration_since(self.epoch.0).as_nanos() as u64
    }
}

/// One connection: its socket, its QUIC state and its HTTP/3 streams.
pub(crate) struct QConn {
    pub sock: UdpSocket,
    udp: UdpSocketState,
    pub handle: ConnectionHandle,
    pub conn: Connection,
    /// Request streams open, in the order they were opened.
    pub streams: Vec<Stream>,
    /// Readers of streams that ended, reused by the next ones.
    pub spare: Vec<ResponseReader>,
    /// The server's unidirectional streams (control, QPACK).
    pub uni: Vec<(quinn_proto::StreamId, UniReader)>,
    /// When the connection's first Initial went out (monotonic ns).
    pub started: u64,
    /// A datagram came from the server.
    pub heard: bool,
    /// The handshake is confirmed (or 0-RTT started) and the control stream open.
    pub up: bool,
    /// Requests went out in 0-RTT.
    pub early: bool,
    /// No stream credit left: requests wait for the server's MAX_STREAMS.
    pub blocked: bool,
    /// The server sent GOAWAY: no new request on this connection.
    pub goaway: bool,
    /// The next deadline of quinn-proto's timers (monotonic ns; `u64::MAX`: none).
    pub deadline: u64,
    /// The ICMP error that ended it: nothing listens on the port.
    pub refused: bool,
}

impl QConn {
    /// A new connection to `addr` on its own `connect`ed socket; its first flight is queued
    /// (sent by the first [`QConn::transmit`]).
    pub fn open(q: &mut Quic, addr: SocketAddr, name: &str, now: u64) -> io::Result<QConn> {
        let local: SocketAddr = match addr {
            SocketAddr::V4(_) => ([0, 0, 0, 0], 0).into(),
            SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let sock = UdpSocket::bind(local)?;
        sock.connect(addr)?;
        let udp = UdpSocketState::new((&sock).into())?;
        sock.set_nonblocking(true)?;
        let client = q
            .client
            .clone()
            .ok_or_else(|| io::Error::other("no client config"))?;
        let (handle, conn) = q
            .endpoint
            .connect(q.instant(now), client, addr, name)
            .map_err(io::Error::other)?;
        q.gso &= udp.max_gso_segments() > 1;
        q.gro &= udp.gro_segments() > 1;
        Ok(QConn {
            sock,
            udp,
            handle,
            conn,
            streams: Vec::new(),
            spare: Vec::new(),
            uni: Vec::new(),
            started: now,
            heard: false,
            up: false,
            early: false,
            blocked: false,
            goaway: false,
            deadline: u64::MAX,
            refused: false,
        })
    }

    /// Sends everything quinn-proto owes now, a GSO batch per call where the socket has GSO;
    /// returns the UDP payload bytes sent. A send the socket refuses (full) is dropped: QUIC
    /// recovers it as a lost packet.
    pub fn transmit(&mut self, q: &mut Quic, now: u64) -> usize {
        let at = q.instant(now);
        let max = self.udp.max_gso_segments();
        let mut sent = 0;
        loop {
            q.tx.clear();
            let Some(t) = self.conn.poll_transmit(at, max, &mut q.tx) else {
                break;
            };
            let out = quinn_udp::Transmit {
                destination: t.destination,
                ecn: t
                    .ecn
                    .and_then(|e| quinn_udp::EcnCodepoint::from_bits(e as u8)),
                contents: &q.tx[..t.size],
                segment_size: t.segment_size,
                src_ip: None,
            };
            if self.udp.send((&self.sock).into(), &out).is_ok() {
                q.totals.send_calls += 1;
                sent += t.size;
            }
        }
        self.endpoint_events(q);
        self.deadline = self.conn.poll_timeout().map_or(u64::MAX, |t| q.ns(t));
        sent
    }

    /// Reads the socket until it is drained, feeding each datagram to quinn-proto; returns
    /// the UDP payload bytes read, None on a socket error (ICMP port unreachable sets
    /// `refused`).
    pub fn receive(&mut self, q: &mut Quic, now: u64) -> Option<usize> {
        let at = q.instant(now);
        let mut meta = [RecvMeta::default(); RX_BATCH];
        let mut read = 0;
        loop {
            let got = {
                let mut chunks = q.rx.chunks_mut(RX_BUF);
                let mut bufs: [IoSliceMut<'_>; RX_BATCH] = std::array::from_fn(|_| {
                    IoSliceMut::new(chunks.next().expect("RX_BATCH buffers"))
                });
                self.udp.recv((&self.sock).into(), &mut bufs, &mut meta)
            };
            let n = match got {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Some(read),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.refused = e.kind() == io::ErrorKind::ConnectionRefused;
                    return None;
                }
            };
            q.totals.recv_calls += 1;
            for (m, buf) in meta.iter().zip(q.rx.chunks(RX_BUF)).take(n) {
                read += m.len;
                self.heard |= m.len > 0;
                let stride = m.stride.max(1);
                let ecn = m
                    .ecn
                    .and_then(|e| quinn_proto::EcnCodepoint::from_bits(e as u8));
                // One copy per GRO batch (quinn-proto owns what it is handed), cut per datagram.
                let mut batch = BytesMut::from(&buf[..m.len]);
                while !batch.is_empty() {
                    let data = batch.split_to(stride.min(batch.len()));
                    let ev = q
                        .endpoint
                        .handle(at, m.addr, m.dst_ip, ecn, data, &mut q.scratch);
                    if let Some(DatagramEvent::ConnectionEvent(ch, e)) = ev {
                        if ch == self.handle {
                            self.conn.handle_event(e);
                        }
                    }
                }
            }
        }
    }

    /// Passes the connection's events for the endpoint on, and the endpoint's answers back.
    pub fn endpoint_events(&mut self, q: &mut Quic) {
        while let Some(ev) = self.conn.poll_endpoint_events() {
            if let Some(back) = q.endpoint.handle_event(self.handle, ev) {
                self.conn.handle_event(back);
            }
        }
    }

    /// Runs quinn-proto's timers if they are due.
    pub fn on_timer(&mut self, q: &Quic, now: u64) {
        if self.deadline <= now {
            self.conn.handle_timeout(q.instant(now));
        }
    }

    /// The connection's UDP and loss counters, for the thread's totals.
    pub fn counters(&self) -> QuicTotals {
        let s = self.conn.stats();
        QuicTotals {
            datagrams_sent: s.udp_tx.datagrams,
            datagrams_received: s.udp_rx.datagrams,
            send_calls: 0,
            recv_calls: 0,
            bytes_sent: s.udp_tx.bytes,
            bytes_received: s.udp_rx.bytes,
            packets_lost: s.path.lost_packets,
            bytes_lost: s.path.lost_bytes,
            congestion_events: s.path.congestion_events,
        }
    }

    /// Forgets a finished stream's state: its reader back to the spare ones.
    pub fn retire(&mut self, pos: usize) -> Stream {
        let mut s = self.streams.swap_remove(pos);
        let mut reader = std::mem::take(&mut s.reader);
        reader.reset();
        self.spare.push(reader);
        s
    }
}

/// What happened to a connection in one round of its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Still up (and maybe gained stream credit: `refill`).
    Alive { refill: bool },
    /// The handshake completed: requests may start.
    Connected,
    /// Closed: by the peer, by us on an HTTP/3 error, or by a timeout.
    Lost(Lost),
}

/// Why a connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lost {
    /// Before its handshake completed: the cause, as a TLS cause.
    Handshake(crate::tls::TlsCause),
    /// A QUIC transport error (its name; `local: ` when this client closed).
    Transport(String),
    /// An HTTP/3 error (its name), from the server's close or found in its frames.
    H3(String),
    /// The server closed with H3_NO_ERROR (a graceful close, after a GOAWAY or idle).
    Graceful,
    /// The idle timeout passed with nothing from the server.
    TimedOut,
    /// The socket failed.
    Socket,
}
