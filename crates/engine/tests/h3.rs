//! HTTP/3 over QUIC against an in-process quinn + h3 server: streams over several connections,
//! `-R`, reset streams counted by name, a UDP port with nothing behind it, a server refusing
//! ALPN h3.

mod common;

use common::h3::*;
use common::tls::Pki;
use common::*;
use serverbench_engine::{Schedule, Stop};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn hello() -> impl Fn(u64, &str) -> H3Reply + Send + Sync + 'static {
    |_, _| H3Reply::Answer(200, b"Hello World!")
}

#[test]
fn streams_on_several_connections_are_all_answered_and_verified() {
    let pki = Pki::new();
    let (addr, seen) = h3_server(&pki, b"h3", hello());
    let mut cfg = h3_config(&format!("https://127.0.0.1:{}/hello", addr.port()), 8, &pki);
    cfg.spec.connections = 4;
    cfg.stop = Stop::Requests(2000);
    let r = run(&cfg);
    assert_eq!(
        (r.requests, r.status["200"]),
        (2000, 2000),
        "{:?}",
        r.errors
    );
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(seen.connections.load(Ordering::SeqCst), 4);
    let tls = r.tls.clone().expect("a TLS block");
    assert_eq!((tls.handshakes, tls.alpn.as_deref()), (4, Some("h3")));
    assert_eq!(tls.version.as_deref(), Some("TLSv1.3"));
    let h3 = r.http3().expect("an http3 block").clone();
    assert_eq!((h3.streams, h3.stream_resets), (8, 0));
    assert_eq!(
        h3.qpack_max_table_capacity,
        Some(0),
        "h3's default SETTINGS"
    );
    assert!(h3.quic.datagrams_sent >= 2000 / 8, "{:?}", h3.quic);
    assert!(
        h3.quic.send_calls > 0 && h3.quic.recv_calls > 0,
        "{:?}",
        h3.quic
    );
    assert!(r.latency_us.p50 > 0.0);
}

#[test]
fn a_rate_is_held_and_latency_counts_from_the_schedule() {
    let pki = Pki::new();
    let (addr, _) = h3_server(&pki, b"h3", hello());
    let mut cfg = h3_config(&format!("https://127.0.0.1:{}/hello", addr.port()), 4, &pki);
    cfg.schedule = Schedule::Rate { per_second: 500.0 };
    cfg.stop = Stop::Duration(Duration::from_secs(1));
    let r = run(&cfg);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert!(
        (400..=560).contains(&r.requests),
        "~500 in 1 s: {}",
        r.requests
    );
    assert!(r.latency_us_uncorrected.is_some());
}

#[test]
fn reset_streams_are_counted_as_h3_errors_by_name() {
    let pki = Pki::new();
    let (addr, _) = h3_server(&pki, b"h3", |n, _| match n % 4 {
        1 => H3Reply::Reset(0x10b), // H3_REQUEST_REJECTED
        _ => H3Reply::Answer(200, b"ok"),
    });
    let mut cfg = h3_config(&format!("https://127.0.0.1:{}/", addr.port()), 4, &pki);
    cfg.stop = Stop::Requests(400);
    let r = run(&cfg);
    let h3 = r.http3().unwrap().clone();
    assert!(h3.stream_resets >= 50, "{h3:?}");
    assert_eq!(h3.h3_errors["H3_REQUEST_REJECTED"], h3.stream_resets);
    assert_eq!(r.errors.protocol, h3.stream_resets, "{:?}", r.errors);
    assert!(r.status["200"] >= 250, "{:?}", r.status);
}

#[test]
fn a_udp_port_with_nothing_behind_it_is_no_answer_and_the_lap_ends_on_time() {
    let pki = Pki::new();
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port(); // bound, then closed: nothing listens there
    let mut cfg = h3_config(&format!("https://127.0.0.1:{port}/"), 1, &pki);
    cfg.spec.timeout = Duration::from_millis(200);
    cfg.stop = Stop::Duration(Duration::from_millis(700));
    let t = Instant::now();
    let r = run(&cfg);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(r.requests, 0);
    let tls = r.tls.clone().unwrap();
    assert!(tls.errors["no answer on UDP"] >= 1, "{:?}", tls.errors);
}

#[test]
fn a_server_refusing_alpn_h3_fails_every_handshake_by_name() {
    let pki = Pki::new();
    let (addr, _) = h3_server(&pki, b"h3-29", hello());
    let mut cfg = h3_config(&format!("https://127.0.0.1:{}/", addr.port()), 1, &pki);
    cfg.stop = Stop::Duration(Duration::from_millis(500));
    let r = run(&cfg);
    assert_eq!(r.requests, 0);
    let tls = r.tls.clone().unwrap();
    assert!(
        tls.errors
            .get("alpn: the server refused h3")
            .is_some_and(|n| *n >= 1),
        "{:?}",
        tls.errors
    );
}

#[test]
fn the_result_follows_the_schema() {
    let pki = Pki::new();
    let (addr, _) = h3_server(&pki, b"h3", hello());
    let mut cfg = h3_config(&format!("https://127.0.0.1:{}/hello", addr.port()), 2, &pki);
    cfg.stop = Stop::Requests(100);
    let r = run(&cfg);
    assert_schema_valid(&serde_json::to_value(&r).unwrap());
}

#[test]
fn new_conn_opens_a_quic_connection_per_request() {
    let pki = Pki::new();
    let (addr, seen) = h3_server(&pki, b"h3", hello());
    let mut cfg = h3_config(&format!("https://127.0.0.1:{}/hello", addr.port()), 4, &pki);
    cfg.lifetime = serverbench_engine::Lifetime::PerRequest;
    cfg.stop = Stop::Requests(50);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (50, 0), "{:?}", r.errors);
    let opened = seen.connections.load(Ordering::SeqCst);
    assert!(opened >= 50, "a connection per request: {opened}");
    assert!(r.tls.clone().unwrap().handshakes >= 48);
}

#[test]
fn reconnect_every_n_closes_each_connection_after_its_n_answers() {
    let pki = Pki::new();
    let (addr, seen) = h3_server(&pki, b"h3", hello());
    let mut cfg = h3_config(&format!("https://127.0.0.1:{}/hello", addr.port()), 4, &pki);
    cfg.spec.work.reconnect_every = Some(10);
    cfg.stop = Stop::Requests(200);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (200, 0), "{:?}", r.errors);
    let opened = seen.connections.load(Ordering::SeqCst);
    assert!((20..=24).contains(&opened), "10 requests each: {opened}");
}

#[test]
fn zero_rtt_sends_requests_early_on_resumed_connections_and_counts_them() {
    let pki = Pki::new();
    let (addr, _) = h3_server_early(&pki, b"h3", true, hello());
    let url = format!("https://127.0.0.1:{}/hello", addr.port());
    let mut cfg = h3_config_with(&url, 1, &pki, |s| {
        s.transport.tls_resume = Some(serverbench_model::TlsResume::Tickets);
        s.http3.zero_rtt = true;
        s.transport.new_conn = true;
    });
    cfg.spec.connections = 1;
    cfg.lifetime = serverbench_engine::Lifetime::PerRequest;
    cfg.stop = Stop::Requests(40);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (40, 0), "{:?}", r.errors);
    let z = r.http3().unwrap().zero_rtt.expect("a zero_rtt block");
    assert!(z.attempted >= 30 && z.accepted == z.attempted, "{z:?}");
    assert_eq!(r.tls.clone().unwrap().handshakes_resumed, z.accepted);
}

#[test]
fn a_server_allowing_2_streams_makes_8_wait_for_its_credit() {
    let pki = Pki::new();
    let (addr, _) = h3_server_with(&pki, b"h3", false, 2, hello());
    let mut cfg = h3_config(&format!("https://127.0.0.1:{}/hello", addr.port()), 8, &pki);
    cfg.spec.connections = 1;
    cfg.stop = Stop::Requests(100);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (100, 0), "{:?}", r.errors);
    assert_eq!(
        r.tls.clone().unwrap().handshakes,
        1,
        "one connection throughout"
    );
}

#[test]
fn a_connection_closed_with_an_h3_code_is_counted_by_name_and_replaced() {
    let pki = Pki::new();
    let (addr, seen) = h3_server(&pki, b"h3", |n, _| match n % 50 {
        49 => H3Reply::Close(0x102), // H3_INTERNAL_ERROR
        _ => H3Reply::Answer(200, b"ok"),
    });
    let mut cfg = h3_config(&format!("https://127.0.0.1:{}/", addr.port()), 1, &pki);
    cfg.spec.connections = 1;
    cfg.stop = Stop::Requests(300);
    let r = run(&cfg);
    let h3 = r.http3().unwrap().clone();
    let closes = h3.h3_errors.get("H3_INTERNAL_ERROR").copied().unwrap_or(0);
    assert!(closes >= 3, "{h3:?}");
    let opened = seen.connections.load(Ordering::SeqCst);
    assert!(
        opened >= closes,
        "a new connection after each close: {opened}"
    );
    assert_eq!(r.errors.protocol, closes, "{:?}", r.errors);
    assert!(r.status["200"] >= 250, "{:?}", r.status);
}
