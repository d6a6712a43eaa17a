//! TCP echo modes.

mod common;

use common::*;
use serverbench_engine::{Protocol, Stop};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

/// An echo server that echoes the first `echoed` bytes of each connection, then only reads.
fn echo_that_stops_after(echoed: usize) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            std::thread::spawn(move || {
                let (mut buf, mut left) = (vec![0u8; 65536], echoed);
                while let Ok(n @ 1..) = s.read(&mut buf) {
                    let back = n.min(left);
                    left -= back;
                    if s.write_all(&buf[..back]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

#[test]
fn echo_stream_counts_equal_bytes_both_ways() {
    let addr = echo_server();
    let proto = Protocol::TcpStream {
        message: b"hello world".to_vec(),
    };
    let mut cfg = base_config(addr, vec![addr.to_string()], proto);
    cfg.stop = Stop::Duration(Duration::from_millis(500));
    // The drain waits up to 10 s without an echo: the echo thread may not run on a busy machine.
    cfg.spec.timeout = Duration::from_secs(10);
    let r = run(&cfg);
    assert!(r.bytes_written > 100_000, "{r:?}");
    assert_eq!(r.bytes_read + r.bytes_in_flight().unwrap(), r.bytes_written);
    assert_eq!(
        r.bytes_read, r.bytes_written,
        "every echo drained after the end"
    );
    assert_eq!(r.mode(), serverbench_model::result::Mode::TcpStream);
    assert!(r.mbps_down().unwrap() > 0.0 && r.bytes_per_connection().unwrap() > 0.0);
}

#[test]
fn a_stream_whose_echoes_stop_reports_the_bytes_still_in_flight() {
    let addr = echo_that_stops_after(100_000);
    let proto = Protocol::TcpStream {
        message: b"hello world".to_vec(),
    };
    let mut cfg = base_config(addr, vec![addr.to_string()], proto);
    cfg.spec.connections = 1;
    cfg.spec.timeout = Duration::from_millis(100); // the drain still waits 1 s for an echo
    cfg.stop = Stop::Duration(Duration::from_millis(200));
    let r = run(&cfg);
    assert_eq!(r.bytes_read, 100_000, "{r:?}");
    let in_flight = r.bytes_in_flight().unwrap();
    assert!(in_flight > 0, "{r:?}");
    assert_eq!(r.bytes_read + in_flight, r.bytes_written, "{r:?}");
}

#[test]
fn echo_pingpong_times_every_message() {
    let addr = echo_server();
    let proto = Protocol::TcpPingPong { size: 64 };
    let mut cfg = base_config(addr, vec![addr.to_string()], proto);
    cfg.stop = Stop::Requests(1000);
    let r = run(&cfg);
    assert_eq!(r.requests, 1000);
    assert_eq!(r.bytes_read, 64_000);
    assert!(r.latency_us.max > 0.0);
    assert_eq!(r.errors.total(), 0);
}

#[test]
fn connect_rate_ramps_up_before_measuring() {
    let addr = echo_server();
    let mut cfg = base_config(
        addr,
        vec![addr.to_string()],
        Protocol::TcpPingPong { size: 8 },
    );
    cfg.spec.connections = 10;
    cfg.spec.connect_rate = Some(100.0);
    cfg.stop = Stop::Duration(Duration::from_millis(200));
    let r = run(&cfg);
    assert!(r.requests > 0);
    assert_eq!(r.errors.connect, 0);
}
