//! A WebSocket echo server in-process (serverbench-wire's codec in the server role) that can
//! be told to fail in the ways the load must count, and a config for it.

use serverbench_engine::config::ws_target;
use serverbench_engine::Config;
use serverbench_wire::ws::{self, Accept, Decoded, Decoder, Head, Opcode, Role};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How the server behaves on each connection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WsServe {
    /// Accepts the connection and never answers the upgrade.
    NoUpgrade,
    /// Reads the upgrade and closes the connection without answering.
    CloseAtUpgrade,
    /// Echoes `echoes` messages, then answers the next with a close frame (with `code`, or
    /// none) and keeps the TCP connection open (it answers nothing more).
    CloseAfter { echoes: u64, code: Option<u16> },
    /// Echoes `echoes` messages, then closes the TCP connection without a close frame.
    EndAfter { echoes: u64 },
    /// Echoes `echoes` messages, then resets the TCP connection.
    ResetAfter { echoes: u64 },
}

/// What the server saw: the close frames the clients sent it.
#[derive(Default)]
pub struct WsSeen {
    pub client_closes: AtomicU64,
}

/// Starts the server; returns its address and what it sees.
pub fn ws_server(serve: WsServe) -> (SocketAddr, Arc<WsSeen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(WsSeen::default());
    let seen2 = seen.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            if serve == WsServe::NoUpgrade {
                held.push(s);
                continue;
            }
            let seen = seen2.clone();
            std::thread::spawn(move || {
                let _ = serve_one(s, serve, &seen);
            });
        }
    });
    (addr, seen)
}

fn serve_one(mut s: TcpStream, serve: WsServe, seen: &WsSeen) -> std::io::Result<()> {
    s.set_nodelay(true)?;
    let mut buf = vec![0u8; 1 << 16];
    let mut pending = Vec::new();
    let head_end = loop {
        let n = s.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        pending.extend_from_slice(&buf[..n]);
        if let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    if serve == WsServe::CloseAtUpgrade {
        return Ok(());
    }
    let head = String::from_utf8_lossy(&pending[..head_end]).to_string();
    pending.drain(..head_end);
    let key = head
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .unwrap_or_default()
        .trim()
        .to_string();
    let answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\n\r\n",
        Accept::of(key.as_bytes()).as_str()
    );
    s.write_all(answer.as_bytes())?;
    let mut decoder = Decoder::new(Role::Server);
    let mut echoed = 0;
    let mut closed = false;
    loop {
        let mut out = Vec::new();
        let mut pos = 0;
        while let Ok(Decoded::Frame(f)) = decoder.decode(&mut pending[pos..]) {
            let payload = pending[pos + f.payload.start..pos + f.payload.end].to_vec();
            pos += f.len();
            match (f.opcode, serve) {
                (Opcode::Close, _) => {
                    seen.client_closes.fetch_add(1, Ordering::Relaxed);
                }
                _ if closed => {}
                (_, WsServe::CloseAfter { echoes, code }) if echoed == echoes => {
                    ws::encode_close(&mut out, code, b"", None);
                    closed = true;
                }
                (_, WsServe::EndAfter { echoes }) if echoed == echoes => return Ok(()),
                (_, WsServe::ResetAfter { echoes }) if echoed == echoes => {
                    super::reset(&s);
                    return Ok(());
                }
                (op, _) => {
                    ws::encode(&mut out, Head::server(op, true), &payload);
                    echoed += 1;
                }
            }
        }
        pending.drain(..pos);
        s.write_all(&out)?;
        let n = s.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        pending.extend_from_slice(&buf[..n]);
    }
}

/// A `ws://` config for `addr`: 1 thread, 1 connection, text "hello world", closed loop.
pub fn ws_config(addr: SocketAddr) -> Config {
    let mut spec = serverbench_model::LoadSpec::default();
    spec.at_urls(&[format!("ws://{addr}/ws")]).unwrap();
    let target = ws_target(&spec).unwrap();
    let mut cfg = super::base_config(target.addr, spec.urls(), target.protocol);
    cfg.spec.connections = 1;
    cfg
}
