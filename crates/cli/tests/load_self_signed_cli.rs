//! `serverbench load --cacert cert.pem` against a server whose certificate is self-signed and
//! marked CA:TRUE (what `openssl req -x509` makes): trusted as curl trusts it; without
//! `--cacert`, every handshake fails naming the cause and the flag that fixes it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Command, Output};
use std::sync::Arc;

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

/// An HTTPS `Hello World!` server with a self-signed CA:TRUE certificate for 127.0.0.1; its
/// address and the certificate's PEM file (kept alive by the TempDir).
fn self_signed_https_server() -> (SocketAddr, tempfile::TempDir, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cert.pem");
    std::fs::write(&file, cert.pem()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
        )
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            std::thread::spawn(move || {
                let mut s = rustls::StreamOwned::new(conn, stream);
                let (mut buf, mut pending) = ([0u8; 4096], Vec::new());
                while let Ok(n @ 1..) = s.read(&mut buf) {
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..i + 4);
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!";
                        if s.write_all(ok).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (addr, dir, file.to_string_lossy().into_owned())
}

#[test]
fn a_self_signed_ca_true_certificate_given_with_cacert_is_trusted_as_curl_trusts_it() {
    let (addr, _dir, cert) = self_signed_https_server();
    let url = format!("https://{addr}/hello");
    let out = serverbench(&["--cacert", &cert, "-c", "2", "-n", "100", "--json", &url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"]["200"], 100);
    assert_eq!(v["errors"]["tls"], 0);
}

#[test]
fn without_cacert_the_self_signed_certificate_fails_naming_cause_and_flags() {
    let (addr, _dir, _) = self_signed_https_server();
    let url = format!("https://{addr}/hello");
    let out = serverbench(&["-c", "1", "-n", "2", &url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("every TLS handshake failed: certificate is a CA certificate")
            && err.contains("--cacert FILE")
            && err.contains("-k/--insecure"),
        "{err}"
    );
}
