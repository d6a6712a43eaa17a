//! `verify` against the fixture servers: the reference passes, broken ones fail by name.

mod common;

use common::{fixture_paths, server};
use serverbench_contract::VerifyReport;
use serverbench_harness::verify::{verify_server, VerifyOptions};

fn verify(id: &str) -> VerifyReport {
    let (paths, cache) = fixture_paths();
    let mut opts = VerifyOptions::new(&paths);
    opts.log_dir = cache.path().to_path_buf();
    verify_server(&server(id), &paths, &opts)
}

#[test]
fn the_reference_fixture_passes_the_whole_contract() {
    let report = verify("python/good");
    assert!(report.passed(), "{:#?}", report.failure_lines());
    let names: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    for expected in [
        "GET /payload",
        "GET /pingpong",
        "100 requests on one keep-alive connection",
        "16 mixed requests pipelined in one write",
        "HTTP/1.0 GET /hello",
        "GET /hello sent 3 bytes at a time, twice on one connection",
        "GET /hello split inside a CRLF (3 writes)",
        "HTTP/1.0 GET /hello with Connection: keep-alive, twice",
        "16 requests pipelined on each of 50 connections for 2.5 s, writes cut anywhere",
        "GET /hello with an 8 KiB request head, then still serving",
        "a garbage request line, then a new connection served",
        "200 connections at once, GET /hello on each",
        "echo 1 MiB",
        "100 concurrent echo connections",
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
}

#[test]
fn a_wrong_hello_body_fails_the_hello_check_with_a_diff() {
    let report = verify("python/wrong-hello");
    assert!(!report.passed());
    let failed: Vec<&str> = report.failures().iter().map(|c| c.name.as_str()).collect();
    assert!(failed.contains(&"GET /hello"), "{failed:?}");
    let hello = report
        .checks
        .iter()
        .find(|c| c.name == "GET /hello")
        .unwrap();
    assert_eq!(hello.diffs[0].expected, "\"Hello World!\"");
    assert_eq!(hello.diffs[0].got, "\"Hello World?\"");
    assert!(report
        .checks
        .iter()
        .any(|c| c.name == "GET /hey" && c.passed()));
}

#[test]
fn a_server_without_404_fails_the_unknown_path_check() {
    let report = verify("python/no404");
    let failed: Vec<&str> = report.failures().iter().map(|c| c.name.as_str()).collect();
    assert!(
        failed.contains(&"GET /serverbench-unknown (unknown path) -> 404"),
        "{failed:?}"
    );
    let check = report.failures()[0];
    assert_eq!(
        (
            check.diffs[0].expected.as_str(),
            check.diffs[0].got.as_str()
        ),
        ("404", "200")
    );
}

#[test]
fn a_server_that_cannot_start_fails_the_start_check() {
    let report = verify("python/crash");
    assert_eq!(report.checks.len(), 1);
    assert_eq!(report.checks[0].name, "start");
    assert!(report.checks[0].diffs[0].got.contains("fatal: cannot bind"));
}

#[test]
fn a_tls_server_passes_the_contract_over_tls_with_the_certificate_verify_made() {
    let report = verify("python/good-tls");
    assert!(report.passed(), "{:#?}", report.failure_lines());
    let names: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    for expected in [
        "TLSv1.3 handshake, ALPN http/1.1 offered over TLS",
        "TLSv1.2 handshake, ALPN http/1.1 offered over TLS",
        "GET /payload over TLS",
        "100 requests on one keep-alive connection over TLS",
        "16 mixed requests pipelined in one write over TLS",
        "HTTP/1.0 GET /hello over TLS",
        "HTTP/1.0 GET /hello with Connection: keep-alive, twice over TLS",
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    let handshake = &report.checks[names
        .iter()
        .position(|n| n.starts_with("TLSv1.3 handshake"))
        .unwrap()];
    let note = handshake.note.as_deref().unwrap_or_default();
    assert!(
        note.starts_with("TLSv1.3, ") && note.ends_with(", ALPN http/1.1"),
        "{note}"
    );
}

#[test]
fn a_deviation_declared_for_port_covers_the_same_check_over_tls() {
    let report = verify("python/deviant");
    assert!(report.passed(), "{:#?}", report.failure_lines());
    let known: Vec<&str> = report
        .checks
        .iter()
        .filter(|c| c.is_known_deviation())
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        known,
        vec![
            "HTTP/1.0 GET /hello with Connection: keep-alive, twice",
            "HTTP/1.0 GET /hello with Connection: keep-alive, twice over TLS"
        ]
    );
}
