//! Tests of the checks over TLS ([`crate::over_tls`]) against the HTTP fixture of
//! [`crate::fixture`] behind an in-process rustls server with a certificate generated per test:
//! every check passes on a correct server, and each fails on the flaw it is there for.

use super::fixture::{serve_wrapped, Flaws, Io};
use super::over_tls::check_all;
use super::tls::TlsTarget;
use super::Check;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};
use serverbench_model::Feature;
use serverbench_wire::tls::Trust;
use std::net::SocketAddr;
use std::sync::Arc;

/// A certificate for 127.0.0.1, its key, and the PEM file a client trusts.
pub(crate) struct TestCert {
    _dir: tempfile::TempDir,
    pub(crate) pem: std::path::PathBuf,
    der: CertificateDer<'static>,
    key: Vec<u8>,
}

impl TestCert {
    pub(crate) fn new() -> TestCert {
        let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let pem = dir.path().join("cert.pem");
        std::fs::write(&pem, ck.cert.pem()).unwrap();
        TestCert {
            _dir: dir,
            pem,
            der: ck.cert.der().clone(),
            key: ck.key_pair.serialize_der(),
        }
    }

    /// A server configuration with this certificate, `alpn` and `versions`.
    pub(crate) fn server_config(
        &self,
        alpn: &[&[u8]],
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> Arc<ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key.clone()));
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![self.der.clone()], key)
            .unwrap();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Arc::new(config)
    }

    /// A target at `addr` trusting this certificate.
    pub(crate) fn target(&self, addr: SocketAddr) -> TlsTarget {
        TlsTarget::with_cert(addr, "127.0.0.1", &self.pem)
    }
}

/// How the TLS side of the fixture is set up.
#[derive(Clone, Copy)]
struct Tls {
    alpn: &'static [&'static [u8]],
    versions: &'static [&'static rustls::SupportedProtocolVersion],
}

const GOOD: Tls = Tls {
    alpn: &[b"http/1.1"],
    versions: rustls::ALL_VERSIONS,
};

/// The fixture with `flaws` behind TLS set up as `tls`, serving `cert`.
fn serve_tls(cert: &TestCert, tls: Tls, flaws: Flaws) -> SocketAddr {
    let config = cert.server_config(tls.alpn, tls.versions);
    serve_wrapped(
        flaws,
        Arc::new(move |sock| {
            let conn = ServerConnection::new(Arc::clone(&config)).ok()?;
            Some(Box::new(StreamOwned::new(conn, sock)) as Box<dyn Io>)
        }),
    )
}

const TLS13_ONLY: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];

const FEATURES: [Feature; 4] = [Feature::Hello, Feature::Routes, Feature::Json, Feature::Tls];

fn find<'a>(checks: &'a [Check], name: &str) -> &'a Check {
    checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name:?} in {checks:#?}"))
}

/// The names of the failed checks.
fn failed(checks: &[Check]) -> Vec<&str> {
    checks
        .iter()
        .filter(|c| !c.passed())
        .map(|c| c.name.as_str())
        .collect()
}

#[test]
fn a_correct_tls_server_passes_every_check_and_the_negotiation_is_noted() {
    let cert = TestCert::new();
    let addr = serve_tls(&cert, GOOD, Flaws::default());
    let checks = check_all(&cert.target(addr), &FEATURES);
    assert_eq!(failed(&checks), Vec::<&str>::new(), "{checks:#?}");
    assert!(checks.iter().all(|c| c.name.ends_with(" over TLS")));
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    for n in [
        "GET /about over TLS",
        "100 requests on one keep-alive connection over TLS",
        "16 mixed requests pipelined in one write over TLS",
        "HTTP/1.0 GET /hello over TLS",
        "HTTP/1.0 GET /hello with Connection: keep-alive, twice over TLS",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    let note = |n| find(&checks, n).note.clone().unwrap_or_default();
    let tls13 = note("TLSv1.3 handshake, ALPN http/1.1 offered over TLS");
    assert!(tls13.starts_with("TLSv1.3, TLS_AES_"), "{tls13}");
    assert!(tls13.ends_with("ALPN http/1.1"), "{tls13}");
    let tls12 = note("TLSv1.2 handshake, ALPN http/1.1 offered over TLS");
    assert!(tls12.starts_with("TLSv1.2, TLS_ECDHE_ECDSA_"), "{tls12}");
}

#[test]
fn a_server_without_alpn_passes_and_the_note_says_none() {
    let cert = TestCert::new();
    let tls = Tls { alpn: &[], ..GOOD };
    let checks = check_all(
        &cert.target(serve_tls(&cert, tls, Flaws::default())),
        &FEATURES,
    );
    assert_eq!(failed(&checks), Vec::<&str>::new(), "{checks:#?}");
    let c = find(&checks, "TLSv1.3 handshake, ALPN http/1.1 offered over TLS");
    assert!(c.note.as_deref().unwrap().ends_with("ALPN none"), "{c:?}");
}

#[test]
fn a_tls13_only_server_fails_the_tls12_handshake_and_nothing_else() {
    let cert = TestCert::new();
    let tls = Tls {
        versions: TLS13_ONLY,
        ..GOOD
    };
    let checks = check_all(
        &cert.target(serve_tls(&cert, tls, Flaws::default())),
        &FEATURES,
    );
    assert_eq!(
        failed(&checks),
        vec!["TLSv1.2 handshake, ALPN http/1.1 offered over TLS"]
    );
}

#[test]
fn a_server_that_speaks_only_h2_fails_the_http11_handshakes() {
    let cert = TestCert::new();
    let tls = Tls {
        alpn: &[b"h2"],
        ..GOOD
    };
    let checks = check_all(
        &cert.target(serve_tls(&cert, tls, Flaws::default())),
        &FEATURES,
    );
    let c = find(&checks, "TLSv1.3 handshake, ALPN http/1.1 offered over TLS");
    assert!(c.diffs[0].got.contains("TLS handshake"), "{c:?}");
    assert!(!find(&checks, "GET /hello over TLS").passed());
}

#[test]
fn a_certificate_other_than_the_runs_fails_every_check_but_passes_with_any_trust() {
    let (served, trusted) = (TestCert::new(), TestCert::new());
    let addr = serve_tls(&served, GOOD, Flaws::default());
    let checks = check_all(&trusted.target(addr), &FEATURES);
    let c = find(&checks, "GET /hello over TLS");
    assert!(c.diffs[0].got.contains("invalid peer certificate"), "{c:?}");
    assert!(failed(&checks).len() >= 4, "{checks:#?}");
    let mut any = trusted.target(addr);
    any.trust = Trust::Insecure;
    assert_eq!(failed(&check_all(&any, &FEATURES)), Vec::<&str>::new());
}

#[test]
fn a_missing_certificate_file_is_one_failed_check_naming_the_file() {
    let cert = TestCert::new();
    let mut target = cert.target(serve_tls(&cert, GOOD, Flaws::default()));
    target.trust = Trust::CaFile("/nonexistent/cert.pem".into());
    let checks = check_all(&target, &FEATURES);
    assert_eq!(failed(&checks), vec!["TLS client over TLS"]);
    assert!(checks[0].diffs[0].got.contains("/nonexistent/cert.pem"));
}

#[test]
fn a_missing_route_fails_its_endpoint_check_over_tls() {
    let cert = TestCert::new();
    let addr = serve_tls(&cert, GOOD, Flaws::default());
    let features = [Feature::Hello, Feature::Payload, Feature::Tls];
    let checks = check_all(&cert.target(addr), &features);
    assert_eq!(failed(&checks), vec!["GET /payload over TLS"]);
}

#[test]
fn a_server_closing_after_10_answers_silently_fails_keep_alive_over_tls() {
    let cert = TestCert::new();
    let flaws = Flaws {
        closes_after: Some(10),
        ..Flaws::default()
    };
    let checks = check_all(&cert.target(serve_tls(&cert, GOOD, flaws)), &FEATURES);
    let c = find(
        &checks,
        "100 requests on one keep-alive connection over TLS",
    );
    assert!(c.diffs[0].what.starts_with("request 11 of 100"), "{c:?}");
}

#[test]
fn a_server_reordering_pipelined_answers_fails_pipelining_over_tls() {
    let cert = TestCert::new();
    let flaws = Flaws {
        reverses_batches: true,
        ..Flaws::default()
    };
    let checks = check_all(&cert.target(serve_tls(&cert, GOOD, flaws)), &FEATURES);
    assert_eq!(
        failed(&checks),
        vec!["16 mixed requests pipelined in one write over TLS"]
    );
}

#[test]
fn http10_flaws_fail_the_http10_checks_over_tls() {
    let cert = TestCert::new();
    let open = Flaws {
        http10_keeps_open: true,
        ..Flaws::default()
    };
    let checks = check_all(&cert.target(serve_tls(&cert, GOOD, open)), &FEATURES);
    assert_eq!(failed(&checks), vec!["HTTP/1.0 GET /hello over TLS"]);
    let closes = Flaws {
        http10_always_closes: true,
        ..Flaws::default()
    };
    let checks = check_all(&cert.target(serve_tls(&cert, GOOD, closes)), &FEATURES);
    assert_eq!(
        failed(&checks),
        vec!["HTTP/1.0 GET /hello with Connection: keep-alive, twice over TLS"]
    );
}

#[test]
fn declared_deviations_cover_the_same_checks_over_tls_as_on_port() {
    use serverbench_catalog::Deviation;
    let cert = TestCert::new();
    let checks = check_all(
        &cert.target(serve_tls(&cert, GOOD, Flaws::default())),
        &FEATURES,
    );
    let covered = |d: Deviation| -> Vec<&str> {
        checks
            .iter()
            .map(|c| c.name.as_str())
            .filter(|n| d.covers(n))
            .collect()
    };
    assert_eq!(
        covered(Deviation::Http10),
        vec![
            "HTTP/1.0 GET /hello over TLS",
            "HTTP/1.0 GET /hello with Connection: keep-alive, twice over TLS"
        ]
    );
    assert_eq!(
        covered(Deviation::Http10KeepAlive),
        vec!["HTTP/1.0 GET /hello with Connection: keep-alive, twice over TLS"]
    );
    assert!(covered(Deviation::SplitRequestLine).is_empty());
    assert!(covered(Deviation::DeepPipelining).is_empty());
}
