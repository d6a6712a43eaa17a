//! The `h3` checks against the in-process fixture of [`super::fixture`]: a correct server
//! passes every check, and each flaw fails the check that is there for it, by name.

use super::fixture::{serve, Flaws};
use super::{check_all, StopWatch};
use crate::tls_fixture::TestCert;
use crate::Check;
use serverbench_model::Feature;
use std::time::Duration;

const FEATURES: [Feature; 5] = [
    Feature::Hello,
    Feature::Json,
    Feature::Payload,
    Feature::Upload,
    Feature::Tls,
];

fn failed(checks: &[Check]) -> Vec<&str> {
    checks
        .iter()
        .filter(|c| !c.passed())
        .map(|c| c.name.as_str())
        .collect()
}

fn find<'a>(checks: &'a [Check], start: &str) -> &'a Check {
    checks
        .iter()
        .find(|c| c.name.starts_with(start))
        .unwrap_or_else(|| panic!("no check {start}: {checks:#?}"))
}

#[test]
fn a_correct_http3_server_passes_every_check_and_the_handshake_is_noted() {
    let cert = TestCert::new();
    let f = serve(&cert, Flaws::default());
    let checks = check_all(&f.target, &FEATURES);
    assert!(failed(&checks).is_empty(), "{checks:#?}");
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "QUIC handshake (TLS 1.3, ALPN h3) over h3",
            "GET /hello over h3",
            "GET /json over h3",
            "GET /payload over h3",
            "GET /serverbench-unknown (unknown path) -> 404 over h3",
            "GET /hel (unknown path) -> 404 over h3",
            "100 concurrent requests on one connection over h3",
            "GET /payload (1 MiB) on 4 streams at once over h3",
            "POST /upload 1 MiB -> 1048576 over h3",
            "request without :path -> H3_MESSAGE_ERROR or 400, then the connection serves over h3",
            "TLS_PORT answers with Alt-Svc: h3=\":H3_PORT\" over h3",
        ]
    );
    let note = checks[0].note.as_deref().unwrap();
    assert!(
        note.starts_with("QUIC v1, TLS 1.3, ") && note.ends_with("ALPN h3"),
        "{note}"
    );
    let malformed = find(&checks, "request without :path");
    assert_eq!(
        malformed.note.as_deref(),
        Some("the stream reset with H3_MESSAGE_ERROR")
    );
    f.stop();
}

#[test]
fn a_server_without_alpn_h3_fails_the_handshake_and_nothing_runs_after_it_but_alt_svc() {
    let cert = TestCert::new();
    let f = serve(
        &cert,
        Flaws {
            no_h3_alpn: true,
            ..Flaws::default()
        },
    );
    let checks = check_all(&f.target, &FEATURES);
    assert_eq!(
        failed(&checks),
        vec!["QUIC handshake (TLS 1.3, ALPN h3) over h3"],
        "{checks:#?}"
    );
    assert_eq!(checks.len(), 2, "{checks:#?}");
    let d = &checks[0].diffs[0];
    assert!(d.got.contains("QUIC"), "{d:?}");
}

#[test]
fn a_wrong_body_fails_its_endpoint_check_by_name() {
    let cert = TestCert::new();
    let f = serve(
        &cert,
        Flaws {
            wrong_body: true,
            ..Flaws::default()
        },
    );
    let checks = check_all(&f.target, &[Feature::Hello, Feature::Json, Feature::Tls]);
    assert_eq!(failed(&checks), vec!["GET /hello over h3"], "{checks:#?}");
    let got = &find(&checks, "GET /hello").diffs[0].got;
    assert!(got.contains("Hello World?"), "{got}");
}

#[test]
fn a_tls_port_without_alt_svc_fails_the_alt_svc_check_by_name() {
    let cert = TestCert::new();
    let f = serve(
        &cert,
        Flaws {
            no_alt_svc: true,
            ..Flaws::default()
        },
    );
    let checks = check_all(&f.target, &[Feature::Hello, Feature::Tls]);
    assert_eq!(
        failed(&checks),
        vec!["TLS_PORT answers with Alt-Svc: h3=\":H3_PORT\" over h3"],
        "{checks:#?}"
    );
    let d = &find(&checks, "TLS_PORT answers").diffs[0];
    assert_eq!(d.got, "no Alt-Svc header");
    assert_eq!(d.expected, format!("h3=\":{}\"", f.target.addr.port()));
}

#[test]
fn a_malformed_request_answered_200_fails_the_malformed_check_by_name() {
    let cert = TestCert::new();
    let f = serve(
        &cert,
        Flaws {
            lenient: true,
            ..Flaws::default()
        },
    );
    let checks = check_all(&f.target, &[Feature::Hello, Feature::Tls]);
    let malformed = find(&checks, "request without :path");
    assert!(!malformed.passed(), "{checks:#?}");
    assert_eq!(
        malformed.diffs.len(),
        1,
        "the next request is answered: {malformed:?}"
    );
    assert_eq!(malformed.diffs[0].got, "answered 200");
    assert!(find(&checks, "GET /hello over h3").passed());
}

#[test]
fn the_stop_watch_passes_a_goaway_and_fails_a_code_0_close_or_silence() {
    let cert = TestCert::new();
    let wait = Duration::from_secs(2);
    let f = serve(&cert, Flaws::default());
    let watch = StopWatch::open(&f.target);
    f.stop();
    let c = watch.check(wait);
    assert!(c.passed(), "{c:?}");
    assert!(c.note.as_deref().unwrap().starts_with("GOAWAY"), "{c:?}");

    let f = serve(
        &cert,
        Flaws {
            close_code_0: true,
            ..Flaws::default()
        },
    );
    let watch = StopWatch::open(&f.target);
    f.stop();
    let c = watch.check(wait);
    assert_eq!(
        c.name,
        "GOAWAY or CONNECTION_CLOSE (H3_NO_ERROR) when the server stops over h3"
    );
    assert!(c.diffs[0].got.contains("code 0x0"), "{c:?}");

    let f = serve(
        &cert,
        Flaws {
            silent_stop: true,
            ..Flaws::default()
        },
    );
    let watch = StopWatch::open(&f.target);
    f.stop();
    let c = watch.check(Duration::from_millis(500));
    assert!(c.diffs[0].got.starts_with("silence"), "{c:?}");
}

#[test]
fn the_static_tree_over_h3_passes_whole_and_fails_by_name_one_byte_short() {
    let cert = TestCert::new();
    let features = [Feature::Hello, Feature::Static, Feature::Tls];
    let name = "GET /static/: the 20 files, exact bytes, Content-Type, Content-Length over h3";
    let f = serve(&cert, Flaws::default());
    let checks = check_all(&f.target, &features);
    assert!(failed(&checks).is_empty(), "{checks:#?}");
    assert!(checks.iter().any(|c| c.name == name));
    let f = serve(
        &cert,
        Flaws {
            short_static: true,
            ..Flaws::default()
        },
    );
    let checks = check_all(&f.target, &features);
    assert_eq!(failed(&checks), vec![name], "{checks:#?}");
    assert_eq!(find(&checks, "GET /static/").diffs.len(), 20);
}

#[test]
fn a_udp_port_that_never_answers_fails_the_handshake_within_5_s_naming_the_port() {
    let cert = TestCert::new();
    let f = serve(&cert, Flaws::default());
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut target = f.target.clone();
    target.addr = silent.local_addr().unwrap();
    let started = std::time::Instant::now();
    let checks = check_all(&target, &[Feature::Hello, Feature::Tls]);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    // The Alt-Svc check fails too: TLS_PORT names the fixture's own UDP port, not this one.
    assert_eq!(
        failed(&checks),
        vec![
            "QUIC handshake (TLS 1.3, ALPN h3) over h3",
            "TLS_PORT answers with Alt-Svc: h3=\":H3_PORT\" over h3"
        ]
    );
    let d = &checks[0].diffs[0];
    assert!(
        d.expected.contains(&format!("UDP {}", target.addr)),
        "{d:?}"
    );
    assert!(d.got.contains("no QUIC answer within 5 s"), "{d:?}");
}
