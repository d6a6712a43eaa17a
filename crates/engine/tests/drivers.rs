//! Each protocol driver behind the seam (`engine/src/proto/`) against an in-process server,
//! with what the server saw checked against what the load counted: HTTP/1.1 keep-alive,
//! pipelined and a connection per request, HTTP/2 (h2c), TCP stream and TCP ping-pong.
//! WebSocket has tests/ws.rs. Run on io_uring by drivers_uring.rs.

mod common;

use common::http2::*;
use common::*;
use serverbench_engine::{Lifetime, Protocol, Schedule, Stop};
use serverbench_model::result::ConnectionMode;
use serverbench_model::Workload;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the HTTP/1.1 server saw.
#[derive(Default)]
struct Seen {
    connections: AtomicU64,
    requests: AtomicU64,
    /// The most requests that arrived in one read (pipelining shows as more than one).
    max_batch: AtomicU64,
}

/// An HTTP/1.1 server answering `Hello World!` to every request, counting what it sees.
fn counting_server() -> (SocketAddr, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let s = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            s.connections.fetch_add(1, Ordering::SeqCst);
            let s = s.clone();
            std::thread::spawn(move || serve(stream, &s));
        }
    });
    (addr, seen)
}

fn serve(mut sock: TcpStream, seen: &Seen) {
    let (mut pending, mut buf) = (Vec::new(), [0u8; 16384]);
    while let Ok(n @ 1..) = sock.read(&mut buf) {
        pending.extend_from_slice(&buf[..n]);
        let mut batch = 0;
        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            pending.drain(..end + 4);
            batch += 1;
        }
        seen.requests.fetch_add(batch, Ordering::SeqCst);
        seen.max_batch.fetch_max(batch, Ordering::SeqCst);
        if sock
            .write_all(&ok("Hello World!").repeat(batch as usize))
            .is_err()
        {
            return;
        }
    }
}

#[test]
fn http1_keep_alive_sends_every_request_on_its_two_connections() {
    let (addr, seen) = counting_server();
    let mut cfg = http_config(addr, &["/hello"], true);
    cfg.stop = Stop::Requests(500);
    let r = run(&cfg);
    assert_eq!((r.requests, r.status["200"]), (500, 500), "{r:?}");
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(seen.requests.load(Ordering::SeqCst), 500);
    assert_eq!(seen.connections.load(Ordering::SeqCst), 2);
    assert_eq!(
        seen.max_batch.load(Ordering::SeqCst),
        1,
        "one request at a time"
    );
    assert_eq!(r.connection_mode(), Some(ConnectionMode::KeepAlive));
}

#[test]
fn http1_pipelined_16_deep_writes_its_window_in_one_go() {
    let (addr, seen) = counting_server();
    let mut cfg = http_config(addr, &["/hello"], true);
    cfg.schedule = Schedule::ClosedLoop { depth: 16 };
    cfg.stop = Stop::Requests(3200);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (3200, 0), "{:?}", r.errors);
    assert_eq!(seen.requests.load(Ordering::SeqCst), 3200);
    assert_eq!(seen.connections.load(Ordering::SeqCst), 2);
    // A window goes out in one write; the server may still read it in pieces, but not always.
    assert_eq!(seen.max_batch.load(Ordering::SeqCst), 16);
}

#[test]
fn http1_with_a_new_connection_per_request_opens_one_for_each() {
    let (addr, seen) = counting_server();
    let mut cfg = http_config(addr, &["/hello"], true);
    cfg.lifetime = Lifetime::PerRequest;
    cfg.stop = Stop::Requests(200);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (200, 0), "{:?}", r.errors);
    assert_eq!(seen.requests.load(Ordering::SeqCst), 200);
    // The two set up before the run carry the first request each: 200 in all.
    assert_eq!(seen.connections.load(Ordering::SeqCst), 200);
    assert_eq!(r.connection_mode(), Some(ConnectionMode::NewConn));
    assert_eq!(r.connects, Some(198));
}

#[test]
fn http2_h2c_runs_streams_side_by_side_on_each_connection() {
    let (addr, seen) = h2_server(H2Server::default(), None, |_, _| h2_ok("Hello World!"));
    let mut cfg = h2_config(&format!("http://{addr}/hello"), 8, None);
    cfg.stop = Stop::Requests(1000);
    let r = run(&cfg);
    assert_eq!((r.requests, r.status["200"]), (1000, 1000), "{r:?}");
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(seen.requests.load(Ordering::SeqCst), 1000);
    assert_eq!(seen.connections.load(Ordering::SeqCst), 2);
    assert!(seen.max_open.load(Ordering::SeqCst) >= 2, "streams overlap");
    assert_eq!(r.http2().unwrap().protocol, "h2c");
}

#[test]
fn tcp_stream_gets_back_every_byte_it_wrote() {
    let addr = echo_server();
    let proto = Protocol::TcpStream {
        message: b"hello world".to_vec(),
    };
    let mut cfg = base_config(addr, vec![addr.to_string()], proto);
    // The drain waits up to 10 s without an echo: the echo thread may not run on a busy machine.
    cfg.spec.timeout = Duration::from_secs(10);
    let r = run(&cfg);
    assert!(r.bytes_written > 100_000, "{r:?}");
    assert_eq!(
        (r.bytes_read, r.bytes_in_flight()),
        (r.bytes_written, Some(0))
    );
    assert_eq!(
        r.requests,
        r.bytes_read / 11,
        "a request is a message echoed"
    );
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
}

#[test]
fn tcp_ping_pong_completes_one_message_per_whole_echo() {
    let addr = echo_server();
    let proto = Protocol::TcpPingPong { size: 64 };
    let mut cfg = base_config(addr, vec![addr.to_string()], proto);
    cfg.schedule = Schedule::ClosedLoop { depth: 4 };
    cfg.stop = Stop::Requests(1000);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (1000, 0), "{:?}", r.errors);
    assert_eq!((r.bytes_written, r.bytes_read), (64_000, 64_000));
    assert_eq!(r.workload(), Workload::TcpPingPong);
}
