//! HTTP/3 on a QUIC connection: request streams opened and written, responses read from their
//! streams' chunks by the wire codec ([`serverbench_wire::h3`]), the server's control stream
//! read (SETTINGS, GOAWAY), and why a connection ended, by name.

use super::quic::{Fate, Lost, QConn, Quic};
use crate::conn::Inflight;
use crate::tls::TlsCause;
use quinn_proto::{ConnectionError, Dir, Event, ReadError, Side, StreamEvent, StreamId, VarInt};
use serverbench_wire::h2::Strings;
use serverbench_wire::h3::{self, stream::PeerSettings, Code, ResponseReader, UniEvent};
use serverbench_wire::http::Response;

/// A request stream in flight.
pub(crate) struct Stream {
    pub id: StreamId,
    pub req: Inflight,
    pub reader: ResponseReader,
    /// Bytes of the request written so far (`usize::MAX`: all, and the stream finished).
    written: usize,
}

/// What a round of a connection's events owes the driver.
#[derive(Debug)]
pub(crate) enum Step {
    /// A whole response.
    Response(Inflight, Response),
    /// The server reset the request's stream with this code.
    Reset(Inflight, Code),
    /// The response was malformed (a stream error: H3_MESSAGE_ERROR).
    Malformed(Inflight, Code),
    /// The server's SETTINGS.
    Settings(PeerSettings),
    /// A GOAWAY.
    Goaway,
}

impl QConn {
    /// Opens a request stream for `req` and writes `request`'s bytes (the rest goes out as
    /// the stream's credit allows); false when the server's stream limit is reached (the
    /// connection is `blocked` until it raises it).
    pub fn open_request(&mut self, req: Inflight, request: &h3::Request, verify: bool) -> bool {
        let Some(id) = self.conn.streams().open(Dir::Bi) else {
            self.blocked = true;
            return false;
        };
        let reader = match self.spare.pop() {
            Some(r) => r,
            None => ResponseReader::new(verify),
        };
        self.streams.push(Stream {
            id,
            req,
            reader,
            written: 0,
        });
        let last = self.streams.len() - 1;
        self.write_request(last, &request.bytes);
        true
    }

    /// Writes what the stream at `pos` still owes of `bytes`, then finishes it.
    fn write_request(&mut self, pos: usize, bytes: &[u8]) {
        let s = &mut self.streams[pos];
        if s.written == usize::MAX {
            return;
        }
        let mut send = self.conn.send_stream(s.id);
        while s.written < bytes.len() {
            match send.write(&bytes[s.written..]) {
                Ok(n) => s.written += n,
                Err(_) => return, // blocked: a Writable event resumes it
            }
        }
        let _ = send.finish();
        s.written = usize::MAX;
    }

    /// Opens this client's control stream with its SETTINGS (no QPACK dynamic table).
    pub fn open_control(&mut self) {
        if let Some(id) = self.conn.streams().open(Dir::Uni) {
            let _ = self
                .conn
                .send_stream(id)
                .write(&h3::client_control_stream());
        }
    }

    /// Acts on every event quinn-proto has: handshake, stream data, credit, the end. Steps go
    /// to `steps`; an HTTP/3 connection error found here closes the connection with its code.
    pub fn events(
        &mut self,
        q: &Quic,
        strings: &mut Strings,
        requests: &[h3::Request],
        steps: &mut Vec<Step>,
        now: u64,
    ) -> Fate {
        let mut fate = Fate::Alive { refill: false };
        while let Some(ev) = self.conn.poll() {
            let found = match ev {
                Event::Connected => {
                    if !self.early {
                        self.open_control(); // 0-RTT opened it, or reopens it if rejected
                    }
                    self.up = true;
                    fate = Fate::Connected;
                    Ok(())
                }
                Event::ConnectionLost { reason } => return Fate::Lost(self.lost(reason)),
                Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    while let Some(id) = self.conn.streams().accept(Dir::Uni) {
                        self.uni.push((id, Default::default()));
                    }
                    self.read_uni_all(steps)
                }
                Event::Stream(StreamEvent::Opened { dir: Dir::Bi }) => {
                    Err(Code::STREAM_CREATION_ERROR) // a server may not open request streams
                }
                Event::Stream(StreamEvent::Readable { id }) => match id.initiator() {
                    Side::Client => self.read_request(id, strings, steps),
                    Side::Server => self.read_uni(id, steps),
                },
                Event::Stream(StreamEvent::Writable { id }) => {
                    if let Some(pos) = self.streams.iter().position(|s| s.id == id) {
                        let url = self.streams[pos].req.url as usize;
                        self.write_request(pos, &requests[url].bytes);
                    }
                    Ok(())
                }
                Event::Stream(StreamEvent::Available { dir: Dir::Bi }) => {
                    self.blocked = false;
                    if let Fate::Alive { refill } = &mut fate {
                        *refill = true;
                    }
                    Ok(())
                }
                _ => Ok(()),
            };
            if let Err(code) = found {
                let reason = bytes::Bytes::new();
                self.conn
                    .close(q.instant(now), VarInt::from_u32(code.0 as u32), reason);
                return Fate::Lost(Lost::H3(code.to_string()));
            }
        }
        fate
    }

    /// Reads a request stream's new bytes; a response that ended becomes a step.
    fn read_request(
        &mut self,
        id: StreamId,
        strings: &mut Strings,
        steps: &mut Vec<Step>,
    ) -> Result<(), Code> {
        let Some(pos) = self.streams.iter().position(|s| s.id == id) else {
            return Ok(()); // a stream already ended (reset after its answer)
        };
        let QConn { conn, streams, .. } = self;
        let reader = &mut streams[pos].reader;
        let mut recv = conn.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else {
            return Ok(());
        };
        // Some(Ok(Ok)): a whole response; Some(Ok(Err)): reset by the server with a code;
        // Some(Err): what the codec found wrong; None: more to come.
        let end = loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    if let Err(code) = reader.feed(&chunk.bytes, strings) {
                        break Some(Err(code));
                    }
                }
                Ok(None) => break Some(reader.finish().map(Ok)),
                Err(ReadError::Blocked) => break None,
                Err(ReadError::Reset(code)) => break Some(Ok(Err(Code(code.into_inner())))),
            }
        };
        let _ = chunks.finalize();
        let Some(end) = end else {
            return Ok(());
        };
        let req = self.retire(pos).req;
        match end {
            Ok(Ok(resp)) => steps.push(Step::Response(req, resp)),
            Ok(Err(reset)) => steps.push(Step::Reset(req, reset)),
            Err(code) if code.is_stream_error() => {
                let _ = self
                    .conn
                    .recv_stream(id)
                    .stop(VarInt::from_u32(code.0 as u32));
                steps.push(Step::Malformed(req, code));
            }
            Err(code) => return Err(code),
        }
        Ok(())
    }

    /// Reads every unidirectional stream of the server.
    fn read_uni_all(&mut self, steps: &mut Vec<Step>) -> Result<(), Code> {
        for k in 0..self.uni.len() {
            let id = self.uni[k].0;
            self.read_uni(id, steps)?;
        }
        Ok(())
    }

    /// Reads a unidirectional stream of the server: the control stream's frames become steps,
    /// QPACK's and unknown streams are drained.
    fn read_uni(&mut self, id: StreamId, steps: &mut Vec<Step>) -> Result<(), Code> {
        let Some(k) = self.uni.iter().position(|(u, _)| *u == id) else {
            return Ok(());
        };
        let QConn { conn, uni, .. } = self;
        let reader = &mut uni[k].1;
        let mut recv = conn.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else {
            return Ok(());
        };
        let mut result = Ok(());
        let mut goaway = false;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    let on = |e| {
                        goaway |= matches!(e, UniEvent::Goaway(_));
                        steps.push(match e {
                            UniEvent::Settings(s) => Step::Settings(s),
                            UniEvent::Goaway(_) => Step::Goaway,
                        })
                    };
                    if let Err(code) = reader.feed(&chunk.bytes, on) {
                        result = Err(code);
                        break;
                    }
                }
                Ok(None) | Err(ReadError::Reset(_)) => {
                    result = reader.finish();
                    break;
                }
                Err(ReadError::Blocked) => break,
            }
        }
        let _ = chunks.finalize();
        self.goaway |= goaway;
        result
    }

    /// Why the connection ended, by name.
    fn lost(&self, reason: ConnectionError) -> Lost {
        use ConnectionError as E;
        let crypto = |code: u64| (0x100..0x200).contains(&code).then_some(code as u8);
        match reason {
            E::TimedOut if !self.heard => Lost::Handshake(TlsCause::NoUdpAnswer),
            E::TimedOut => Lost::TimedOut,
            E::ApplicationClosed(c) => match Code(c.error_code.into_inner()) {
                Code::NO_ERROR => Lost::Graceful,
                code => Lost::H3(code.to_string()),
            },
            E::ConnectionClosed(c) => match crypto(u64::from(c.error_code)) {
                Some(alert) if !self.up => Lost::Handshake(alert_cause(alert)),
                _ => Lost::Transport(format!("{:?}", c.error_code)),
            },
            E::TransportError(e) => match crypto(u64::from(e.code)) {
                Some(alert) if !self.up => Lost::Handshake(alert_cause(alert)),
                _ => Lost::Transport(format!("local: {:?}", e.code)),
            },
            E::Reset => Lost::Transport("STATELESS_RESET".into()),
            E::VersionMismatch => Lost::Handshake(TlsCause::Incompatible),
            E::LocallyClosed => Lost::Graceful,
            E::CidsExhausted => Lost::Transport("local: CIDS_EXHAUSTED".into()),
        }
    }
}

/// A TLS alert (a QUIC CRYPTO_ERROR's low byte) as the cause users know.
fn alert_cause(alert: u8) -> TlsCause {
    use rustls::AlertDescription as A;
    match A::from(alert) {
        A::NoApplicationProtocol => TlsCause::NoH3,
        A::UnknownCA => TlsCause::UnknownIssuer,
        A::CertificateExpired => TlsCause::Expired,
        A::BadCertificate | A::UnsupportedCertificate | A::CertificateUnknown => {
            TlsCause::BadCertificate
        }
        a => TlsCause::Alert(a),
    }
}
