//! The TLS steps of the worker loop: a handshake driven on each event of its connection, and
//! reads that decrypt before the bytes reach the same protocol code as plain connections.

use super::{Backend, Worker, BACKOFF_NS};
use crate::conn::{Handshake, State, TlsRead, Wire};
use crate::proto::Driver;
use crate::stats::ErrorKind;
use crate::tls::{Negotiated, TlsCause};

impl<D: Driver> Worker<'_, D> {
    /// Moves connection `i`'s handshake on (`first`: it starts now); once done, records it and
    /// starts requests.
    pub(super) fn handshake(&mut self, i: usize, now: u64, first: bool) {
        let State::Handshaking(started) = self.conns[i].state else {
            return;
        };
        let progress = match self.io {
            Backend::Epoll(_) => {
                let mut wire = Wire::default();
                let progress = self.conns[i].drive_handshake(&mut wire, first);
                self.stats.read(now, wire.read);
                self.stats.wrote(now, wire.written);
                progress
            }
            // io_uring: received bytes were fed to rustls already; what it has to say is sent.
            Backend::Uring(_) => match self.conns[i].tls.as_deref() {
                Some(t) if t.is_handshaking() => {
                    self.flush(i, now);
                    Handshake::Pending
                }
                Some(_) => Handshake::Done,
                None => Handshake::Failed(ErrorKind::Read),
            },
        };
        match progress {
            Handshake::Pending => {}
            Handshake::Done => {
                let mut alpn_ok = D::ALPN.is_none();
                if let Some(tls) = self.conns[i].tls.as_deref() {
                    let resumed = tls.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
                    let ns = now.saturating_sub(started);
                    self.stats.handshake(now, ns, resumed, Negotiated::of(tls));
                    alpn_ok |= tls.alpn_protocol() == D::ALPN;
                }
                if !alpn_ok {
                    self.fail(i, now, ErrorKind::Tls(TlsCause::NoH2), BACKOFF_NS);
                    return;
                }
                self.conns[i].state = State::Ready;
                self.on_ready(i, now);
                // Our Finished went out with the first request, unless none was due (`-R`).
                if self.conns[i]
                    .tls
                    .as_deref()
                    .is_some_and(|t| t.wants_write())
                {
                    self.flush(i, now);
                }
            }
            Handshake::Failed(kind) => self.fail(i, now, kind, BACKOFF_NS),
        }
    }

    /// Hands what rustls has decrypted to `consume`; returns false if the connection was reset.
    pub(super) fn consume_plaintext(&mut self, i: usize, now: u64, buf: &mut [u8]) -> bool {
        loop {
            let got = self.conns[i].take_plaintext(buf);
            if got == 0 {
                return true;
            }
            if !self.consume(i, &buf[..got], now) {
                return false;
            }
        }
    }

    /// Reads a TLS connection until its socket is drained, handing the plaintext to
    /// `consume`; returns false if the connection was reset.
    pub(super) fn read_all_tls(
        &mut self,
        i: usize,
        closed: bool,
        now: u64,
        buf: &mut [u8],
    ) -> bool {
        loop {
            let (n, next) = match self.conns[i].read_tls(closed) {
                Ok(r) => r,
                Err(kind) => {
                    self.fail(i, now, kind, 0);
                    return false;
                }
            };
            if n > 0 {
                self.stats.read(now, n);
                self.conns[i].last_read = now;
            }
            if !self.consume_plaintext(i, now, buf) {
                return false;
            }
            match next {
                TlsRead::More => {}
                TlsRead::Drained => return true,
                TlsRead::Eof => {
                    self.on_eof(i, now);
                    return false;
                }
            }
        }
    }
}
