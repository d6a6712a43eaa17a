//! TCP echo modes.

mod common;

use common::*;
use serverbench_engine::{Protocol, Stop};
use std::time::Duration;

#[test]
fn echo_stream_counts_equal_bytes_both_ways() {
    let addr = echo_server();
    let proto = Protocol::TcpStream {
        message: b"hello world".to_vec(),
    };
    let mut cfg = base_config(addr, vec![addr.to_string()], proto);
    cfg.stop = Stop::Duration(Duration::from_millis(500));
    let r = run(&cfg);
    assert!(r.bytes_written > 100_000, "{r:?}");
    assert_eq!(r.bytes_read, r.bytes_written);
    assert_eq!(r.mode, serverbench_model::result::Mode::TcpStream);
    assert!(r.mbps_down.unwrap() > 0.0 && r.bytes_per_connection.unwrap() > 0.0);
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
    cfg.connections = 10;
    cfg.connect_rate = Some(100.0);
    cfg.stop = Stop::Duration(Duration::from_millis(200));
    let r = run(&cfg);
    assert!(r.requests > 0);
    assert_eq!(r.errors.connect, 0);
}
