//! The worker loop's io_uring side: what each completion means for a connection. Receives are
//! multishot into the ring's provided buffers, and their bytes go to the same protocol code as
//! epoll's reads (`consume`; over TLS through rustls first); a flush queues one send per
//! connection at a time, from a buffer the connection keeps until the completion; connects are
//! a one-shot poll for writability, as epoll's. A connection closed while requests are queued
//! or in the kernel takes a new generation, so the old socket's late completions are known.

use super::{Worker, URING_STREAM_CHUNK};
use crate::conn::{Splices, State};
use crate::proto::Driver;
use crate::stats::ErrorKind;
use crate::tls::TlsCause;
use crate::uring::{Cqe, Op, Ring, Target};
use mio::net::TcpStream;
use std::io;
use std::os::fd::AsRawFd;

/// The ring and what it keeps per connection.
pub(super) struct Uring {
    pub(super) ring: Ring,
    slots: Vec<Slot>,
    /// Sockets closed during this turn: their descriptors stay open until the queued requests
    /// that name them are submitted (a reused number must not receive them).
    graveyard: Vec<TcpStream>,
    turns: u32,
}

/// While `--idle auto` blocks, it learns how long waits sleep; sends submitted by the same
/// call would count as sleep, so it learns from one turn in this many, which submits them
/// first, on a call of its own.
const SAMPLE_EVERY: u32 = 8;

#[derive(Default)]
struct Slot {
    gen: u32,
    /// The bytes of the send in the kernel (HTTP, ping-pong, TLS records), from `pos` on,
    /// with large bodies spliced in: one send per piece.
    send: Vec<u8>,
    pos: usize,
    splices: Splices,
    busy: bool,
    recv: bool,
    connect: bool,
    /// The socket, and whether it sits in the ring's registered slot `i`.
    fd: i32,
    fixed: bool,
}

impl Slot {
    fn target(&self, i: usize) -> Target {
        if self.fixed {
            Target::Fixed(i as u32)
        } else {
            Target::Fd(self.fd)
        }
    }
}

impl Uring {
    pub(super) fn new(ring: Ring, connections: usize) -> Self {
        Uring {
            ring,
            slots: (0..connections).map(|_| Slot::default()).collect(),
            graveyard: Vec::new(),
            turns: 0,
        }
    }

    fn ud(&self, op: Op, i: usize) -> u64 {
        op.pack(i, self.slots[i].gen)
    }

    /// A new socket for connection `i`: wait for its connect to end.
    pub(super) fn watch_connect(&mut self, i: usize, sock: &TcpStream) {
        let ud = self.ud(Op::Connect, i);
        self.ring
            .poll(sock.as_raw_fd(), libc::POLLOUT as u32, false, ud);
        self.slots[i].connect = true;
    }

    /// Connection `i` is up: register it (where the ring has slots) and receive from now on.
    pub(super) fn start_recv(&mut self, i: usize, sock: &TcpStream) {
        let s = &mut self.slots[i];
        if s.fd != sock.as_raw_fd() || !s.fixed {
            s.fd = sock.as_raw_fd();
            if self.ring.fixed() {
                // The slot's `fd` stays put: it changes only at a later connect's end.
                self.ring.install(i, Some(&s.fd));
                s.fixed = true;
            }
        }
        let ud = self.ud(Op::Recv, i);
        let to = self.slots[i].target(i);
        self.ring.recv(to, ud);
        self.slots[i].recv = true;
    }

    /// Connection `i` closes: cancel what the kernel holds for it, keep the socket until the
    /// next submission, and move to a new generation.
    pub(super) fn retire(&mut self, i: usize, sock: Option<TcpStream>) {
        let s = &self.slots[i];
        let (recv, connect) = (s.recv, s.connect);
        if recv {
            self.ring.cancel(self.ud(Op::Recv, i));
        }
        if connect {
            self.ring.cancel(self.ud(Op::Connect, i));
        }
        let s = &mut self.slots[i];
        s.gen = s.gen.wrapping_add(1);
        (s.recv, s.connect) = (false, false);
        if std::mem::take(&mut s.fixed) {
            self.ring.install(i, None);
        }
        self.graveyard.extend(sock);
    }

    /// Submits, waits up to `wait_ns`, and returns the completions.
    pub(super) fn turn(&mut self, wait_ns: u64) -> io::Result<Vec<Cqe>> {
        self.ring.turn(wait_ns)?;
        self.graveyard.clear();
        Ok(self.ring.take_batch())
    }
}

impl<D: Driver> Worker<'_, D> {
    /// io_uring: whether connection `i` has a send in the kernel (never on epoll).
    pub(super) fn send_in_kernel(&self, i: usize) -> bool {
        match &self.io {
            super::Backend::Uring(u) => u.slots[i].busy,
            super::Backend::Epoll(_) => false,
        }
    }

    pub(super) fn uring(&mut self) -> &mut Uring {
        match &mut self.io {
            super::Backend::Uring(u) => u,
            super::Backend::Epoll(_) => unreachable!("an io_uring step on an epoll worker"),
        }
    }

    /// One turn of the ring: submit, wait up to `wait_ns` from `started` (which the napper
    /// learns from) and handle the completions. Without `started` (draining a TCP stream) and
    /// after the end, completions only settle buffers and counters. Returns whether any came.
    pub(super) fn uring_turn(&mut self, wait_ns: u64, started: Option<u64>) -> io::Result<bool> {
        let measuring = self.napper.measuring();
        let u = self.uring();
        u.turns = u.turns.wrapping_add(1);
        let mut from = started;
        if measuring && started.is_some() {
            // Every turn in SAMPLE_EVERY, whatever it has to send: turns with nothing to send
            // follow quiet spells and would make the mean sleep too long.
            if !u.turns.is_multiple_of(SAMPLE_EVERY) {
                from = None;
            } else if u.ring.queued() > 0 {
                u.ring.submit()?;
                from = Some(crate::sys::now_ns());
            }
        }
        let batch = self.uring().turn(wait_ns)?;
        let any = !batch.is_empty();
        let late = started.is_none();
        if let Some(t) = from {
            self.napper.polled(t, !any);
        }
        for cqe in &batch {
            let now = crate::sys::now_ns();
            self.on_cqe(cqe, now, late || now >= self.end);
        }
        self.uring().ring.put_batch(batch);
        Ok(any)
    }

    fn on_cqe(&mut self, cqe: &Cqe, now: u64, late: bool) {
        let (op, i, gen) = Op::unpack(cqe.user_data);
        match op {
            Op::Cancel => {}
            Op::Timer => self.on_timer(cqe, now, late),
            _ if gen != self.uring().slots[i].gen => self.on_stale(op, i, cqe),
            Op::Recv => self.on_recv(i, cqe, now, late),
            Op::Send => self.on_sent(i, cqe.res, now, late),
            Op::Connect => self.on_connect_polled(i, cqe.res, now),
        }
    }

    fn on_timer(&mut self, cqe: &Cqe, now: u64, late: bool) {
        let Some(r) = &mut self.rate else { return };
        r.timer.drain();
        let fd = r.timer.raw_fd();
        if !cqe.more() {
            let u = self.uring();
            u.ring
                .poll(fd, libc::POLLIN as u32, true, Op::Timer.pack(0, 0));
        }
        if !late {
            self.dispatch(now);
        }
    }

    /// A completion of a socket that has since closed: give its buffer back; a finished send
    /// frees the connection's send buffer for the new socket.
    fn on_stale(&mut self, op: Op, i: usize, cqe: &Cqe) {
        let u = self.uring();
        if let Some(bid) = cqe.buffer() {
            u.ring.give_back(bid);
        }
        if op == Op::Send {
            let s = &mut u.slots[i];
            (s.busy, s.pos) = (false, 0);
            s.send.clear();
            s.splices.clear();
            // The new socket's sends waited for this buffer.
            if self.conns[i].state == State::Ready && !self.stopping {
                self.flush(i, crate::sys::now_ns());
            }
        }
    }

    fn on_connect_polled(&mut self, i: usize, res: i32, now: u64) {
        self.uring().slots[i].connect = false;
        let State::Connecting(started) = self.conns[i].state else {
            return;
        };
        let writable = res > 0 && res & (libc::POLLOUT as i32) != 0;
        match self.conns[i].check_connected(writable) {
            Some(true) => self.on_connected(i, now, Some(started)),
            Some(false) => self.fail(i, now, ErrorKind::Connect, super::BACKOFF_NS),
            None => {
                if let Some(sock) = self.conns[i].sock.take() {
                    self.uring().watch_connect(i, &sock); // not decided yet: poll again
                    self.conns[i].sock = Some(sock);
                }
            }
        }
    }

    /// Setup: a connect ended; `Some(true)` up, `Some(false)` failed, `None` not yet.
    pub(super) fn uring_setup_event(&mut self, cqe: &Cqe) -> Option<(usize, bool)> {
        let (op, i, gen) = Op::unpack(cqe.user_data);
        if op != Op::Connect || gen != self.uring().slots[i].gen {
            return None;
        }
        self.uring().slots[i].connect = false;
        Some((i, cqe.res > 0 && cqe.res & (libc::POLLOUT as i32) != 0))
    }

    fn on_recv(&mut self, i: usize, cqe: &Cqe, now: u64, late: bool) {
        let more = cqe.more();
        let bid = cqe.buffer();
        let data = match bid {
            Some(bid) if cqe.res > 0 => self.uring().ring.bytes(bid, cqe.res as usize),
            _ => &[],
        };
        if !more {
            self.uring().slots[i].recv = false;
        }
        if late {
            if D::STREAM {
                self.conns[i].rd += data.len() as u64;
                self.stats.bytes_read += data.len() as u64;
            }
        } else {
            self.on_received(i, cqe.res, data, now);
        }
        let u = self.uring();
        if let Some(bid) = bid {
            u.ring.give_back(bid);
        }
        // A multishot receive ends when the buffers ran out (ENOBUFS): arm it again.
        let alive = u.slots[i].gen == Op::unpack(cqe.user_data).2;
        let open = matches!(self.conns[i].state, State::Ready | State::Handshaking(_));
        if !more && alive && cqe.res != 0 && open {
            if let Some(sock) = self.conns[i].sock.take() {
                self.uring().start_recv(i, &sock);
                self.conns[i].sock = Some(sock);
            }
        }
    }

    /// Bytes (or an end: `res` 0 for EOF, negative for an error) from connection `i`.
    fn on_received(&mut self, i: usize, res: i32, data: &[u8], now: u64) {
        let handshaking = matches!(self.conns[i].state, State::Handshaking(_));
        match res {
            r if r == -libc::ENOBUFS => {}
            r if r < 0 && handshaking => {
                let eof = ErrorKind::Tls(TlsCause::HandshakeEof);
                self.fail(i, now, eof, super::BACKOFF_NS);
            }
            r if r < 0 => self.fail(i, now, ErrorKind::Read, 0),
            _ if self.conns[i].tls.is_some() => self.received_tls(i, data, now),
            0 => self.on_eof(i, now),
            _ => {
                self.stats.read(now, data.len());
                let c = &mut self.conns[i];
                c.last_read = now;
                c.guard_queued = usize::MAX;
                if self.consume(i, data, now) {
                    self.after_read(i, now);
                }
            }
        }
    }

    /// Bytes from a TLS connection (none: the peer closed): through rustls, then as plain.
    fn received_tls(&mut self, i: usize, mut data: &[u8], now: u64) {
        let eof = data.is_empty();
        self.stats.read(now, data.len());
        self.conns[i].last_read = now;
        let mut buf = std::mem::take(&mut self.buf);
        loop {
            let handshaking = matches!(self.conns[i].state, State::Handshaking(_));
            let closed = match self.conns[i].feed_tls(&mut data) {
                Ok(closed) => closed || eof,
                Err(kind) => {
                    let backoff = if handshaking { super::BACKOFF_NS } else { 0 };
                    self.fail(i, now, kind, backoff);
                    break;
                }
            };
            if handshaking {
                if closed {
                    let eof = ErrorKind::Tls(TlsCause::HandshakeEof);
                    self.fail(i, now, eof, super::BACKOFF_NS);
                    break;
                }
                self.handshake(i, now, false);
                if self.conns[i].state != State::Ready {
                    break;
                }
            }
            if !self.consume_plaintext(i, now, &mut buf) {
                break;
            }
            if closed {
                self.on_eof(i, now);
                break;
            }
            if data.is_empty() {
                self.after_read(i, now);
                break;
            }
        }
        self.buf = buf;
    }

    /// Queues what connection `i` has to send, unless a send is already in the kernel (its
    /// completion sends the rest). Returns false if the connection was reset.
    pub(super) fn uring_flush(&mut self, i: usize, now: u64) -> bool {
        let Some(fd) = self.conns[i].sock.as_ref().map(|s| s.as_raw_fd()) else {
            self.fail(i, now, ErrorKind::Write, 0);
            return false;
        };
        let (stopping, paused) = (self.stopping, self.paused);
        let Worker {
            io, conns, proto, ..
        } = self;
        let stream = proto.stream();
        let super::Backend::Uring(u) = io else {
            unreachable!()
        };
        let (c, slot) = (&mut conns[i], &mut u.slots[i]);
        if slot.busy {
            return true;
        }
        let ud = Op::Send.pack(i, slot.gen);
        if !slot.fixed {
            slot.fd = fd;
        }
        let to = slot.target(i);
        if let Some((pattern, message_len)) = stream {
            if stopping || paused {
                return true;
            }
            let off = (c.wr % message_len as u64) as usize;
            slot.busy = true;
            // SAFETY: `off + URING_STREAM_CHUNK` is within the pattern, which never changes
            // (the driver keeps it for the worker's life).
            u.ring.send(
                to,
                unsafe { pattern.as_ptr().add(off) },
                URING_STREAM_CHUNK,
                ud,
            );
            return true;
        }
        if c.tls.is_some() {
            if c.seal_into(&mut slot.send).is_err() {
                self.fail(i, now, ErrorKind::Write, 0);
                return false;
            }
        } else if !c.out.is_empty() {
            std::mem::swap(&mut c.out, &mut slot.send);
            std::mem::swap(&mut c.splices, &mut slot.splices);
            c.out_pos = 0;
        }
        if let Some(piece) = slot.splices.piece(&slot.send, slot.pos) {
            slot.busy = true;
            u.ring.send(to, piece.as_ptr(), piece.len(), ud);
        }
        true
    }

    /// A send of connection `i` completed with `res` bytes (or an error).
    fn on_sent(&mut self, i: usize, res: i32, now: u64, late: bool) {
        let stream = D::STREAM;
        let fd = self.conns[i].sock.as_ref().map(|s| s.as_raw_fd());
        let slot = &mut self.uring().slots[i];
        slot.busy = false;
        if res < 0 {
            slot.pos = 0;
            slot.send.clear();
            slot.splices.clear();
            if !late {
                self.fail(i, now, ErrorKind::Write, 0);
            }
            return;
        }
        let n = res as usize;
        if late && stream {
            self.stats.bytes_written += n as u64; // echoes of it are counted by the drain
        } else {
            self.stats.wrote(now, n);
        }
        if stream {
            self.conns[i].wr += n as u64;
            if !late {
                self.uring_flush(i, now);
            }
            return;
        }
        let u = self.uring();
        let slot = &mut u.slots[i];
        slot.splices.advance(slot.send.len(), &mut slot.pos, n);
        if let Some(rest) = slot.splices.piece(&slot.send, slot.pos) {
            if fd.is_some() {
                let ud = Op::Send.pack(i, slot.gen);
                slot.busy = true;
                u.ring.send(slot.target(i), rest.as_ptr(), rest.len(), ud);
            }
            return;
        }
        slot.send.clear();
        slot.pos = 0;
        slot.splices.clear();
        let c = &self.conns[i];
        let owed = !c.out.is_empty() || c.tls.as_deref().is_some_and(|t| t.wants_write());
        if owed && !late {
            self.uring_flush(i, now);
        }
    }
}
