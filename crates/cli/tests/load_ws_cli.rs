//! `serverbench load ws://…` end to end: the real binary against an in-process WebSocket echo
//! server (written with serverbench-wire's codec in the server role) that can be told to
//! misbehave in each way the load generator must count by cause.

use serverbench_wire::ws::{self, Accept, Decoded, Decoder, Head, Opcode, Role};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How the test server behaves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Serve {
    /// A correct echo server.
    Echo,
    /// Writes every echo one byte at a time (frames split across segments).
    Dribble,
    /// Answers the upgrade with a wrong `Sec-WebSocket-Accept`.
    WrongAccept,
    /// Answers the upgrade with `200 OK`.
    NotUpgraded,
    /// Masks its frames (a server must not).
    Masked,
    /// Changes the last byte of every echo.
    Corrupt,
    /// Sends a close 1001 after 5 echoes.
    GoingAway,
    /// Answers the 51st message with a close 1011 and keeps the TCP connection open.
    InternalError,
}

/// The close frames the clients sent to `Serve::InternalError` servers (one test uses them).
static CLIENT_CLOSES: AtomicU64 = AtomicU64::new(0);

fn ws_server(serve: Serve) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(s) = stream else { continue };
            std::thread::spawn(move || {
                let _ = serve_one(s, serve);
            });
        }
    });
    addr
}

fn serve_one(mut s: TcpStream, serve: Serve) -> std::io::Result<()> {
    s.set_nodelay(true)?;
    let mut buf = vec![0u8; 1 << 20];
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
    let head = String::from_utf8_lossy(&pending[..head_end]).to_string();
    pending.drain(..head_end);
    let key = head
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .unwrap_or_default()
        .trim()
        .to_string();
    let accept = match serve {
        Serve::WrongAccept => Accept::of(b"dGhlIHNhbXBsZSBub25jZQ=="),
        _ => Accept::of(key.as_bytes()),
    };
    if serve == Serve::NotUpgraded {
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno")?;
        return Ok(());
    }
    let answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\n\r\n",
        accept.as_str()
    );
    s.write_all(answer.as_bytes())?;
    echo_frames(s, serve, pending, buf)
}

fn echo_frames(
    mut s: TcpStream,
    serve: Serve,
    mut pending: Vec<u8>,
    mut buf: Vec<u8>,
) -> std::io::Result<()> {
    let mut decoder = Decoder::new(Role::Server);
    let mut echoed = 0;
    loop {
        let mut out = Vec::new();
        let mut pos = 0;
        while let Ok(Decoded::Frame(f)) = decoder.decode(&mut pending[pos..]) {
            let payload = pending[pos + f.payload.start..pos + f.payload.end].to_vec();
            pos += f.len();
            if serve == Serve::InternalError {
                if f.opcode == Opcode::Close {
                    CLIENT_CLOSES.fetch_add(1, Ordering::Relaxed);
                    continue; // and keep the connection open
                }
                if echoed == 50 {
                    ws::encode_close(&mut out, Some(ws::close::INTERNAL_ERROR), b"", None);
                    echoed += 1;
                    continue;
                }
                if echoed > 50 {
                    continue;
                }
            }
            let op = match f.opcode {
                Opcode::Ping => Opcode::Pong,
                Opcode::Close => {
                    ws::encode_close(&mut out, Some(ws::close::NORMAL), b"", None);
                    s.write_all(&out)?;
                    return Ok(());
                }
                op => op,
            };
            let mut payload = payload;
            if serve == Serve::Corrupt {
                if let Some(last) = payload.last_mut() {
                    *last ^= 1;
                }
            }
            let head = match serve {
                Serve::Masked => Head {
                    mask: Some([1, 2, 3, 4]),
                    ..Head::server(op, true)
                },
                _ => Head::server(op, true),
            };
            ws::encode(&mut out, head, &payload);
            echoed += 1;
            if serve == Serve::GoingAway && echoed % 5 == 0 {
                ws::encode_close(&mut out, Some(ws::close::GOING_AWAY), b"", None);
            }
        }
        pending.drain(..pos);
        if serve == Serve::Dribble {
            for b in &out {
                s.write_all(std::slice::from_ref(b))?;
            }
        } else {
            s.write_all(&out)?;
        }
        let n = s.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        pending.extend_from_slice(&buf[..n]);
    }
}

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

fn json_of(args: &[&str]) -> serde_json::Value {
    let out = serverbench(&[args, &["--json", "-q"]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() || out.status.code() == Some(6),
        "{args:?}: {err}"
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"))
}

fn url(addr: SocketAddr) -> String {
    format!("ws://{addr}/ws")
}

#[test]
fn a_ws_load_counts_every_echoed_message_and_times_the_upgrades() {
    let u = url(ws_server(Serve::Echo));
    let v = json_of(&["-c", "4", "-t", "1", "-n", "2000", &u]);
    assert_eq!(v["protocol"]["workload"], "web-socket");
    assert_eq!(v["requests"], 2000);
    assert_eq!(v["errors"]["protocol"], 0);
    let ws = &v["protocol"];
    assert_eq!(ws["message_kind"], "text");
    assert_eq!(ws["message_size"], 11);
    assert_eq!(ws["upgrades"], 4, "{ws}");
    assert!(ws["upgrade_latency_us"]["p50"].as_f64().unwrap() > 0.0);
    assert!(v["protocol"]["mbps_down"].as_f64().unwrap() > 0.0);
    assert!(v["histograms"]["upgrade_latency_us"].is_string());
}

#[test]
fn pipelined_binary_messages_split_into_single_bytes_are_still_counted_exactly() {
    let u = url(ws_server(Serve::Dribble));
    let v = json_of(&[
        "-c",
        "2",
        "-t",
        "1",
        "-p",
        "4",
        "--binary",
        "--message-size",
        "300",
        "-n",
        "400",
        &u,
    ]);
    assert_eq!(v["requests"], 400);
    assert_eq!(v["errors"]["protocol"], 0, "{}", v["protocol"]);
    assert_eq!(v["protocol"]["message_kind"], "binary");
    // Two 101 answers of 129 bytes, then 400 echoes of a 300-byte binary frame (4-byte
    // header), and no more.
    assert_eq!(v["bytes_read"], 2 * 129 + 400 * 304);
}

#[test]
fn pings_are_timed_by_their_pongs() {
    let u = url(ws_server(Serve::Echo));
    let v = json_of(&["-c", "2", "-t", "1", "--ws-ping", "-n", "300", &u]);
    assert_eq!(
        (
            v["requests"].as_u64(),
            v["protocol"]["message_kind"].as_str()
        ),
        (Some(300), Some("ping"))
    );
}

#[test]
fn reconnecting_every_ten_messages_upgrades_again_and_sees_the_servers_close_1000() {
    let u = url(ws_server(Serve::Echo));
    let v = json_of(&[
        "-c",
        "2",
        "-t",
        "1",
        "--reconnect-every",
        "10",
        "-n",
        "200",
        &u,
    ]);
    assert_eq!(v["requests"], 200);
    assert_eq!(v["errors"]["protocol"], 0, "{}", v["protocol"]);
    let upgrades = v["protocol"]["upgrades"].as_u64().unwrap();
    assert!(
        (19..=21).contains(&upgrades),
        "{upgrades} upgrades for 200 messages"
    );
    assert!(
        v["protocol"]["close_codes"]["1000"].as_u64().unwrap() >= 18,
        "{}",
        v["protocol"]
    );
}

#[test]
fn open_loop_messages_keep_their_rate_with_corrected_latency() {
    let u = url(ws_server(Serve::Echo));
    let v = json_of(&["-c", "4", "-t", "1", "-R", "500", "-d", "1s", &u]);
    let achieved = v["rate_achieved"].as_f64().unwrap();
    assert!((400.0..=600.0).contains(&achieved), "{achieved}");
    assert!(v["latency_us_uncorrected"]["p50"].as_f64().unwrap() > 0.0);
}

#[test]
fn failed_upgrades_and_protocol_errors_are_counted_by_cause() {
    let cases = [
        (Serve::WrongAccept, "upgrade_failures", "wrong accept"),
        (Serve::NotUpgraded, "upgrade_failures", "status"),
        (Serve::Masked, "protocol_errors", "masked frame"),
        (Serve::Corrupt, "protocol_errors", "wrong echo"),
        (Serve::GoingAway, "protocol_errors", "unexpected close"),
    ];
    for (serve, field, cause) in cases {
        let u = url(ws_server(serve));
        let v = json_of(&[
            "-c",
            "2",
            "-t",
            "1",
            "-d",
            "300ms",
            "--timeout",
            "200ms",
            &u,
        ]);
        let n = v["protocol"][field][cause].as_u64().unwrap_or(0);
        assert!(n > 0, "{cause}: {}", v["protocol"]);
        assert!(
            v["errors"]["protocol"].as_u64().unwrap() >= n,
            "{cause}: {}",
            v["errors"]
        );
    }
}

#[test]
fn a_server_closing_with_1001_shows_its_close_code() {
    let u = url(ws_server(Serve::GoingAway));
    let v = json_of(&["-c", "1", "-t", "1", "-d", "300ms", &u]);
    assert!(
        v["protocol"]["close_codes"]["1001"].as_u64().unwrap() > 0,
        "{}",
        v["protocol"]
    );
}

#[test]
fn bad_websocket_flags_give_one_line_naming_the_flag() {
    let cases: [(&[&str], &str); 5] = [
        (&["--http2", "ws://127.0.0.1:9/ws"], "--http2"),
        (&["-p", "0", "ws://127.0.0.1:9/ws"], "--pipeline"),
        (
            &["--message-size", "16777217", "ws://127.0.0.1:9/ws"],
            "--message-size",
        ),
        (
            &["--reconnect-every", "0", "ws://127.0.0.1:9/ws"],
            "--reconnect-every",
        ),
        (
            &["--ws-ping", "--message-size", "200", "ws://127.0.0.1:9/ws"],
            "--ws-ping",
        ),
    ];
    for (args, flag) in cases {
        let out = serverbench(&[args, &["-d", "100ms"]].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

/// A server that accepts every connection and never answers the upgrade.
fn silent_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s); // accepted, never answered
        }
    });
    addr
}

/// `load ARGS --json -q`: its exit code, its one-line complaint and its result.
fn failed_load(args: &[&str]) -> (Option<i32>, String, serde_json::Value) {
    let out = serverbench(&[args, &["--json", "-q"]].concat());
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    (out.status.code(), err, v)
}

#[test]
fn a_server_that_never_answers_the_upgrade_times_out_by_cause_and_fails_the_load() {
    let started = std::time::Instant::now();
    let (code, err, v) = failed_load(&[
        "-c",
        "2",
        "-t",
        "1",
        "-d",
        "500ms",
        "--timeout",
        "100ms",
        &url(silent_server()),
    ]);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(code, Some(6), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("no WebSocket upgrade succeeded (timeout "),
        "{err}"
    );
    let timeouts = v["protocol"]["upgrade_failures"]["timeout"]
        .as_u64()
        .unwrap_or(0);
    assert!(timeouts >= 4, "{}", v["protocol"]);
    assert_eq!(
        v["errors"]["protocol"].as_u64(),
        Some(timeouts),
        "{}",
        v["errors"]
    );
    assert_eq!(v["requests"], 0);
}

#[test]
fn upgrades_unanswered_when_a_load_shorter_than_its_timeout_ends_fail_it_too() {
    let (code, err, v) = failed_load(&["-c", "2", "-t", "1", "-d", "300ms", &url(silent_server())]);
    assert_eq!(code, Some(6), "{err}");
    assert!(err.contains("2 unanswered when the run ended"), "{err}");
    assert_eq!(v["protocol"]["upgrades_unanswered"], 2, "{}", v["protocol"]);
    let out = serverbench(&["-c", "2", "-t", "1", "-d", "300ms", &url(silent_server())]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 unanswered at the end"), "{text}");
}

#[test]
fn a_server_closing_with_1011_after_50_echoes_shows_the_code_and_an_unexpected_close() {
    let u = url(ws_server(Serve::InternalError));
    let v = json_of(&["-c", "1", "-t", "1", "-d", "600ms", &u]);
    let closes = v["protocol"]["close_codes"]["1011"].as_u64().unwrap_or(0);
    assert!(closes >= 2, "{}", v["protocol"]);
    assert_eq!(
        v["protocol"]["protocol_errors"]["unexpected close"].as_u64(),
        Some(closes),
        "{}",
        v["protocol"]
    );
    // Each connection's 50 echoes are counted, and the load went on on new connections.
    assert!(v["requests"].as_u64().unwrap() >= 50 * closes, "{v}");
    assert!(CLIENT_CLOSES.load(Ordering::Relaxed) >= closes - 1);
    let out = serverbench(&["-c", "1", "-t", "1", "-d", "300ms", &u]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let closes = text
        .lines()
        .find(|l| l.contains("Closes"))
        .unwrap_or_default();
    assert!(
        closes.contains("1011 ×") && closes.ends_with(" unexpected)"),
        "{text}"
    );
    assert!(text.contains("unexpected close"), "{text}");
}
