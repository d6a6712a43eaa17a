//! HTTPS with keep-alive connections: counts, bodies and framing over TLS, protocol versions,
//! certificate errors and servers that give up mid-handshake.

mod common;

use common::tls::*;
use common::*;
use serverbench_engine::{Schedule, Stop};
use serverbench_model::TlsVersion;
use serverbench_wire::tls::Trust;

fn hello() -> impl Fn(u64, &str) -> Reply + Send + Sync + 'static {
    |_, _| Reply::Send(ok("Hello World!"))
}

#[test]
fn keep_alive_over_tls_counts_every_response_and_checks_bodies() {
    let pki = Pki::new();
    let (addr, seen) = https_server(ServerTls::default(), pki.localhost(), hello());
    let mut cfg = https_config(
        &format!("https://{addr}/hello"),
        ClientTls::trusting(&pki),
        true,
    );
    cfg.stop = Stop::Requests(2000);
    let r = run(&cfg);
    assert_eq!((r.requests, r.status["200"]), (2000, 2000));
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    let tls = r.tls.clone().expect("a TLS section");
    assert_eq!((tls.handshakes, tls.handshakes_full), (2, 2));
    assert_eq!(seen.handshakes.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(tls.alpn.as_deref(), Some("http/1.1"));
    assert_eq!(r.connection_mode().map(|m| m.as_str()), Some("keep-alive"));
    assert!(tls.handshake_latency_us.p50 > 0.0);
    assert_eq!(tls.client_cpu_us_per_handshake, None, "keep-alive");
}

#[test]
fn pipelined_requests_over_tls_are_all_answered() {
    let pki = Pki::new();
    let (addr, _) = https_server(ServerTls::default(), pki.localhost(), hello());
    let mut cfg = https_config(&format!("https://{addr}/"), ClientTls::trusting(&pki), true);
    cfg.schedule = Schedule::ClosedLoop { depth: 16 };
    cfg.stop = Stop::Requests(8000);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (8000, 0), "{:?}", r.errors);
}

#[test]
fn large_pipelined_bodies_over_tls_arrive_whole_without_stalling() {
    // Bodies span many records: a receive low-water mark counted in plaintext would stall.
    let pki = Pki::new();
    let body = "x".repeat(100_000);
    let (addr, _) = https_server(ServerTls::default(), pki.localhost(), move |_, _| {
        Reply::Send(ok(&body))
    });
    let mut cfg = https_config(&format!("https://{addr}/"), ClientTls::trusting(&pki), true);
    cfg.schedule = Schedule::ClosedLoop { depth: 4 };
    cfg.stop = Stop::Requests(200);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (200, 0), "{:?}", r.errors);
    assert!(r.bytes_read > 200 * 100_000, "wire bytes include records");
}

#[test]
fn chunked_bodies_over_tls_complete_and_verify() {
    let pki = Pki::new();
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    let (addr, _) = https_server(ServerTls::default(), pki.localhost(), move |_, _| {
        Reply::Send(chunked.to_vec())
    });
    let mut cfg = https_config(&format!("https://{addr}/"), ClientTls::trusting(&pki), true);
    cfg.stop = Stop::Requests(500);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (500, 0), "{:?}", r.errors);
}

#[test]
fn close_delimited_bodies_over_tls_end_at_the_close() {
    let pki = Pki::new();
    let (addr, seen) = https_server(ServerTls::default(), pki.localhost(), |_, _| {
        Reply::SendClose(b"HTTP/1.1 200 OK\r\n\r\nuntil the close".to_vec())
    });
    let mut cfg = https_config(&format!("https://{addr}/"), ClientTls::trusting(&pki), true);
    cfg.stop = Stop::Requests(100);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (100, 0), "{:?}", r.errors);
    let tls = r.tls.unwrap();
    assert!(tls.handshakes >= 100, "one connection per response");
    assert_eq!(
        seen.max_requests_per_conn
            .load(std::sync::atomic::Ordering::SeqCst),
        1
    );
}

#[test]
fn tls_1_2_and_1_3_both_negotiate_and_are_recorded() {
    let pki = Pki::new();
    let (addr, _) = https_server(ServerTls::default(), pki.localhost(), hello());
    for (version, name) in [(TlsVersion::V1_2, "TLSv1.2"), (TlsVersion::V1_3, "TLSv1.3")] {
        let client = ClientTls {
            version: Some(version),
            ..ClientTls::trusting(&pki)
        };
        let r = run(&https_config(&format!("https://{addr}/"), client, false));
        assert!(
            r.requests > 0 && r.errors.total() == 0,
            "{name}: {:?}",
            r.errors
        );
        let tls = r.tls.unwrap();
        assert_eq!(tls.version.as_deref(), Some(name));
        assert_eq!(tls.key_exchange_group.as_deref(), Some("X25519"));
        let suite = tls.cipher_suite.unwrap();
        assert!(suite.starts_with("TLS_"), "{suite}");
        assert_eq!(suite.contains("ECDHE"), name == "TLSv1.2", "{suite}");
    }
}

#[test]
fn the_url_host_is_sent_as_sni() {
    let pki = Pki::new();
    let (addr, seen) = https_server(ServerTls::default(), pki.localhost(), hello());
    let url = format!("https://localhost:{}/", addr.port());
    let r = run(&https_config(&url, ClientTls::trusting(&pki), false));
    assert!(r.requests > 0, "{:?}", r.errors);
    assert_eq!(seen.sni.lock().unwrap().as_deref(), Some("localhost"));
}

#[test]
fn a_certificate_from_an_unknown_ca_gives_tls_errors_naming_the_cause() {
    let (pki, other) = (Pki::new(), Pki::new());
    let (addr, _) = https_server(ServerTls::default(), other.localhost(), hello());
    let mut cfg = https_config(
        &format!("https://{addr}/"),
        ClientTls::trusting(&pki),
        false,
    );
    cfg.stop = Stop::Requests(4); // -n counts failed attempts
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.tls), (0, 4), "{:?}", r.errors);
    let tls = r.tls.unwrap();
    assert_eq!(
        tls.errors.get("certificate unknown issuer"),
        Some(&r.errors.tls),
        "{:?}",
        tls.errors
    );
    assert_eq!(tls.version, None, "nothing was negotiated");
}

#[test]
fn a_certificate_for_another_name_gives_a_name_mismatch() {
    let pki = Pki::new();
    let (addr, _) = https_server(ServerTls::default(), pki.leaf(&["other.example"]), hello());
    let mut cfg = https_config(
        &format!("https://{addr}/"),
        ClientTls::trusting(&pki),
        false,
    );
    cfg.stop = Stop::Requests(4);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.tls), (0, 4), "{:?}", r.errors);
    let tls = r.tls.unwrap();
    assert_eq!(
        tls.errors.get("certificate name mismatch"),
        Some(&r.errors.tls)
    );
}

#[test]
fn insecure_accepts_a_certificate_nobody_vouches_for() {
    let other = Pki::new();
    let (addr, _) = https_server(
        ServerTls::default(),
        other.leaf(&["other.example"]),
        hello(),
    );
    let client = ClientTls {
        trust: Trust::Insecure,
        ..ClientTls::trusting(&other)
    };
    let r = run(&https_config(&format!("https://{addr}/"), client, false));
    assert!(r.requests > 0 && r.errors.total() == 0, "{:?}", r.errors);
}

#[test]
fn a_server_that_closes_mid_handshake_is_counted_not_fatal() {
    let pki = Pki::new();
    let tls = ServerTls {
        drop_first: 3,
        ..Default::default()
    };
    let (addr, _) = https_server(tls, pki.localhost(), hello());
    let mut cfg = https_config(
        &format!("https://{addr}/"),
        ClientTls::trusting(&pki),
        false,
    );
    cfg.stop = Stop::Requests(100); // the three failed attempts count towards -n
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.tls), (97, 3), "{:?}", r.errors);
    assert_eq!(r.tls.unwrap().errors.get("handshake eof"), Some(&3));
}

#[test]
fn at_a_low_rate_the_handshake_completes_before_any_request_is_due() {
    // The client's Finished normally rides with the first request; when none is due it must go
    // out on its own, or the server would wait for it (and time the connection out).
    let pki = Pki::new();
    let (addr, seen) = https_server(ServerTls::default(), pki.localhost(), hello());
    let mut cfg = https_config(
        &format!("https://{addr}/"),
        ClientTls::trusting(&pki),
        false,
    );
    cfg.spec.connections = 4;
    cfg.schedule = Schedule::Rate { per_second: 4.0 };
    cfg.stop = Stop::Duration(std::time::Duration::from_millis(400));
    let r = run(&cfg);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert!(r.requests <= 2, "{}", r.requests);
    assert_eq!(r.tls.unwrap().handshakes, 4);
    assert_eq!(seen.handshakes.load(std::sync::atomic::Ordering::SeqCst), 4);
}
