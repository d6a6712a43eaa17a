//! `--cacert` with a server's own self-signed certificate marked CA:TRUE (as
//! `openssl req -x509` makes it): trusted as curl and OpenSSL trust it, with the name, the dates
//! and the handshake still checked. A real TLS server on loopback, the client setup the engine
//! and the contract share.

use rustls::pki_types::{PrivatePkcs8KeyDer, ServerName};
use serverbench_model::TlsVersion;
use serverbench_wire::tls::{client_config, server_name, TlsCause, TlsOptions, Trust};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;

/// A self-signed certificate for 127.0.0.1 (CA:TRUE when `ca`), valid now unless `expired`.
fn self_signed(ca: bool, expired: bool) -> (rcgen::Certificate, rcgen::KeyPair) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "127.0.0.1");
    if ca {
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    }
    if expired {
        params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        params.not_after = rcgen::date_time_ymd(2021, 1, 1);
    }
    (params.self_signed(&key).unwrap(), key)
}

/// A TLS server on loopback that answers one line per connection; serves `cert`.
fn server(cert: &rcgen::Certificate, key: &rcgen::KeyPair) -> SocketAddr {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
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
                let _ = s.write_all(b"hello\n").and_then(|()| s.flush());
                s.conn.send_close_notify();
                let _ = s.flush();
            });
        }
    });
    addr
}

/// Handshakes with `--cacert FILE` (the PEM `cacert`) asking for `name`; the cause on failure.
fn connect(addr: SocketAddr, cacert: &str, name: &str) -> Result<String, TlsCause> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cert.pem");
    std::fs::write(&file, cacert).unwrap();
    let opts = TlsOptions {
        trust: Trust::CaFile(file),
        ..Default::default()
    };
    let config = Arc::new(client_config(&opts, &[]).unwrap());
    let name: ServerName<'static> = server_name(name).unwrap();
    let conn = rustls::ClientConnection::new(config, name).unwrap();
    let mut s = rustls::StreamOwned::new(conn, TcpStream::connect(addr).unwrap());
    let mut line = String::new();
    match s.read_to_string(&mut line) {
        Ok(_) => Ok(line),
        Err(e) => {
            let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
            Err(inner.map_or(TlsCause::Other, TlsCause::of))
        }
    }
}

#[test]
fn a_self_signed_ca_true_certificate_given_with_cacert_is_trusted() {
    let (cert, key) = self_signed(true, false);
    let addr = server(&cert, &key);
    assert_eq!(
        connect(addr, &cert.pem(), "127.0.0.1"),
        Ok("hello\n".into())
    );
}

#[test]
fn a_self_signed_certificate_without_ca_true_is_trusted_as_before() {
    let (cert, key) = self_signed(false, false);
    let addr = server(&cert, &key);
    assert_eq!(
        connect(addr, &cert.pem(), "127.0.0.1"),
        Ok("hello\n".into())
    );
}

#[test]
fn the_trusted_self_signed_certificate_must_still_name_the_host() {
    let (cert, key) = self_signed(true, false);
    let addr = server(&cert, &key);
    let cause = connect(addr, &cert.pem(), "localhost").unwrap_err();
    assert_eq!(cause, TlsCause::NameMismatch);
    assert!(cause.hint().unwrap().contains("subjectAltName"));
}

#[test]
fn an_expired_self_signed_ca_true_certificate_is_refused_as_expired() {
    let (cert, key) = self_signed(true, true);
    let addr = server(&cert, &key);
    assert_eq!(
        connect(addr, &cert.pem(), "127.0.0.1"),
        Err(TlsCause::Expired)
    );
}

#[test]
fn another_self_signed_ca_true_certificate_is_named_with_the_flag_that_fixes_it() {
    let (served, key) = self_signed(true, false);
    let (other, _) = self_signed(true, false);
    let addr = server(&served, &key);
    let cause = connect(addr, &other.pem(), "127.0.0.1").unwrap_err();
    assert_eq!(cause, TlsCause::CaAsServerCertificate);
    assert_eq!(cause.to_string(), "certificate is a CA certificate");
    assert!(cause.hint().unwrap().contains("--cacert FILE"));
}

#[test]
fn versions_are_spelled_as_openssl_spells_them_and_parsed_as_the_flag_gives_them() {
    assert_eq!(TlsVersion::V1_3.to_string(), "TLSv1.3");
    assert_eq!("1.2".parse(), Ok(TlsVersion::V1_2));
    assert_eq!("TLSv1.3".parse(), Ok(TlsVersion::V1_3));
}
