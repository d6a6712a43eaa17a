//! A tiny in-process WebSocket echo server for the tests of the `ws-echo` checks: correct by
//! default (on the codec's server-role decoder), with each way a server can break a rule
//! switchable on, so every check is shown to fail on the flaw it is there for.

use serverbench_wire::ws::{
    self, close, Accept, Decoded, Decoder, Head, Opcode, ProtocolError, Role,
};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What the fixture gets wrong (nothing by default).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Flaws {
    /// Leaves `Sec-WebSocket-Accept` out of its 101.
    pub(crate) no_accept: bool,
    /// Answers the accept key of another key.
    pub(crate) wrong_accept: bool,
    /// Answers the upgrade with a 200 page.
    pub(crate) answers_200: bool,
    /// Says `Sec-WebSocket-Extensions: permessage-deflate` though the client offered none.
    pub(crate) negotiates_deflate: bool,
    /// Changes the last byte of every echo.
    pub(crate) changes_echo: bool,
    /// Echoes the messages of one read in reverse order.
    pub(crate) reverses_batches: bool,
    /// Echoes each fragment as a message of its own.
    pub(crate) echoes_fragments: bool,
    /// Never answers a ping.
    pub(crate) no_pong: bool,
    /// Answers a close with this code instead of 1000.
    pub(crate) close_code: Option<u16>,
    /// Keeps the TCP connection open after its close frame.
    pub(crate) lingers_after_close: bool,
    /// Answers a plain `GET /ws` with 200.
    pub(crate) accepts_plain_get: bool,
    /// Echoes an unmasked client frame instead of closing with 1002.
    pub(crate) echoes_unmasked: bool,
    /// Sets RSV1 on its frames without any extension.
    pub(crate) sets_rsv1: bool,
    /// Closes the connection when a read ends inside a frame.
    pub(crate) needs_whole_frame: bool,
    /// Closes new connections beyond this many open ones.
    pub(crate) max_open: Option<usize>,
}

/// Starts the fixture on a free local port.
pub(crate) fn serve(flaws: Flaws) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let open = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let open = open.clone();
            if flaws
                .max_open
                .is_some_and(|m| open.load(Ordering::SeqCst) >= m)
            {
                continue; // dropped: closed
            }
            open.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let _ = serve_conn(stream, flaws);
                open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    addr
}

fn serve_conn(mut s: TcpStream, flaws: Flaws) -> io::Result<()> {
    let mut buf = Vec::new();
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        if read_more(&mut s, &mut buf)? == 0 {
            return Ok(());
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let rest = buf[end + 4..].to_vec();
    let header = |name: &str| {
        head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let upgrade = header("upgrade").is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    if !head.starts_with("GET /ws ") {
        return s.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    }
    if !upgrade {
        return s.write_all(if flaws.accepts_plain_get {
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nws"
        } else {
            b"HTTP/1.1 426 Upgrade Required\r\nUpgrade: websocket\r\nContent-Length: 0\r\n\r\n"
        });
    }
    if flaws.answers_200 {
        return s.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok",
        );
    }
    let key = header("sec-websocket-key").unwrap_or_default();
    s.write_all(&answer(&key, flaws))?;
    echo_frames(s, rest, flaws)
}

/// The 101, with the flaws of the handshake.
fn answer(key: &str, flaws: Flaws) -> Vec<u8> {
    let mut out =
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            .to_vec();
    let accept = if flaws.wrong_accept {
        Accept::of(b"another key")
    } else {
        Accept::of(key.as_bytes())
    };
    if !flaws.no_accept {
        out.extend_from_slice(format!("Sec-WebSocket-Accept: {}\r\n", accept.as_str()).as_bytes());
    }
    if flaws.negotiates_deflate {
        out.extend_from_slice(b"Sec-WebSocket-Extensions: permessage-deflate\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// What one read's frames call for.
#[derive(Default)]
struct Batch {
    messages: Vec<(Opcode, Vec<u8>)>,
    controls: Vec<u8>,
    close: Option<u16>,
}

fn echo_frames(mut s: TcpStream, mut buf: Vec<u8>, flaws: Flaws) -> io::Result<()> {
    let mut dec = Decoder::new(Role::Server);
    let mut partial: Option<(Opcode, Vec<u8>)> = None;
    loop {
        let mut batch = Batch::default();
        let mut at = 0;
        loop {
            let (op, fin, payload, len) = match dec.decode(&mut buf[at..]) {
                Ok(Decoded::Frame(f)) => (f.opcode, f.fin, f.payload(&buf[at..]).to_vec(), f.len()),
                Ok(Decoded::Incomplete { .. }) => break,
                Err(ProtocolError::UnmaskedFrame) if flaws.echoes_unmasked => {
                    let Ok(Decoded::Frame(f)) = Decoder::new(Role::Client).decode(&mut buf[at..])
                    else {
                        break;
                    };
                    (f.opcode, f.fin, f.payload(&buf[at..]).to_vec(), f.len())
                }
                Err(e) => {
                    batch.close = Some(e.close_code());
                    break;
                }
            };
            at += len;
            on_frame(&mut batch, &mut partial, (op, fin, payload), flaws);
            if batch.close.is_some() {
                break;
            }
        }
        if flaws.needs_whole_frame && at < buf.len() && batch.close.is_none() {
            return Ok(());
        }
        s.write_all(&reply(batch.messages, &batch.controls, flaws))?;
        if let Some(code) = batch.close {
            let mut out = Vec::new();
            ws::encode_close(&mut out, Some(code), b"", None);
            s.write_all(&out)?;
            if flaws.lingers_after_close {
                std::thread::sleep(std::time::Duration::from_secs(6));
            }
            return Ok(());
        }
        buf.drain(..at);
        if read_more(&mut s, &mut buf)? == 0 {
            return Ok(());
        }
    }
}

/// One decoded frame: a message to echo (reassembled unless the flaw says not), a pong, a close.
fn on_frame(
    batch: &mut Batch,
    partial: &mut Option<(Opcode, Vec<u8>)>,
    (op, fin, payload): (Opcode, bool, Vec<u8>),
    flaws: Flaws,
) {
    match op {
        Opcode::Ping if !flaws.no_pong => {
            ws::encode(
                &mut batch.controls,
                Head::server(Opcode::Pong, true),
                &payload,
            );
        }
        Opcode::Ping | Opcode::Pong => {}
        Opcode::Close => batch.close = Some(flaws.close_code.unwrap_or(close::NORMAL)),
        _ if flaws.echoes_fragments => {
            let op = if op == Opcode::Continuation {
                Opcode::Text
            } else {
                op
            };
            batch.messages.push((op, payload));
        }
        Opcode::Text | Opcode::Binary if fin => batch.messages.push((op, payload)),
        Opcode::Text | Opcode::Binary => *partial = Some((op, payload)),
        Opcode::Continuation => {
            let (first, mut data) = partial.take().unwrap_or((Opcode::Binary, Vec::new()));
            data.extend_from_slice(&payload);
            if fin {
                batch.messages.push((first, data));
            } else {
                *partial = Some((first, data));
            }
        }
    }
}

/// The echoes of one read (after its pongs), with the flaws of the echo.
fn reply(mut messages: Vec<(Opcode, Vec<u8>)>, controls: &[u8], flaws: Flaws) -> Vec<u8> {
    let mut out = controls.to_vec();
    if flaws.reverses_batches {
        messages.reverse();
    }
    for (op, mut data) in messages {
        if let (true, Some(last)) = (flaws.changes_echo, data.last_mut()) {
            *last = if *last == b'!' { b'?' } else { b'!' };
        }
        let mut head = Head::server(op, true);
        if flaws.sets_rsv1 {
            head.rsv = 0b100;
        }
        ws::encode(&mut out, head, &data);
    }
    out
}

fn read_more(s: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut chunk = [0u8; 16 * 1024];
    let n = s.read(&mut chunk)?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}
