//! HTTP/2 over TLS: h2 negotiated by ALPN, and servers that do not choose it.

mod common;

use common::http2::*;
use common::tls::Pki;
use common::*;
use serverbench_engine::Stop;

fn hello() -> impl Fn(u64, &str) -> H2Reply + Send + Sync + 'static {
    |_, _| h2_ok("Hello World!")
}

fn tls_server(alpn: &[&[u8]]) -> H2Server {
    H2Server {
        tls: Some(alpn.iter().map(|p| p.to_vec()).collect()),
        ..Default::default()
    }
}

#[test]
fn h2_is_negotiated_by_alpn_and_streams_complete() {
    let pki = Pki::new();
    let (addr, seen) = h2_server(tls_server(&[b"h2"]), Some(&pki), hello());
    let mut cfg = h2_config(&format!("https://{addr}/hello"), 10, Some(&pki));
    cfg.stop = Stop::Requests(2000);
    let r = run(&cfg);
    assert_eq!((r.requests, r.status["200"]), (2000, 2000));
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    let tls = r.tls.clone().expect("a TLS section");
    assert_eq!((tls.alpn.as_deref(), tls.handshakes), (Some("h2"), 2));
    assert_eq!(r.http2().unwrap().protocol, "h2");
    assert!(seen.max_open.load(std::sync::atomic::Ordering::SeqCst) > 1);
}

#[test]
fn a_server_choosing_no_protocol_fails_every_connection_with_the_cause() {
    let pki = Pki::new();
    let (addr, _) = h2_server(tls_server(&[]), Some(&pki), hello());
    let mut cfg = h2_config(&format!("https://{addr}/"), 4, Some(&pki));
    cfg.stop = Stop::Requests(3);
    let r = run(&cfg);
    assert_eq!(r.requests, 0);
    let tls = r.tls.unwrap();
    assert_eq!(
        tls.errors["alpn: the server did not choose h2"], r.errors.tls,
        "{tls:?}"
    );
    assert!(r.errors.tls > 0);
}

#[test]
fn a_server_offering_only_http_1_1_refuses_the_handshake() {
    let pki = Pki::new();
    let (addr, _) = h2_server(tls_server(&[b"http/1.1"]), Some(&pki), hello());
    let mut cfg = h2_config(&format!("https://{addr}/"), 4, Some(&pki));
    cfg.stop = Stop::Requests(3);
    let r = run(&cfg);
    let tls = r.tls.unwrap();
    assert_eq!((r.requests, tls.handshakes), (0, 0));
    assert!(
        tls.errors.contains_key("alert no_application_protocol"),
        "{:?}",
        tls.errors
    );
}

#[test]
fn h2_json_validates_against_the_schema() {
    let pki = Pki::new();
    let (addr, _) = h2_server(tls_server(&[b"h2", b"http/1.1"]), Some(&pki), hello());
    let r = run(&h2_config(&format!("https://{addr}/"), 2, Some(&pki)));
    let v = serde_json::to_value(&r).unwrap();
    assert_schema_valid(&v);
    assert_eq!(
        (
            v["protocol"]["protocol"].as_str(),
            v["tls"]["alpn"].as_str()
        ),
        (Some("h2"), Some("h2"))
    );
}
