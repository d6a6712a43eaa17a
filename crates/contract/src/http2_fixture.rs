//! Tests of the HTTP/2 checks ([`crate::http2`]) against an in-process `h2` server (cleartext
//! with prior knowledge, or behind tokio-rustls with ALPN), correct by default, with flaws an
//! HTTP/2 server can have switched on.

use super::checks::payload;
use super::http2::{check_all, Transport};
use super::tls::TlsClient;
use super::tls_fixture::TestCert;
use super::Check;
use bytes::Bytes;
use serverbench_model::Feature;
use std::net::SocketAddr;
use std::sync::Arc;

/// What the server gets wrong (nothing by default).
#[derive(Debug, Clone, Copy, Default)]
struct Flaws {
    /// SETTINGS_MAX_CONCURRENT_STREAMS (a limit, not a flaw: the client must respect it).
    max_streams: Option<u32>,
    /// Resets every stream after the first n of a connection with REFUSED_STREAM.
    refuse_after: Option<usize>,
    /// Ends the 1 MiB body after half of it.
    truncates_payload: bool,
}

/// Starts the server on a free local port, behind TLS when `tls` is given.
fn serve(flaws: Flaws, tls: Option<Arc<rustls::ServerConfig>>) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
            while let Ok((sock, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    match acceptor {
                        None => connection(sock, flaws).await,
                        Some(a) => {
                            if let Ok(s) = a.accept(sock).await {
                                connection(s, flaws).await;
                            }
                        }
                    }
                });
            }
        });
    });
    addr
}

async fn connection<T>(io: T, f: Flaws)
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut builder = h2::server::Builder::new();
    if let Some(m) = f.max_streams {
        builder.max_concurrent_streams(m);
    }
    let Ok(mut conn) = builder.handshake::<T, Bytes>(io).await else {
        return;
    };
    let mut seen = 0;
    while let Some(Ok((req, mut respond))) = conn.accept().await {
        seen += 1;
        if f.refuse_after.is_some_and(|n| seen > n) {
            respond.send_reset(h2::Reason::REFUSED_STREAM);
            continue;
        }
        let (status, ctype, body) = answer(req.uri().path(), f);
        let head = http::Response::builder()
            .status(status)
            .header("content-type", ctype)
            .body(())
            .unwrap();
        if let Ok(mut send) = respond.send_response(head, false) {
            let _ = send.send_data(body, true);
        }
    }
}

fn answer(path: &str, f: Flaws) -> (u16, &'static str, Bytes) {
    let text = |s: &'static str| Bytes::from_static(s.as_bytes());
    match path {
        "/hello" => (200, "text/plain", text("Hello World!")),
        "/hey" => (200, "text/plain", text("Hey!")),
        "/hell" => (200, "text/plain", text("Hell!")),
        "/about" => (
            200,
            "text/html",
            text("<html><body>About page</body></html>"),
        ),
        "/json" => (
            200,
            "application/json",
            text(r#"{"message":"Hello, World!"}"#),
        ),
        "/payload" => {
            let p = payload();
            let p = if f.truncates_payload {
                &p[..p.len() / 2]
            } else {
                p
            };
            (200, "application/octet-stream", Bytes::from_static(p))
        }
        _ => (404, "text/plain", text("Not Found")),
    }
}

const FEATURES: [Feature; 5] = [
    Feature::Hello,
    Feature::Routes,
    Feature::Json,
    Feature::Payload,
    Feature::H2c,
];

fn h2c(flaws: Flaws) -> Vec<Check> {
    check_all(Transport::Cleartext(serve(flaws, None)), &FEATURES)
}

fn failed(checks: &[Check]) -> Vec<&str> {
    checks
        .iter()
        .filter(|c| !c.passed())
        .map(|c| c.name.as_str())
        .collect()
}

fn find<'a>(checks: &'a [Check], name: &str) -> &'a Check {
    checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name:?} in {checks:#?}"))
}

#[test]
fn a_correct_h2c_server_passes_every_check_with_all_streams_and_the_payload() {
    let checks = h2c(Flaws::default());
    assert_eq!(failed(&checks), Vec::<&str>::new(), "{checks:#?}");
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "HTTP/2 connection (preface and SETTINGS) over h2c",
            "GET /hello over h2c",
            "GET /hey over h2c",
            "GET /hell over h2c",
            "GET /about over h2c",
            "GET /json over h2c",
            "GET /payload over h2c",
            "GET /serverbench-unknown (unknown path) -> 404 over h2c",
            "GET /hel (unknown path) -> 404 over h2c",
            "50 concurrent streams on one connection over h2c",
            "GET /payload on 4 streams at once, 64 KiB windows over h2c",
        ]
    );
    let c = find(&checks, "50 concurrent streams on one connection over h2c");
    assert_eq!(
        c.note.as_deref(),
        Some("the server sets no limit on concurrent streams")
    );
}

#[test]
fn a_correct_h2_server_over_tls_passes_and_the_negotiation_is_noted() {
    let cert = TestCert::new();
    let config = cert.server_config(&[b"h2"], rustls::ALL_VERSIONS);
    let addr = serve(Flaws::default(), Some(config));
    let client = TlsClient::new(&cert.target(addr), &[b"h2"], None).unwrap();
    let checks = check_all(Transport::Tls(addr, &client), &FEATURES);
    assert_eq!(failed(&checks), Vec::<&str>::new(), "{checks:#?}");
    let c = find(&checks, "HTTP/2 connection (preface and SETTINGS) over h2");
    let note = c.note.as_deref().unwrap();
    assert!(
        note.starts_with("TLSv1.3") && note.ends_with("ALPN h2"),
        "{note}"
    );
}

#[test]
fn a_tls_server_without_h2_in_alpn_fails_the_connection_and_stops_there() {
    let cert = TestCert::new();
    let config = cert.server_config(&[b"http/1.1"], rustls::ALL_VERSIONS);
    let addr = serve(Flaws::default(), Some(config));
    let client = TlsClient::new(&cert.target(addr), &[b"h2"], None).unwrap();
    let checks = check_all(Transport::Tls(addr, &client), &FEATURES);
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert!(!checks[0].passed());
}

#[test]
fn a_server_allowing_5_streams_still_answers_all_50_and_the_limit_is_noted() {
    let checks = h2c(Flaws {
        max_streams: Some(5),
        ..Flaws::default()
    });
    assert_eq!(failed(&checks), Vec::<&str>::new(), "{checks:#?}");
    let c = find(&checks, "50 concurrent streams on one connection over h2c");
    assert_eq!(
        c.note.as_deref(),
        Some("the server allows 5 concurrent streams")
    );
}

#[test]
fn a_server_refusing_streams_after_10_fails_the_50_streams_check() {
    let checks = h2c(Flaws {
        refuse_after: Some(10),
        ..Flaws::default()
    });
    assert_eq!(
        failed(&checks),
        vec!["50 concurrent streams on one connection over h2c"]
    );
    let c = find(&checks, "50 concurrent streams on one connection over h2c");
    let last = c.diffs.last().unwrap();
    // The first of the 10 answers the request sent before the burst.
    assert_eq!(
        (last.what.as_str(), last.got.as_str()),
        ("streams that failed", "41 of 50")
    );
}

#[test]
fn a_truncated_payload_fails_the_payload_check() {
    let checks = h2c(Flaws {
        truncates_payload: true,
        ..Flaws::default()
    });
    assert_eq!(failed(&checks), vec!["GET /payload over h2c"]);
    let c = find(&checks, "GET /payload over h2c");
    assert!(c.diffs[0].what.contains("byte 524288"), "{c:?}");
}
