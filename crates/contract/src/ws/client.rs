//! verify's WebSocket client: one blocking connection on the shared codec
//! (`serverbench_wire::ws`), strict about every byte the server sends (a masked frame, RSV bits,
//! a bad close code are failures), messages reassembled from their fragments, a server's ping
//! answered as RFC 6455 asks.

use crate::diff::Diff;
use crate::timeouts::IO_TIMEOUT;
use serverbench_wire::ws::{self, Decoded, Decoder, HandshakeError, Key, Opcode, Rng, Role};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// What the server sent next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A whole text or binary message (fragments joined).
    Message(Opcode, Vec<u8>),
    Pong(Vec<u8>),
    /// A close frame and its code.
    Close(Option<u16>),
    /// The connection closed without a close frame.
    Eof,
}

impl Event {
    /// The event in words, for a diff's `got`.
    pub fn describe(&self) -> String {
        match self {
            Event::Message(op, data) if data.len() <= 48 => {
                format!("a {op} message {}", crate::diff::quote(data))
            }
            Event::Message(op, data) => format!("a {op} message of {} bytes", data.len()),
            Event::Pong(p) => format!("a pong {}", crate::diff::quote(p)),
            Event::Close(Some(code)) => format!("close {code}"),
            Event::Close(None) => "a close frame without a code".into(),
            Event::Eof => "the connection closed without a close frame".into(),
        }
    }
}

/// Why no event came.
#[derive(Debug)]
pub enum Failure {
    Io(io::Error),
    Protocol(ws::ProtocolError),
}

impl Failure {
    /// The failure in words, for a diff's `got`.
    pub fn describe(&self) -> String {
        match self {
            Failure::Io(e) if is_timeout(e) => {
                format!("nothing within {} s", IO_TIMEOUT.as_secs())
            }
            Failure::Io(e) => format!("error: {e}"),
            Failure::Protocol(e) => format!("protocol error: {e}"),
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Connects with the check's timeouts and no Nagle delay (each write is its own segment).
pub fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let s = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// What the upgrade expects, for its diffs.
pub const UPGRADE_EXPECTED: &str = "101 with Upgrade, Connection and the Sec-WebSocket-Accept";

/// One upgraded connection.
pub struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
    at: usize,
    decoder: Decoder,
    rng: Rng,
    partial: Option<(Opcode, Vec<u8>)>,
}

/// A connection whose upgrade request is sent and whose answer is not read yet.
pub struct Pending {
    stream: TcpStream,
    key: Key,
    rng: Rng,
}

impl Pending {
    /// Connects to `addr` and sends the upgrade request for `/ws` (no extension offered).
    pub fn start(addr: SocketAddr) -> Result<Pending, Diff> {
        let mut stream = connect(addr).map_err(|e| Diff::error("connect", "a connection", &e))?;
        let mut rng = Rng::from_os(u64::from(addr.port()));
        let key = Key::random(&mut rng);
        let mut req = Vec::new();
        ws::write_upgrade_request(&mut req, &addr.to_string(), "/ws", &key, None);
        stream
            .write_all(&req)
            .map_err(|e| Diff::error("upgrade request", "written", &e))?;
        Ok(Pending { stream, key, rng })
    }

    /// Reads the server's answer: the upgraded connection, or a diff naming the cause.
    pub fn finish(mut self) -> Result<Client, Diff> {
        let accept = self.key.accept();
        let mut buf = Vec::with_capacity(4096);
        let mut chunk = [0u8; 4096];
        loop {
            match ws::parse_response(&buf, &accept, false) {
                Ok(Some(up)) => {
                    return Ok(Client {
                        stream: self.stream,
                        buf,
                        at: up.head_len,
                        decoder: Decoder::new(Role::Client),
                        rng: self.rng,
                        partial: None,
                    })
                }
                Ok(None) => {}
                Err(e) => return Err(handshake_diff(e, &buf)),
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    let got = if buf.is_empty() {
                        "the connection closed without an answer".to_string()
                    } else {
                        format!("the connection closed after {}", crate::diff::quote(&buf))
                    };
                    return Err(Diff::new("upgrade", UPGRADE_EXPECTED, got));
                }
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let got = Failure::Io(e).describe();
                    return Err(Diff::new("upgrade", UPGRADE_EXPECTED, got));
                }
            }
        }
    }
}

/// A failed upgrade as a diff named by its cause.
fn handshake_diff(e: HandshakeError, head: &[u8]) -> Diff {
    let status_line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    match e {
        HandshakeError::Status(_) | HandshakeError::Malformed => Diff::new(
            "upgrade status",
            "HTTP/1.1 101 Switching Protocols",
            crate::diff::quote(status_line),
        ),
        HandshakeError::MissingAccept | HandshakeError::WrongAccept => Diff::new(
            "Sec-WebSocket-Accept",
            "base64(SHA-1(key + GUID)) of the key sent",
            e.to_string(),
        ),
        HandshakeError::UnaskedExtension => Diff::new(
            "Sec-WebSocket-Extensions",
            "none (the client offered no permessage-deflate)",
            e.to_string(),
        ),
        _ => Diff::new("upgrade", UPGRADE_EXPECTED, e.to_string()),
    }
}

impl Client {
    /// Connects and upgrades.
    pub fn open(addr: SocketAddr) -> Result<Client, Diff> {
        Pending::start(addr)?.finish()
    }

    /// A masked client frame, encoded for the caller to write (alone or with others).
    pub fn frame(&mut self, opcode: Opcode, fin: bool, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(payload.len() + 14);
        ws::encode_client(&mut out, opcode, fin, payload, &mut self.rng);
        out
    }

    /// Writes one whole message as one masked frame.
    pub fn send(&mut self, opcode: Opcode, payload: &[u8]) -> io::Result<()> {
        let f = self.frame(opcode, true, payload);
        self.stream.write_all(&f)
    }

    /// Writes bytes as they are.
    pub fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Writes `bytes` in pieces cut at `cuts`, `pause` apart (one TCP segment each).
    pub fn write_split(&mut self, bytes: &[u8], cuts: &[usize], pause: Duration) -> io::Result<()> {
        let mut from = 0;
        for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
            if from > 0 {
                std::thread::sleep(pause);
            }
            self.stream.write_all(&bytes[from..cut])?;
            from = cut;
        }
        Ok(())
    }

    /// The next message, pong, close or end of the connection; a server's ping is answered with
    /// a pong and skipped.
    pub fn next_event(&mut self) -> Result<Event, Failure> {
        loop {
            let decoded = self
                .decoder
                .decode(&mut self.buf[self.at..])
                .map_err(Failure::Protocol)?;
            let Decoded::Frame(f) = decoded else {
                if self.fill().map_err(Failure::Io)? == 0 {
                    return Ok(Event::Eof);
                }
                continue;
            };
            let payload = f.payload(&self.buf[self.at..]).to_vec();
            let code = f.close_code(&self.buf[self.at..]);
            self.at += f.len();
            match f.opcode {
                Opcode::Close => return Ok(Event::Close(code)),
                Opcode::Pong => return Ok(Event::Pong(payload)),
                Opcode::Ping => {
                    let pong = self.frame(Opcode::Pong, true, &payload);
                    self.stream.write_all(&pong).map_err(Failure::Io)?;
                }
                Opcode::Text | Opcode::Binary if f.fin => {
                    return Ok(Event::Message(f.opcode, payload));
                }
                Opcode::Text | Opcode::Binary => self.partial = Some((f.opcode, payload)),
                Opcode::Continuation => {
                    let (op, mut data) = self.partial.take().expect("the decoder checks");
                    data.extend_from_slice(&payload);
                    if f.fin {
                        return Ok(Event::Message(op, data));
                    }
                    self.partial = Some((op, data));
                }
            }
        }
    }

    /// Reads more bytes after the unconsumed ones; 0 at the end of the connection.
    fn fill(&mut self) -> io::Result<usize> {
        if self.at > 0 {
            self.buf.drain(..self.at);
            self.at = 0;
        }
        let len = self.buf.len();
        self.buf.resize(len + 64 * 1024, 0);
        let r = loop {
            match self.stream.read(&mut self.buf[len..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => break r,
            }
        };
        self.buf.truncate(len + *r.as_ref().unwrap_or(&0));
        r
    }

    /// Waits for the server to close the TCP connection: true on EOF or a reset within the
    /// timeout, false on more bytes or silence.
    pub fn closed_by_server(&mut self) -> bool {
        let mut b = [0u8; 256];
        loop {
            match self.stream.read(&mut b) {
                Ok(0) => return true,
                Ok(_) => return false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return e.kind() == io::ErrorKind::ConnectionReset,
            }
        }
    }
}
