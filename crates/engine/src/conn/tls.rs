//! TLS on one connection: the handshake, driven as far as the socket allows on each event, and
//! record I/O once it is done. Non-blocking throughout; the worker loop stays the same.
//!
//! Reads go from the socket straight into rustls's record buffer (no copy through ours): rustls
//! asks for at most a few kilobytes per read, and [`Probe`] remembers how many, so that a
//! short read still tells the loop that the socket is drained (edge triggering) without the
//! extra `recv` that returns EAGAIN, as for plain connections.

use super::{Conn, Flushed};
use crate::stats::ErrorKind;
use crate::tls::TlsCause;
use mio::net::TcpStream;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};
use std::io::{self, Read, Write};
use std::sync::Arc;

/// How far a handshake got on this event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handshake {
    /// Waiting for the server (the socket is drained).
    Pending,
    Done,
    Failed(ErrorKind),
}

/// What one read of a TLS connection left to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsRead {
    /// The socket may hold more: read again.
    More,
    /// The socket is drained: wait for the next event.
    Drained,
    /// The server closed (FIN, or a `close_notify` alert).
    Eof,
}

/// Bytes moved on the wire (records and handshake messages), for the transfer counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wire {
    pub read: usize,
    pub written: usize,
}

/// The socket as rustls reads it, remembering how many bytes the last read asked for.
struct Probe<'a> {
    sock: &'a mut TcpStream,
    asked: usize,
}

impl Read for Probe<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.asked = buf.len();
        self.sock.read(buf)
    }
}

/// A failure while the session is up: an alert or bad record is `tls`, a socket error `read`.
fn tls_error(e: &rustls::Error) -> ErrorKind {
    ErrorKind::Tls(TlsCause::of(e))
}

impl Conn {
    /// The TCP connection is up: starts a TLS session over it (the ClientHello is written by
    /// [`Conn::drive_handshake`]).
    pub fn start_tls(
        &mut self,
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
    ) -> Result<(), ErrorKind> {
        let tls = ClientConnection::new(config, name).map_err(|e| tls_error(&e))?;
        self.tls = Some(Box::new(tls));
        Ok(())
    }

    /// Writes and reads handshake messages until the handshake is done or the socket has
    /// nothing more; `wire` adds up the bytes moved. `first`: the ClientHello goes out now, and
    /// nothing can have come back yet, so there is no read (a TLS server never speaks first).
    /// Once the handshake is done our last flight (Finished) is left to the first request's
    /// flush: one `writev` carries both.
    pub fn drive_handshake(&mut self, wire: &mut Wire, first: bool) -> Handshake {
        let (Some(sock), Some(tls)) = (self.sock.as_mut(), self.tls.as_deref_mut()) else {
            return Handshake::Failed(ErrorKind::Read);
        };
        let eof = Handshake::Failed(ErrorKind::Tls(TlsCause::HandshakeEof));
        loop {
            if !tls.is_handshaking() {
                return Handshake::Done;
            }
            while tls.wants_write() {
                match tls.write_tls(sock) {
                    Ok(n) => wire.written += n,
                    // The writable edge calls us back; the server may have sent something.
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return eof,
                }
            }
            if first {
                return Handshake::Pending;
            }
            match tls.read_tls(&mut Probe {
                sock: &mut *sock,
                asked: 0,
            }) {
                Ok(0) => return eof,
                Ok(n) => wire.read += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Handshake::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return eof,
            }
            if let Err(e) = tls.process_new_packets() {
                let _ = tls.write_tls(sock); // our alert, best effort
                return Handshake::Failed(tls_error(&e));
            }
        }
    }

    /// One read from the socket into rustls, and the records it completes decrypted; the
    /// plaintext waits in rustls for [`Conn::take_plaintext`]. Returns the wire bytes read.
    /// `closed`: the poller saw the peer close, so read on to the EOF.
    pub fn read_tls(&mut self, closed: bool) -> Result<(usize, TlsRead), ErrorKind> {
        let (Some(sock), Some(tls)) = (self.sock.as_mut(), self.tls.as_deref_mut()) else {
            return Err(ErrorKind::Read);
        };
        let mut probe = Probe { sock, asked: 0 };
        let (n, mut next) = loop {
            match tls.read_tls(&mut probe) {
                Ok(0) => break (0, TlsRead::Eof),
                Ok(n) if n < probe.asked && !closed => break (n, TlsRead::Drained),
                Ok(n) => break (n, TlsRead::More),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break (0, TlsRead::Drained),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(ErrorKind::Read),
            }
        };
        match tls.process_new_packets() {
            Ok(state) if state.peer_has_closed() => next = TlsRead::Eof,
            Ok(_) => {}
            Err(e) => {
                let _ = tls.write_tls(probe.sock);
                return Err(tls_error(&e));
            }
        }
        Ok((n, next))
    }

    /// io_uring: hands received wire bytes to rustls (as many as it takes at once; `data` is
    /// advanced past them) and decrypts the records they complete. Returns whether the peer
    /// sent its `close_notify`. On an error no alert goes back (the connection is dropped).
    pub fn feed_tls(&mut self, data: &mut &[u8]) -> Result<bool, ErrorKind> {
        let Some(tls) = self.tls.as_deref_mut() else {
            return Err(ErrorKind::Read);
        };
        if !data.is_empty() && matches!(tls.read_tls(data), Ok(0) | Err(_)) {
            return Err(ErrorKind::Read);
        }
        match tls.process_new_packets() {
            Ok(state) => Ok(state.peer_has_closed()),
            Err(e) => Err(tls_error(&e)),
        }
    }

    /// io_uring: encrypts what is pending in `out` and appends the records (and anything the
    /// handshake has to send) to `wire`, the buffer the next send takes.
    pub fn seal_into(&mut self, wire: &mut Vec<u8>) -> Result<(), ErrorKind> {
        let Some(tls) = self.tls.as_deref_mut() else {
            return Err(ErrorKind::Write);
        };
        loop {
            if self.out_pos < self.out.len() {
                match tls.writer().write(&self.out[self.out_pos..]) {
                    Ok(n) => self.out_pos += n,
                    Err(_) => return Err(ErrorKind::Write),
                }
            }
            if !tls.wants_write() {
                if self.out_pos < self.out.len() {
                    return Err(ErrorKind::Write); // rustls took nothing and has nothing to send
                }
                break;
            }
            while tls.wants_write() {
                if tls.write_tls(wire).is_err() {
                    return Err(ErrorKind::Write);
                }
            }
        }
        self.out.clear();
        self.out_pos = 0;
        Ok(())
    }

    /// Copies decrypted bytes into `buf`; 0 when none are left.
    pub fn take_plaintext(&mut self, buf: &mut [u8]) -> usize {
        match self.tls.as_deref_mut() {
            // Ok(0) after a close_notify, WouldBlock when empty, UnexpectedEof after a bare FIN:
            // all mean that nothing more is there now.
            Some(tls) => tls.reader().read(buf).unwrap_or(0),
            None => 0,
        }
    }

    /// Encrypts what is pending in `out` and writes the records (and anything the handshake
    /// left unwritten); returns the wire bytes written and how it ended.
    pub(super) fn flush_tls(&mut self) -> (usize, Flushed) {
        let (Some(sock), Some(tls)) = (self.sock.as_mut(), self.tls.as_deref_mut()) else {
            return (0, Flushed::Failed);
        };
        let mut total = 0;
        loop {
            if self.out_pos < self.out.len() {
                match tls.writer().write(&self.out[self.out_pos..]) {
                    Ok(n) => self.out_pos += n,
                    Err(_) => return (total, Flushed::Failed),
                }
            }
            if !tls.wants_write() {
                if self.out_pos < self.out.len() {
                    return (total, Flushed::Failed); // rustls took nothing and has nothing to send
                }
                break;
            }
            match tls.write_tls(sock) {
                Ok(n) => total += n,
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
}
