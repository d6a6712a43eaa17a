//! [`names::HTTP11`]: a gRPC call written as an HTTP/1.1 request on `PORT` must be refused (a
//! 4xx or 5xx status line, or the connection closed, HTTP/2 frames before the close allowed),
//! never answered with a 2xx: gRPC is HTTP/2 only.

use super::messages::{path, SumRequest};
use super::names;
use crate::diff::Diff;
use crate::Check;
use prost::Message;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long the server has to refuse.
pub const REFUSE_WITHIN: Duration = Duration::from_secs(2);

pub(super) fn check_http11(addr: SocketAddr) -> Check {
    let name = names::HTTP11;
    match exchange(addr) {
        Ok(Verdict::Refused(how)) => Check::pass(name).with_note(how),
        Ok(Verdict::Answered(line)) => Check::new(
            name,
            vec![Diff::new("answer", "a 4xx or 5xx, or a close", line)],
        ),
        Ok(Verdict::Silent) => {
            let got = format!(
                "the connection still open and silent after {} s",
                REFUSE_WITHIN.as_secs()
            );
            Check::new(
                name,
                vec![Diff::new("answer", "a 4xx or 5xx, or a close", got)],
            )
        }
        Err(e) => Check::new(
            name,
            vec![Diff::error("connection", "a TCP connection", &e)],
        ),
    }
}

enum Verdict {
    Refused(String),
    Answered(String),
    Silent,
}

/// The request: a `Sum` POSTed as HTTP/1.1 with gRPC's headers.
fn request(addr: SocketAddr) -> Vec<u8> {
    let body = serverbench_wire::grpc::framed(&SumRequest { a: 1, b: 2 }.encode_to_vec(), false);
    let mut req = format!(
        "POST {} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/grpc\r\nTE: trailers\r\nContent-Length: {}\r\n\r\n",
        path::SUM,
        body.len()
    )
    .into_bytes();
    req.extend(body);
    req
}

fn exchange(addr: SocketAddr) -> std::io::Result<Verdict> {
    let mut s = TcpStream::connect_timeout(&addr, REFUSE_WITHIN)?;
    s.write_all(&request(addr))?;
    let until = Instant::now() + REFUSE_WITHIN;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(judge(&got).unwrap_or(Verdict::Silent));
        }
        s.set_read_timeout(Some(left))?;
        match s.read(&mut buf) {
            Ok(0) => return Ok(judge(&got).unwrap_or_else(|| closed(&got))),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Ok(judge(&got).unwrap_or(Verdict::Silent));
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                return Ok(judge(&got).unwrap_or(Verdict::Refused("reset".into())));
            }
            Err(e) => return Err(e),
        }
        if let Some(v) = judge(&got) {
            return Ok(v);
        }
    }
}

/// An HTTP/1.x status line, once it is whole.
fn judge(got: &[u8]) -> Option<Verdict> {
    if !got.starts_with(b"HTTP/1.") {
        return None;
    }
    let end = got.windows(2).position(|w| w == b"\r\n")?;
    let line = String::from_utf8_lossy(&got[..end]).into_owned();
    let code = line.split(' ').nth(1).unwrap_or("");
    Some(if code.starts_with('4') || code.starts_with('5') {
        Verdict::Refused(format!("answered {line}"))
    } else {
        Verdict::Answered(line)
    })
}

fn closed(got: &[u8]) -> Verdict {
    if got.is_empty() {
        Verdict::Refused("closed".into())
    } else {
        Verdict::Refused(format!("closed after {} bytes (HTTP/2 frames)", got.len()))
    }
}
