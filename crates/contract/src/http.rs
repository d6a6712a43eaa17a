//! A tiny raw HTTP/1.1 client over `std::net::TcpStream` or TLS ([`crate::tls`]), strict enough
//! to check the contract: it sees exactly what the server sent (status line, headers, framing)
//! and every read has a timeout so a broken server cannot hang verify.
//!
//! Over TLS, a server that closes the TCP connection without a `close_notify` alert is taken
//! as having closed it: many do after an HTTP/1.0 answer, and the framing checks still see a
//! truncated body.
//!
//! Hand-written on purpose: verify must see the exact bytes on the wire (the status line and
//! headers as sent, whether the body was chunked, length-framed or close-delimited, a connection
//! closed mid-head or mid-body), which an HTTP client crate normalizes, repairs or hides.

use crate::tls::{TlsClient, TlsStream};
use serverbench_wire::tls::Negotiated;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

pub use crate::timeouts::IO_TIMEOUT;
/// Upper bound for one whole response.
const RESPONSE_DEADLINE: Duration = Duration::from_secs(15);
/// Largest head or body accepted.
const MAX_BODY: usize = 8 * 1024 * 1024;
const MAX_HEAD: usize = 64 * 1024;

/// A parsed response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// `HTTP/1.1` or `HTTP/1.0`.
    pub version: String,
    /// The status code.
    pub status: u16,
    /// Header (name, value) pairs in order; names as sent.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// True when the body was framed by the connection closing (no length, no chunking).
    pub close_delimited: bool,
}

impl Response {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The media type of `Content-Type` (before any `;`), lower-cased.
    pub fn media_type(&self) -> Option<String> {
        self.header("content-type").map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
    }
}

/// How a check reaches the server: plain TCP or TLS with a client configuration.
#[derive(Debug, Clone, Copy)]
pub struct Dial<'a> {
    /// The server's address.
    pub addr: SocketAddr,
    /// The TLS client, when the connection is TLS.
    pub tls: Option<&'a TlsClient>,
}

impl Dial<'static> {
    /// Plain TCP to `addr`.
    pub fn tcp(addr: SocketAddr) -> Dial<'static> {
        Dial { addr, tls: None }
    }
}

impl<'a> Dial<'a> {
    /// TLS to `addr` with `client`.
    pub fn tls(addr: SocketAddr, client: &'a TlsClient) -> Dial<'a> {
        Dial {
            addr,
            tls: Some(client),
        }
    }

    /// The `Host` header value.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }
}

/// The connection under a [`Conn`].
#[derive(Debug)]
enum Stream {
    Tcp(TcpStream),
    Tls(Box<TlsStream>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Tcp(s) => s,
            Stream::Tls(s) => &s.sock,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Tls(s) => match s.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
                r => r,
            },
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// One client connection with its read buffer.
#[derive(Debug)]
pub struct Conn {
    stream: Stream,
    buf: Vec<u8>,
    eof: bool,
}

impl Conn {
    /// Connects with [`IO_TIMEOUT`] on connect, reads and writes.
    pub fn connect(addr: SocketAddr) -> io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
        stream.set_read_timeout(Some(IO_TIMEOUT))?;
        stream.set_write_timeout(Some(IO_TIMEOUT))?;
        stream.set_nodelay(true)?;
        Ok(Conn::over(Stream::Tcp(stream)))
    }

    /// Connects as `dial` says (for TLS, the handshake is done when this returns).
    pub fn open(dial: Dial<'_>) -> io::Result<Conn> {
        match dial.tls {
            None => Conn::connect(dial.addr),
            Some(client) => Ok(Conn::over(Stream::Tls(Box::new(
                client.connect(dial.addr)?,
            )))),
        }
    }

    fn over(stream: Stream) -> Conn {
        Conn {
            stream,
            buf: Vec::new(),
            eof: false,
        }
    }

    /// What the TLS handshake settled (`None` on plain TCP).
    pub fn negotiated(&self) -> Option<Negotiated> {
        match &self.stream {
            Stream::Tcp(_) => None,
            Stream::Tls(s) => Some(Negotiated::of(&s.conn)),
        }
    }

    /// Writes raw bytes (over TLS: as one record sequence, flushed).
    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)?;
        self.stream.flush()
    }

    /// Writes `bytes` in writes of at most `piece` bytes with `pause` between them (Nagle is
    /// off, so each write leaves as its own segment): what a slow client or a proxy sends.
    pub fn send_pieces(&mut self, bytes: &[u8], piece: usize, pause: Duration) -> io::Result<()> {
        for (i, chunk) in bytes.chunks(piece.max(1)).enumerate() {
            if i > 0 {
                std::thread::sleep(pause);
            }
            self.stream.write_all(chunk)?;
            self.stream.flush()?;
        }
        Ok(())
    }

    /// Reads one response (to a GET: no HEAD handling).
    pub fn read_response(&mut self) -> io::Result<Response> {
        let deadline = Instant::now() + RESPONSE_DEADLINE;
        let head_end = loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                break i;
            }
            if self.buf.len() > MAX_HEAD {
                return Err(invalid("response head larger than 64 KiB"));
            }
            if self.fill(deadline)? == 0 {
                return Err(if self.buf.is_empty() {
                    io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "connection closed, no response",
                    )
                } else {
                    invalid("connection closed in the middle of the response head")
                });
            }
        };
        let head = String::from_utf8_lossy(&self.buf[..head_end]).into_owned();
        self.buf.drain(..head_end + 4);
        let (version, status, headers) = parse_head(&head)?;
        let mut resp = Response {
            version,
            status,
            headers,
            body: Vec::new(),
            close_delimited: false,
        };
        let chunked = resp
            .header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        if status == 204 || status == 304 || (100..200).contains(&status) {
            return Ok(resp);
        }
        if chunked {
            resp.body = self.read_chunked(deadline)?;
        } else if let Some(len) = resp.header("content-length") {
            let len: usize = len
                .trim()
                .parse()
                .map_err(|_| invalid(&format!("bad Content-Length {len:?}")))?;
            if len > MAX_BODY {
                return Err(invalid(&format!("Content-Length {len} is too large")));
            }
            resp.body = self.read_exact_body(len, deadline)?;
        } else {
            resp.close_delimited = true;
            while self.fill(deadline)? > 0 {
                if self.buf.len() > MAX_BODY {
                    return Err(invalid("close-delimited body larger than 8 MiB"));
                }
            }
            resp.body = std::mem::take(&mut self.buf);
        }
        Ok(resp)
    }

    /// True when the server closed the connection (waits up to `wait` for it).
    pub fn closed_by_peer(&mut self, wait: Duration) -> bool {
        if self.eof || !self.buf.is_empty() {
            return self.eof && self.buf.is_empty();
        }
        let _ = self.stream.tcp().set_read_timeout(Some(wait));
        let mut b = [0u8; 1];
        let closed = match self.stream.read(&mut b) {
            Ok(0) => true,
            Err(e) => e.kind() == io::ErrorKind::ConnectionReset,
            Ok(_) => false,
        };
        let _ = self.stream.tcp().set_read_timeout(Some(IO_TIMEOUT));
        closed
    }

    fn fill(&mut self, deadline: Instant) -> io::Result<usize> {
        if self.eof {
            return Ok(0);
        }
        if Instant::now() > deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "response took longer than 15 s",
            ));
        }
        let mut tmp = [0u8; 64 * 1024];
        let n = self.stream.read(&mut tmp).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                io::Error::new(io::ErrorKind::TimedOut, "no data from the server for 5 s")
            }
            _ => e,
        })?;
        if n == 0 {
            self.eof = true;
        }
        self.buf.extend_from_slice(&tmp[..n]);
        Ok(n)
    }

    fn read_exact_body(&mut self, len: usize, deadline: Instant) -> io::Result<Vec<u8>> {
        while self.buf.len() < len {
            if self.fill(deadline)? == 0 {
                return Err(invalid(&format!(
                    "connection closed after {} of {len} body bytes",
                    self.buf.len()
                )));
            }
        }
        Ok(self.buf.drain(..len).collect())
    }

    fn read_line(&mut self, deadline: Instant) -> io::Result<String> {
        loop {
            if let Some(i) = find(&self.buf, b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[..i]).into_owned();
                self.buf.drain(..i + 2);
                return Ok(line);
            }
            if self.fill(deadline)? == 0 {
                return Err(invalid("connection closed inside chunked framing"));
            }
        }
    }

    fn read_chunked(&mut self, deadline: Instant) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let line = self.read_line(deadline)?;
            let size = line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size, 16)
                .map_err(|_| invalid(&format!("bad chunk size line {line:?}")))?;
            if size == 0 {
                // Trailers until the empty line.
                while !self.read_line(deadline)?.is_empty() {}
                return Ok(body);
            }
            if body.len() + size > MAX_BODY {
                return Err(invalid("chunked body larger than 8 MiB"));
            }
            body.extend(self.read_exact_body(size, deadline)?);
            if !self.read_line(deadline)?.is_empty() {
                return Err(invalid("chunk not followed by CRLF"));
            }
        }
    }
}

/// Version, status and headers of a response head.
type Head = (String, u16, Vec<(String, String)>);

fn parse_head(head: &str) -> io::Result<Head> {
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("").to_string();
    if !version.starts_with("HTTP/1.") {
        return Err(invalid(&format!("bad status line {status_line:?}")));
    }
    let status = parts
        .next()
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| invalid(&format!("bad status line {status_line:?}")))?;
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| invalid(&format!("bad header line {line:?}")))?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    Ok((version, status, headers))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

/// A GET request for `path` in HTTP/1.1 (keep-alive) or HTTP/1.0.
pub fn get_request(path: &str, host: &str, http10: bool) -> Vec<u8> {
    if http10 {
        format!("GET {path} HTTP/1.0\r\nHost: {host}\r\nUser-Agent: serverbench-verify\r\n\r\n")
    } else {
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: serverbench-verify\r\n\r\n")
    }
    .into_bytes()
}

/// One GET on a fresh connection.
pub fn get(to: Dial<'_>, path: &str) -> io::Result<Response> {
    let mut c = Conn::open(to)?;
    c.send(&get_request(path, &to.host(), false))?;
    c.read_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// Serves `raw` once on a local port and returns its address.
    fn serve_once(raw: &'static [u8]) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; 1024];
            let _ = s.read(&mut b);
            s.write_all(raw).unwrap();
        });
        addr
    }

    #[test]
    fn content_length_body_is_read_exactly() {
        let addr = serve_once(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 5\r\n\r\nhello");
        let r = get(Dial::tcp(addr), "/").unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"hello"[..]));
        assert_eq!(r.media_type().as_deref(), Some("text/plain"));
    }

    #[test]
    fn chunked_body_is_reassembled() {
        let addr = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Type: x/y\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n",
        );
        assert_eq!(get(Dial::tcp(addr), "/").unwrap().body, b"abcde");
    }

    #[test]
    fn close_delimited_body_reads_to_eof() {
        let addr = serve_once(b"HTTP/1.0 200 OK\r\nContent-Type: x/y\r\n\r\nuntil close");
        let r = get(Dial::tcp(addr), "/").unwrap();
        assert!(r.close_delimited);
        assert_eq!(r.body, b"until close");
    }

    #[test]
    fn truncated_body_is_an_error() {
        let addr = serve_once(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
        let err = get(Dial::tcp(addr), "/").unwrap_err();
        assert!(err.to_string().contains("3 of 10"), "{err}");
    }

    #[test]
    fn garbage_status_line_is_an_error() {
        let addr = serve_once(b"SSH-2.0-OpenSSH\r\n\r\n");
        assert!(get(Dial::tcp(addr), "/").is_err());
    }
}
