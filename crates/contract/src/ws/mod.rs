//! The `ws-echo` checks (spec/contract.md, "WebSocket echo"): the upgrade on `/ws` with its
//! accept key, text and binary echoed unchanged and in order up to 64 KiB, a burst in one
//! segment, a message split across segments, fragments reassembled, ping answered with pong,
//! close 1000 answered with close 1000, a plain `GET /ws` refused with a 4xx, an unmasked client
//! frame closed with 1002, no permessage-deflate (nor RSV1) unasked, 100 connections upgraded at
//! once. Each is a named [`Check`] whose diff names the rule broken; the client is strict about
//! every frame ([`client`], on the codec the engine shares: `serverbench_wire::ws`).

pub mod client;

use crate::diff::Diff;
use crate::http::{self, Dial};
use crate::Check;
use client::{Client, Event, Pending};
use serverbench_wire::ws::{self, close, Opcode};
use std::net::SocketAddr;
use std::time::Duration;

/// Every check's name, in the order [`check_all`] runs them (the tests name rules by these).
pub mod names {
    pub const UPGRADE: &str = "ws upgrade GET /ws: 101 with the Sec-WebSocket-Accept of the key";
    pub const TEXT: &str = "ws echo text 24 bytes";
    pub const BINARY: &str = "ws echo binary 200 bytes";
    pub const BINARY_64K: &str = "ws echo binary 64 KiB";
    pub const TEXT_64K: &str = "ws echo text 64 KiB";
    pub const BURST: &str = "ws 5 messages in one segment, echoed in order";
    pub const SPLIT: &str = "ws message split across 3 TCP segments 20 ms apart";
    pub const FRAGMENTED: &str = "ws message in 3 fragments, echoed whole";
    pub const PING: &str = "ws ping answered with a pong of the same payload";
    pub const CLOSE: &str = "ws close 1000 answered with close 1000";
    pub const PLAIN_GET: &str = "ws plain GET /ws without Upgrade refused with a 4xx";
    pub const UNMASKED: &str = "ws unmasked client frame closed with 1002";
    pub const NO_DEFLATE: &str = "ws no permessage-deflate nor RSV1 unless the client asks";
    pub const CONNECTIONS: &str = "ws 100 connections upgraded at once";
}

/// Connections of [`names::CONNECTIONS`].
pub const CONNECTIONS_AT_ONCE: usize = 100;

/// The pause between the segments of [`names::SPLIT`].
pub const SPLIT_PAUSE: Duration = Duration::from_millis(20);

/// Every `ws-echo` check against `addr` (`HOST:PORT`). When the upgrade fails, the checks that
/// need it are not run (the upgrade's diff says why), only the plain `GET`.
pub fn check_all(addr: SocketAddr) -> Vec<Check> {
    let upgrade = check_upgrade(addr);
    let upgraded = upgrade.passed();
    let mut out = vec![upgrade];
    if upgraded {
        out.push(check_echo(addr, names::TEXT, Opcode::Text, &text(24)));
        out.push(check_echo(
            addr,
            names::BINARY,
            Opcode::Binary,
            &binary(200),
        ));
        out.push(check_echo(
            addr,
            names::BINARY_64K,
            Opcode::Binary,
            &binary(64 << 10),
        ));
        out.push(check_echo(
            addr,
            names::TEXT_64K,
            Opcode::Text,
            &text(64 << 10),
        ));
        out.push(check_burst(addr));
        out.push(check_split(addr));
        out.push(check_fragmented(addr));
        out.push(check_ping(addr));
        out.push(check_close(addr));
    }
    out.push(check_plain_get(addr));
    if upgraded {
        out.push(check_unmasked(addr));
        out.push(check_no_deflate(addr));
        out.push(check_connections(addr, CONNECTIONS_AT_ONCE));
    }
    out
}

/// The quick check before a run's laps: one upgrade and one text echo.
pub fn quick(addr: SocketAddr) -> Check {
    check_echo(addr, names::TEXT, Opcode::Text, &text(24))
}

/// The upgrade alone: status 101, `Upgrade`, `Connection`, the accept key, no extension.
pub fn check_upgrade(addr: SocketAddr) -> Check {
    match Client::open(addr) {
        Ok(_) => Check::pass(names::UPGRADE),
        Err(d) => Check::new(names::UPGRADE, vec![d]),
    }
}

/// Runs `body` on an upgraded connection; a failed upgrade is the check's diff.
fn on_client(name: &str, addr: SocketAddr, body: impl FnOnce(&mut Client) -> Vec<Diff>) -> Check {
    match Client::open(addr) {
        Ok(mut c) => Check::new(name, body(&mut c)),
        Err(d) => Check::new(name, vec![d]),
    }
}

/// A write that failed, as a diff.
fn write_diff(what: &str, e: &std::io::Error) -> Vec<Diff> {
    vec![Diff::error(what, "written", e)]
}

/// One message sent, its echo expected: the same opcode and bytes.
pub fn check_echo(addr: SocketAddr, name: &str, opcode: Opcode, payload: &[u8]) -> Check {
    on_client(name, addr, |c| match c.send(opcode, payload) {
        Ok(()) => expect_echo(c, "echo", opcode, payload)
            .into_iter()
            .collect(),
        Err(e) => write_diff("message", &e),
    })
}

/// The next event must be a message of `opcode` with exactly `payload`.
fn expect_echo(c: &mut Client, what: &str, opcode: Opcode, payload: &[u8]) -> Option<Diff> {
    let expected = || format!("a {opcode} message of {} bytes", payload.len());
    match c.next_event() {
        Ok(Event::Message(op, data)) if op == opcode => Diff::bytes(what, payload, &data),
        Ok(other) => Some(Diff::new(what, expected(), other.describe())),
        Err(f) => Some(Diff::new(what, expected(), f.describe())),
    }
}

/// Five messages (text and binary) written in one segment, echoed in order.
pub fn check_burst(addr: SocketAddr) -> Check {
    let msgs: Vec<(Opcode, Vec<u8>)> = (0..5)
        .map(|i| {
            let op = if i % 2 == 0 {
                Opcode::Text
            } else {
                Opcode::Binary
            };
            (op, format!("serverbench burst message {i}").into_bytes())
        })
        .collect();
    on_client(names::BURST, addr, |c| {
        let mut segment = Vec::new();
        for (op, m) in &msgs {
            segment.extend(c.frame(*op, true, m));
        }
        if let Err(e) = c.write_raw(&segment) {
            return write_diff("5 frames", &e);
        }
        msgs.iter()
            .enumerate()
            .find_map(|(i, (op, m))| expect_echo(c, &format!("echo {} of 5", i + 1), *op, m))
            .into_iter()
            .collect()
    })
}

/// One 300-byte binary frame written in 3 segments, 20 ms apart: cut after its first byte and
/// in the middle of its payload.
pub fn check_split(addr: SocketAddr) -> Check {
    let payload = binary(300);
    on_client(names::SPLIT, addr, |c| {
        let frame = c.frame(Opcode::Binary, true, &payload);
        match c.write_split(&frame, &[1, frame.len() / 2], SPLIT_PAUSE) {
            Ok(()) => expect_echo(c, "echo", Opcode::Binary, &payload)
                .into_iter()
                .collect(),
            Err(e) => write_diff("3 segments", &e),
        }
    })
}

/// A text message sent as 3 frames (text, continuation, continuation with FIN), each its own
/// write: the echo is the whole message (in one frame or several).
pub fn check_fragmented(addr: SocketAddr) -> Check {
    let parts: [&[u8]; 3] = [b"serverbench ", b"fragmented ", b"message"];
    let whole = parts.concat();
    on_client(names::FRAGMENTED, addr, |c| {
        for (i, p) in parts.iter().enumerate() {
            let op = if i == 0 {
                Opcode::Text
            } else {
                Opcode::Continuation
            };
            let f = c.frame(op, i == 2, p);
            if let Err(e) = c.write_raw(&f) {
                return write_diff("fragment", &e);
            }
        }
        expect_echo(c, "echo of the whole message", Opcode::Text, &whole)
            .into_iter()
            .collect()
    })
}

/// A ping with a payload, answered by a pong with the same payload.
pub fn check_ping(addr: SocketAddr) -> Check {
    let payload = b"serverbench ping";
    on_client(names::PING, addr, |c| {
        if let Err(e) = c.send(Opcode::Ping, payload) {
            return write_diff("ping", &e);
        }
        let expected = format!("a pong {}", crate::diff::quote(payload));
        match c.next_event() {
            Ok(Event::Pong(p)) if p == payload => vec![],
            Ok(other) => vec![Diff::new("pong", expected, other.describe())],
            Err(f) => vec![Diff::new("pong", expected, f.describe())],
        }
    })
}

/// A close 1000, answered with a close 1000, then the server closes the TCP connection (RFC
/// 6455 §5.5.1: the server closes it first).
pub fn check_close(addr: SocketAddr) -> Check {
    on_client(names::CLOSE, addr, |c| {
        let mut frame = Vec::new();
        ws::encode_close(
            &mut frame,
            Some(close::NORMAL),
            b"",
            Some([0x5b, 0x1e, 0x0c, 0x7a]),
        );
        if let Err(e) = c.write_raw(&frame) {
            return write_diff("close", &e);
        }
        match c.next_event() {
            Ok(Event::Close(Some(close::NORMAL))) if c.closed_by_server() => vec![],
            Ok(Event::Close(Some(close::NORMAL))) => vec![Diff::new(
                "TCP connection",
                "closed by the server after its close frame",
                "still open",
            )],
            Ok(other) => vec![Diff::new("close frame", "close 1000", other.describe())],
            Err(f) => vec![Diff::new("close frame", "close 1000", f.describe())],
        }
    })
}

/// A `GET /ws` without `Upgrade`: a 4xx (426 Upgrade Required, or 400), not a page.
pub fn check_plain_get(addr: SocketAddr) -> Check {
    let name = names::PLAIN_GET;
    match http::get(Dial::tcp(addr), "/ws") {
        Ok(r) if (400..500).contains(&r.status) => Check::pass(name),
        Ok(r) => Check::new(
            name,
            vec![Diff::new(
                "status",
                "a 4xx (426 or 400)",
                r.status.to_string(),
            )],
        ),
        Err(e) => Check::new(name, vec![Diff::error("status", "a 4xx (426 or 400)", &e)]),
    }
}

/// An unmasked text frame from the client: the server fails the connection with close 1002 and
/// does not echo it.
pub fn check_unmasked(addr: SocketAddr) -> Check {
    on_client(names::UNMASKED, addr, |c| {
        let mut frame = Vec::new();
        ws::encode(
            &mut frame,
            ws::Head::server(Opcode::Text, true),
            b"unmasked",
        );
        if let Err(e) = c.write_raw(&frame) {
            return write_diff("unmasked frame", &e);
        }
        let got = match c.next_event() {
            Ok(Event::Close(Some(close::PROTOCOL_ERROR))) => return vec![],
            Ok(Event::Message(..)) => "the frame echoed".to_string(),
            Ok(other) => other.describe(),
            Err(f) => f.describe(),
        };
        vec![Diff::new("close frame", "close 1002 (protocol error)", got)]
    })
}

/// No extension offered: the upgrade negotiates none (checked by the upgrade) and a compressible
/// 4 KiB text comes back with RSV1 clear (the client's decoder allows no RSV bit).
pub fn check_no_deflate(addr: SocketAddr) -> Check {
    let payload = "serverbench compressible ".repeat(164).into_bytes();
    on_client(names::NO_DEFLATE, addr, |c| {
        match c.send(Opcode::Text, &payload) {
            Ok(()) => expect_echo(c, "echo", Opcode::Text, &payload)
                .into_iter()
                .collect(),
            Err(e) => write_diff("message", &e),
        }
    })
}

/// `n` connections: every upgrade request written before any answer is read, then a distinct
/// message on each, each echoed.
pub fn check_connections(addr: SocketAddr, n: usize) -> Check {
    let name = format!("ws {n} connections upgraded at once");
    let nth = |i: usize| format!("connection {} of {n}", i + 1);
    let mut pending = Vec::with_capacity(n);
    for i in 0..n {
        match Pending::start(addr) {
            Ok(p) => pending.push(p),
            Err(d) => return Check::new(name, vec![Diff::new(nth(i), d.expected, d.got)]),
        }
    }
    let mut clients = Vec::with_capacity(n);
    for (i, p) in pending.into_iter().enumerate() {
        match p.finish() {
            Ok(c) => clients.push(c),
            Err(d) => return Check::new(name, vec![Diff::new(nth(i), d.expected, d.got)]),
        }
    }
    for (i, c) in clients.iter_mut().enumerate() {
        if let Err(e) = c.send(Opcode::Text, message(i).as_bytes()) {
            return Check::new(name, vec![Diff::error(nth(i), "written", &e)]);
        }
    }
    for (i, c) in clients.iter_mut().enumerate() {
        if let Some(d) = expect_echo(c, &nth(i), Opcode::Text, message(i).as_bytes()) {
            return Check::new(name, vec![d]);
        }
    }
    Check::pass(name)
}

fn message(i: usize) -> String {
    format!("serverbench ws connection {i:03}")
}

/// `len` bytes of UTF-8 text with 1- to 4-byte characters (padded with ASCII to the length).
pub fn text(len: usize) -> Vec<u8> {
    let chars = [
        's', 'e', 'r', 'v', 'é', '€', '😀', ' ', 'b', 'ω', 'n', 'c', 'h',
    ];
    let mut out = String::with_capacity(len);
    for c in chars.iter().cycle() {
        if out.len() + c.len_utf8() > len {
            break;
        }
        out.push(*c);
    }
    while out.len() < len {
        out.push('.');
    }
    out.into_bytes()
}

/// `len` bytes of a varying pattern (every byte value, so reordering or masking errors show).
pub fn binary(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod tests;
