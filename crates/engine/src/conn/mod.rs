//! One client connection: socket, TLS session, framing state (HTTP/1.1 parser or HTTP/2
//! streams) and the requests in flight on it.

mod splice;
mod tls;

pub use splice::Splices;
pub use tls::{Handshake, TlsRead, Wire};

use crate::h2::H2Conn;
use crate::http::ResponseParser;
use crate::proto::ws::WsConn;
use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use rustls::ClientConnection;
use std::collections::VecDeque;
use std::io::{self, IoSlice, Write};
use std::net::SocketAddr;

pub(crate) use serverbench_wire::Inflight;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting to reconnect at this time (after a refused connect).
    Backoff(u64),
    /// Connect started at this time.
    Connecting(u64),
    /// Connected during setup, before the loop starts (and before any TLS handshake).
    Connected,
    /// TLS handshake started at this time.
    Handshaking(u64),
    Ready,
}

/// What a write attempt ended with.
#[derive(Debug, PartialEq, Eq)]
pub enum Flushed {
    /// Everything pending was written.
    All,
    /// The socket is full: the edge-triggered writable event will call us back.
    Blocked,
    Failed,
}

pub struct Conn {
    pub sock: Option<TcpStream>,
    /// `https://`: the TLS session over `sock`, from the connect on (None: plain TCP).
    pub tls: Option<Box<ClientConnection>>,
    pub state: State,
    pub parser: ResponseParser,
    /// HTTP/1.1 and TCP ping-pong: the requests in flight, in order.
    pub inflight: VecDeque<Inflight>,
    /// HTTP/2: the connection's protocol state and its streams, from the connection being up.
    pub h2: Option<Box<H2Conn>>,
    /// WebSocket: the upgrade, the frame decoder and the echo matched so far.
    pub ws: Option<Box<WsConn>>,
    /// Responses (WebSocket: echoes) on this connection: `--reconnect-every` closes it at N.
    pub served: u64,
    pub out: Vec<u8>,
    pub out_pos: usize,
    /// Large request bodies written from shared bytes between `out`'s (plain TCP only).
    pub splices: Splices,
    /// TCP ping-pong: bytes of the current echo received so far.
    pub got: usize,
    /// TCP stream: bytes read and written on this connection.
    pub rd: u64,
    pub wr: u64,
    /// In the `-R` idle list.
    pub idle: bool,
    /// The receive low-water mark set on the socket (1: the kernel's default).
    pub lowat: usize,
    /// The mark counts on response sizes predicted from earlier responses.
    pub lowat_predicted: bool,
    /// HTTP: bytes of the response being received so far.
    pub partial: usize,
    /// When bytes last arrived (the low-water mark's stall guard).
    pub last_read: u64,
    /// Bytes queued unread at the guard's last look (`usize::MAX`: not looked yet).
    pub guard_queued: usize,
}

impl Conn {
    pub fn new(parser: ResponseParser, depth: usize) -> Self {
        Conn {
            sock: None,
            tls: None,
            state: State::Backoff(0),
            parser,
            inflight: VecDeque::with_capacity(depth),
            h2: None,
            ws: None,
            served: 0,
            out: Vec::new(),
            out_pos: 0,
            splices: Splices::default(),
            got: 0,
            rd: 0,
            wr: 0,
            idle: false,
            lowat: 1,
            lowat_predicted: false,
            guard_queued: usize::MAX,
            partial: 0,
            last_read: 0,
        }
    }

    /// Starts a non-blocking connect; with `registry` (epoll), registered once for read and
    /// write (edge-triggered); without (io_uring), the caller watches the socket.
    pub fn connect(
        &mut self,
        registry: Option<&Registry>,
        token: Token,
        addr: SocketAddr,
        now: u64,
    ) -> io::Result<()> {
        let mut sock = TcpStream::connect(addr)?;
        sock.set_nodelay(true)?;
        if let Some(registry) = registry {
            registry.register(&mut sock, token, Interest::READABLE | Interest::WRITABLE)?;
        }
        self.sock = Some(sock);
        self.state = State::Connecting(now);
        Ok(())
    }

    /// Checks a connecting socket after an event: `Some(true)` connected, `Some(false)` failed,
    /// `None` still in progress. The caller moves the state on. A writable socket without a
    /// pending error has connected (epoll signals a connect's end with EPOLLOUT), so only other
    /// events cost the `getpeername` that tells.
    pub fn check_connected(&mut self, writable: bool) -> Option<bool> {
        let sock = self.sock.as_ref()?;
        match sock.take_error() {
            Ok(Some(_)) | Err(_) => return Some(false),
            Ok(None) if writable => return Some(true),
            Ok(None) => {}
        }
        match sock.peer_addr() {
            Ok(_) => Some(true),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => None,
            Err(_) => Some(false),
        }
    }

    /// Drops the socket and all per-connection state; returns how many requests were in flight.
    /// Closing the descriptor takes it out of the epoll set (nothing else refers to it), so
    /// there is no `EPOLL_CTL_DEL`: one system call less per connection with `--new-conn`.
    pub fn close(&mut self, backoff_until: u64) -> usize {
        self.sock = None;
        self.tls = None;
        let lost = self.in_flight();
        self.inflight.clear();
        self.h2 = None;
        self.ws = None;
        self.served = 0;
        self.out.clear();
        self.out_pos = 0;
        self.splices.clear();
        self.got = 0;
        self.rd = 0;
        self.wr = 0;
        self.parser.reset();
        self.idle = false;
        self.lowat = 1;
        self.partial = 0;
        self.guard_queued = usize::MAX;
        self.state = State::Backoff(backoff_until);
        lost
    }

    /// Requests sent and not answered yet (HTTP/2: open streams).
    pub fn in_flight(&self) -> usize {
        self.inflight.len() + self.h2.as_ref().map_or(0, |h| h.open() as usize)
    }

    /// When the oldest unanswered request was sent (the request timeout watches it); for a
    /// WebSocket, also its upgrade or close awaiting an answer.
    pub fn oldest_sent(&self) -> Option<u64> {
        match (&self.h2, &self.ws) {
            (Some(h), _) => h.oldest_sent(),
            (None, Some(w)) => w.waiting_since().or(self.inflight.front().map(|r| r.sent)),
            (None, None) => self.inflight.front().map(|r| r.sent),
        }
    }

    /// Writes what is pending in `out`; returns the bytes written and how it ended.
    pub fn flush(&mut self) -> (usize, Flushed) {
        if self.tls.is_some() {
            return self.flush_tls();
        }
        if !self.splices.is_empty() {
            return self.flush_spliced();
        }
        let Some(sock) = self.sock.as_mut() else {
            return (0, Flushed::Failed);
        };
        let mut total = 0;
        while self.out_pos < self.out.len() {
            match sock.write(&self.out[self.out_pos..]) {
                Ok(n) => {
                    self.out_pos += n;
                    total += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return (total, Flushed::Blocked)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return (total, Flushed::Failed),
            }
        }
        self.out.clear();
        self.out_pos = 0;
        (total, Flushed::All)
    }

    /// [`Conn::flush`] with body slices spliced in: `writev`s of up to [`splice::IOV`] pieces.
    fn flush_spliced(&mut self) -> (usize, Flushed) {
        let Some(sock) = self.sock.as_mut() else {
            return (0, Flushed::Failed);
        };
        let mut total = 0;
        loop {
            let mut iov = [IoSlice::new(&[]); splice::IOV];
            let n = self.splices.pieces(&self.out, self.out_pos, &mut iov);
            if n == 0 {
                break;
            }
            match sock.write_vectored(&iov[..n]) {
                Ok(w) => {
                    self.splices.advance(self.out.len(), &mut self.out_pos, w);
                    total += w;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return (total, Flushed::Blocked)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return (total, Flushed::Failed),
            }
        }
        self.out.clear();
        self.out_pos = 0;
        self.splices.clear();
        (total, Flushed::All)
    }

    /// TCP stream: writes `pattern` (the message repeated) from where this connection left off,
    /// until the socket is full.
    pub fn stream_write(
        &mut self,
        pattern: &[u8],
        message_len: usize,
        chunk: usize,
    ) -> (usize, Flushed) {
        let Some(sock) = self.sock.as_mut() else {
            return (0, Flushed::Failed);
        };
        let mut total = 0;
        loop {
            let off = (self.wr % message_len as u64) as usize;
            match sock.write(&pattern[off..off + chunk]) {
                Ok(n) => {
                    self.wr += n as u64;
                    total += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return (total, Flushed::Blocked)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return (total, Flushed::Failed),
            }
        }
    }
}
