//! The TCP echo checks: 1 byte, 64 KiB and 1 MiB echoed in order and the server closing when
//! the peer closes; many connections at once.

use super::diff::Diff;
use super::Check;
use crate::timeouts::IO_TIMEOUT;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};

fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let s = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// Test data of `len` bytes (a varying pattern so reordering shows).
fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

/// Reads until `len` bytes arrived; returns what arrived and the error if cut short.
fn read_len(s: &mut TcpStream, len: usize) -> (Vec<u8>, Option<io::Error>) {
    let mut got = Vec::with_capacity(len);
    let mut buf = vec![0u8; 64 * 1024];
    while got.len() < len {
        match s.read(&mut buf) {
            Ok(0) => {
                let e = io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed");
                return (got, Some(e));
            }
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (got, Some(e)),
        }
    }
    (got, None)
}

/// Sends `len` bytes (from a writer thread, so large sizes cannot deadlock), reads them back,
/// then half-closes and expects the server to close.
pub fn check_echo(addr: SocketAddr, len: usize) -> Check {
    let name = format!("echo {}", human(len));
    let mut s = match connect(addr) {
        Ok(s) => s,
        Err(e) => return Check::new(name, vec![Diff::error("connect", "a connection", &e)]),
    };
    let expected = data(len);
    let writer = match s.try_clone() {
        Ok(mut w) => {
            let d = expected.clone();
            std::thread::spawn(move || w.write_all(&d))
        }
        Err(e) => return Check::new(name, vec![Diff::error("connect", "a connection", &e)]),
    };
    let (got, err) = read_len(&mut s, len);
    let write_result = writer
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("writer panicked")));
    let mut diffs = Vec::new();
    if let Err(e) = write_result {
        diffs.push(Diff::error("write", format!("{len} bytes accepted"), &e));
    }
    if let Some(e) = err {
        diffs.push(Diff::new(
            "echoed bytes",
            format!("{len} bytes"),
            format!("{} bytes, then error: {e}", got.len()),
        ));
    } else if let Some(d) = Diff::bytes("echoed bytes", &expected, &got) {
        diffs.push(d);
    }
    if diffs.is_empty() {
        let _ = s.shutdown(Shutdown::Write);
        if let Some(d) = close_diff(&mut s) {
            diffs.push(d);
        }
    }
    Check::new(name, diffs)
}

/// After our half-close the server must close too: EOF or a reset, not bytes or silence.
fn close_diff(s: &mut TcpStream) -> Option<Diff> {
    let expected = "the server closes after the peer closes";
    match read_len(s, 1) {
        (_, Some(e)) if e.kind() == io::ErrorKind::UnexpectedEof => None,
        (_, Some(e)) if e.kind() == io::ErrorKind::ConnectionReset => None,
        (_, Some(e)) => Some(Diff::error("close", expected, &e)),
        (extra, None) => Some(Diff::new(
            "close",
            expected,
            format!("more bytes: {}", super::diff::quote(&extra)),
        )),
    }
}

/// Opens `n` connections at once, then sends a distinct message on each and reads it back.
pub fn check_concurrent(addr: SocketAddr, n: usize) -> Check {
    let name = format!("{n} concurrent echo connections");
    let mut conns = Vec::with_capacity(n);
    for i in 0..n {
        match connect(addr) {
            Ok(s) => conns.push(s),
            Err(e) => {
                let what = format!("connection {} of {n}", i + 1);
                return Check::new(name, vec![Diff::error(what, "connected", &e)]);
            }
        }
    }
    for (i, s) in conns.iter_mut().enumerate() {
        if let Err(e) = s.write_all(message(i).as_bytes()) {
            let what = format!("connection {} of {n}", i + 1);
            return Check::new(name, vec![Diff::error(what, "write accepted", &e)]);
        }
    }
    for (i, s) in conns.iter_mut().enumerate() {
        let expected = message(i);
        let (got, err) = read_len(s, expected.len());
        let what = format!("connection {} of {n}", i + 1);
        if let Some(e) = err {
            let got = format!("{} (then {e})", super::diff::quote(&got));
            return Check::new(
                name,
                vec![Diff::new(
                    what,
                    super::diff::quote(expected.as_bytes()),
                    got,
                )],
            );
        }
        if let Some(d) = Diff::bytes(&what, expected.as_bytes(), &got) {
            return Check::new(name, vec![d]);
        }
    }
    Check::pass(name)
}

fn message(i: usize) -> String {
    format!("serverbench connection {i:03}\n")
}

fn human(len: usize) -> String {
    match len {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1024 && n % 1024 == 0 => format!("{} KiB", n >> 10),
        1 => "1 byte".into(),
        n => format!("{n} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn echo_server(mangle: bool) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { return };
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    loop {
                        match s.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => {
                                if mangle {
                                    buf[0] = b'!';
                                }
                                let _ = s.write_all(&buf[..n]);
                            }
                        }
                    }
                });
            }
        });
        addr
    }

    #[test]
    fn a_correct_echo_server_passes_every_size() {
        let addr = echo_server(false);
        for len in [1, 65536, 1 << 20] {
            let c = check_echo(addr, len);
            assert!(c.passed(), "{c:?}");
        }
        assert!(check_concurrent(addr, 20).passed());
    }

    #[test]
    fn a_mangling_echo_server_fails_with_a_diff() {
        let addr = echo_server(true);
        let c = check_echo(addr, 1);
        assert!(!c.passed());
        assert_eq!(c.diffs[0].what, "echoed bytes");
    }

    #[test]
    fn sizes_read_as_words() {
        assert_eq!(human(1), "1 byte");
        assert_eq!(human(65536), "64 KiB");
        assert_eq!(human(1 << 20), "1 MiB");
    }
}
