//! A connection's life in the worker loop: up (then, over TLS, the handshake), closed and
//! reopened, failed and retried after a backoff, and the 10 ms housekeeping that times out
//! requests, connects and handshakes.

use super::{Backend, Worker, BACKOFF_NS};
use crate::conn::{Conn, State};
use crate::proto::Driver;
use crate::stats::ErrorKind;
use crate::tls::TlsCause;
use mio::Token;

impl<D: Driver> Worker<'_, D> {
    /// The TCP connection is up (`started`: when its connect began, if it was during the run):
    /// over TLS the handshake starts, otherwise requests do.
    pub(super) fn on_connected(&mut self, i: usize, now: u64, started: Option<u64>) {
        if D::UDP {
            // QUIC: the handshake is the driver's (TLS inside QUIC); its first flight goes now.
            self.conns[i].state = State::Handshaking(now);
            return D::start(self, i, now);
        }
        if let Some(t) = started {
            self.stats.connected(now, now.saturating_sub(t));
        }
        if let (Backend::Uring(u), Some(sock)) = (&mut self.io, self.conns[i].sock.as_ref()) {
            u.start_recv(i, sock);
        }
        let Some((config, name)) = &self.tls else {
            self.conns[i].state = State::Ready;
            self.on_ready(i, now);
            return;
        };
        match self.conns[i].start_tls(config.clone(), name.clone()) {
            Ok(()) => {
                self.conns[i].state = State::Handshaking(now);
                self.handshake(i, now, true);
            }
            Err(kind) => self.fail(i, now, kind, BACKOFF_NS),
        }
    }

    /// Clean close (e.g. `Connection: close`): requests still in flight are sent again later.
    pub(crate) fn reopen(&mut self, i: usize, now: u64) {
        let lost = self.close(i, now) as u64;
        self.issued -= lost;
        self.connect(i, now);
    }

    /// Counts an error, drops the connection and reconnects (after `backoff` ns).
    pub(crate) fn fail(&mut self, i: usize, now: u64, kind: ErrorKind, backoff: u64) {
        self.stats.error(now, kind);
        if matches!(kind, ErrorKind::Read | ErrorKind::Write) {
            D::on_lost(self, i, now);
        }
        if self.cfg.mix.is_some() {
            // The oldest request in flight is the one the failure is known to concern.
            if let Some(req) = self.conns[i].inflight.front() {
                self.stats.entry_error(now, req.url as usize, kind);
            }
        }
        let lost = self.close(i, now + backoff) as u64;
        if self.quota != u64::MAX {
            // -n counts failed attempts so that a dead target still ends the run.
            let attempts = lost.max(1);
            self.done += attempts;
            self.issued += attempts - lost;
        }
        if backoff == 0 {
            self.connect(i, now);
        }
    }

    pub(super) fn connect(&mut self, i: usize, now: u64) {
        // `--new-conn -n N`: no connection (nor handshake) for a request that will not be sent.
        if self.stopping || (self.per_request && self.issued + self.opening() >= self.quota) {
            return;
        }
        if self.open(i, now).is_err() {
            self.stats.error(now, ErrorKind::Connect);
            self.conns[i].state = State::Backoff(now + BACKOFF_NS);
        } else if D::UDP {
            self.on_connected(i, now, None);
        }
    }

    /// Starts connection `i`'s connect and has the backend watch it.
    pub(super) fn open(&mut self, i: usize, now: u64) -> std::io::Result<()> {
        if D::UDP {
            return D::open(self, i, now);
        }
        let addr = self.cfg.addr;
        match &mut self.io {
            Backend::Epoll(poll) => {
                self.conns[i].connect(Some(poll.registry()), Token(i), addr, now)
            }
            Backend::Uring(u) => {
                self.conns[i].connect(None, Token(i), addr, now)?;
                if let Some(sock) = self.conns[i].sock.as_ref() {
                    u.watch_connect(i, sock);
                }
                Ok(())
            }
        }
    }

    /// Closes connection `i` (see [`Conn::close`]); io_uring first cancels what the kernel
    /// holds for the socket.
    pub(super) fn close(&mut self, i: usize, backoff_until: u64) -> usize {
        if D::UDP {
            D::on_close(self, i);
        }
        if let Backend::Uring(u) = &mut self.io {
            u.retire(i, self.conns[i].sock.take());
        }
        self.conns[i].close(backoff_until)
    }

    /// `--new-conn -n N`: connections on their way to a request, each of which will take one.
    pub(super) fn opening(&self) -> u64 {
        if self.quota == u64::MAX {
            return 0;
        }
        let opening = |c: &&Conn| {
            matches!(
                c.state,
                State::Connecting(_) | State::Connected | State::Handshaking(_)
            )
        };
        self.conns.iter().filter(opening).count() as u64
    }

    /// Every ~10 ms: per-request timeouts, connect timeouts and reconnects after backoff.
    pub(super) fn housekeeping(&mut self, now: u64) {
        for i in 0..self.conns.len() {
            match self.conns[i].state {
                State::Ready => {
                    if !D::UDP {
                        self.check_lowat(i, now);
                    }
                    if let Some(sent) = self.conns[i].oldest_sent() {
                        if now.saturating_sub(sent) > self.timeout_ns {
                            self.fail(i, now, D::timeout_kind(self, i), 0);
                        }
                    }
                }
                State::Connecting(t) if now.saturating_sub(t) > self.timeout_ns => {
                    self.fail(i, now, ErrorKind::Connect, BACKOFF_NS)
                }
                State::Handshaking(t) if now.saturating_sub(t) > self.timeout_ns => {
                    let kind = match D::UDP {
                        true => D::handshake_timeout(self, i),
                        false => ErrorKind::Tls(TlsCause::HandshakeTimeout),
                    };
                    self.fail(i, now, kind, BACKOFF_NS)
                }
                State::Backoff(until) if now >= until => self.connect(i, now),
                _ => {}
            }
        }
        self.dispatch(now);
    }
}
