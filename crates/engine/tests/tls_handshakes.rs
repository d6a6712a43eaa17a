//! `--new-conn` (a connection per request, plain or TLS) and TLS session resumption.

mod common;

use common::tls::*;
use common::*;
use serverbench_engine::{Lifetime, Stop};
use serverbench_model::{TlsResume, TlsVersion};
use std::sync::atomic::Ordering;

fn hello() -> impl Fn(u64, &str) -> Reply + Send + Sync + 'static {
    |_, _| Reply::Send(ok("Hello World!"))
}

fn new_conn(pki: &Pki, resume: TlsResume, version: Option<TlsVersion>) -> ClientTls {
    ClientTls {
        resume,
        version,
        new_conn: true,
        ..ClientTls::trusting(pki)
    }
}

#[test]
fn new_conn_makes_exactly_one_handshake_per_request() {
    let pki = Pki::new();
    let (addr, seen) = https_server(ServerTls::default(), pki.localhost(), hello());
    let url = format!("https://{addr}/");
    let mut cfg = https_config(&url, new_conn(&pki, TlsResume::Off, None), true);
    cfg.stop = Stop::Requests(300);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (300, 0), "{:?}", r.errors);
    let tls = r.tls.clone().unwrap();
    assert_eq!((tls.handshakes, tls.handshakes_full), (300, 300));
    assert_eq!(seen.handshakes.load(Ordering::SeqCst), 300);
    assert_eq!(seen.max_requests_per_conn.load(Ordering::SeqCst), 1);
    assert_eq!(r.connection_mode().map(|m| m.as_str()), Some("new-conn"));
    assert!(tls.client_cpu_us_per_handshake.unwrap() > 0.0);
    assert_eq!(
        r.connects,
        Some(300 - 2),
        "the first two connected before the run"
    );
}

#[test]
fn new_conn_over_plain_http_opens_a_connection_per_request() {
    let addr = http_server(|_, _| Reply::Send(ok("Hello World!")));
    let mut cfg = http_config(addr, &["/"], true);
    cfg.lifetime = Lifetime::PerRequest;
    cfg.stop = Stop::Requests(200);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (200, 0), "{:?}", r.errors);
    assert_eq!(r.connects, Some(198));
    assert!(r.connect_latency_us.unwrap().p50 > 0.0);
    assert!(r.tls.is_none());
}

/// Runs 200 requests on one connection at a time; returns (full, resumed) as the client saw
/// them, after checking the server saw the same.
fn resumed(server: ServerTls, resume: TlsResume, version: TlsVersion) -> (u64, u64) {
    let pki = Pki::new();
    let (addr, seen) = https_server(server, pki.localhost(), hello());
    let mut cfg = https_config(
        &format!("https://{addr}/"),
        new_conn(&pki, resume, Some(version)),
        false,
    );
    cfg.spec.connections = 1;
    cfg.stop = Stop::Requests(200);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (200, 0), "{:?}", r.errors);
    let tls = r.tls.unwrap();
    assert_eq!(tls.resume, resume.as_str());
    assert_eq!(seen.resumed.load(Ordering::SeqCst), tls.handshakes_resumed);
    (tls.handshakes_full, tls.handshakes_resumed)
}

#[test]
fn tls13_tickets_resume_every_handshake_after_the_first() {
    let server = ServerTls {
        tickets: true,
        cache: false,
        ..Default::default()
    };
    assert_eq!(
        resumed(server, TlsResume::Tickets, TlsVersion::V1_3),
        (1, 199)
    );
}

#[test]
fn tls13_stateful_tickets_resume_too() {
    assert_eq!(
        resumed(ServerTls::default(), TlsResume::Tickets, TlsVersion::V1_3),
        (1, 199)
    );
}

#[test]
fn tls12_session_ids_resume_without_tickets() {
    assert_eq!(
        resumed(ServerTls::default(), TlsResume::Ids, TlsVersion::V1_2),
        (1, 199)
    );
}

#[test]
fn tls12_tickets_resume_when_the_server_keeps_no_session_cache() {
    let server = ServerTls {
        tickets: true,
        cache: false,
        ..Default::default()
    };
    assert_eq!(
        resumed(server, TlsResume::Tickets, TlsVersion::V1_2),
        (1, 199)
    );
}

#[test]
fn tls12_session_ids_do_not_resume_on_a_server_that_only_gives_tickets() {
    let server = ServerTls {
        tickets: true,
        cache: false,
        ..Default::default()
    };
    assert_eq!(resumed(server, TlsResume::Ids, TlsVersion::V1_2), (200, 0));
}

#[test]
fn a_server_without_tickets_or_session_cache_resumes_nothing() {
    for version in [TlsVersion::V1_2, TlsVersion::V1_3] {
        let server = ServerTls {
            tickets: false,
            cache: false,
            ..Default::default()
        };
        assert_eq!(resumed(server, TlsResume::Tickets, version), (200, 0));
    }
}

#[test]
fn resume_off_makes_every_handshake_full() {
    let server = ServerTls {
        tickets: true,
        ..Default::default()
    };
    assert_eq!(resumed(server, TlsResume::Off, TlsVersion::V1_3), (200, 0));
}

#[test]
fn many_connections_keep_resuming_as_tickets_are_used_up() {
    // Each TLS 1.3 ticket is used once; every connection must bring its successor new ones.
    let pki = Pki::new();
    let server = ServerTls {
        tickets: true,
        cache: false,
        ..Default::default()
    };
    let (addr, _) = https_server(server, pki.localhost(), hello());
    let url = format!("https://{addr}/");
    let mut cfg = https_config(&url, new_conn(&pki, TlsResume::Tickets, None), false);
    cfg.spec.connections = 20;
    cfg.stop = Stop::Requests(1000);
    let r = run(&cfg);
    let tls = r.tls.unwrap();
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!((tls.handshakes_full, tls.handshakes_resumed), (20, 980));
}
