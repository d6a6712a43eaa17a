//! HTTPS on `TLS_PORT`: the PEM certificate chain and PKCS#8 key the harness names in
//! `TLS_CERT` and `TLS_KEY`, loaded into a rustls `ServerConfig` with rustls's defaults (the
//! aws-lc-rs provider, TLS 1.2 and 1.3, an in-memory session cache of 256 entries, no ticketer)
//! that offers `h2` and `http/1.1` by ALPN.

use std::io;
use std::sync::Arc;

use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// ALPN protocol id of HTTP/2 over TLS.
pub const ALPN_H2: &[u8] = b"h2";
const ALPN_HTTP11: &[u8] = b"http/1.1";

/// The acceptor built from the files named by `TLS_CERT` and `TLS_KEY`; the error names the
/// variable and the file that is wrong.
pub fn acceptor_from_env() -> io::Result<TlsAcceptor> {
    let cert_path = required_var("TLS_CERT")?;
    let key_path = required_var("TLS_KEY")?;
    let chain = CertificateDer::pem_file_iter(&cert_path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| invalid(format!("TLS_CERT {cert_path}: {e}")))?;
    if chain.is_empty() {
        return Err(invalid(format!(
            "TLS_CERT {cert_path}: no certificate in it"
        )));
    }
    let key = PrivateKeyDer::from_pem_file(&key_path)
        .map_err(|e| invalid(format!("TLS_KEY {key_path}: {e}")))?;
    let mut config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| invalid(format!("TLS_CERT {cert_path} / TLS_KEY {key_path}: {e}")))?;
    config.alpn_protocols = vec![ALPN_H2.to_vec(), ALPN_HTTP11.to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn required_var(name: &str) -> io::Result<String> {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => Ok(v),
        _ => Err(invalid(format!("TLS_PORT is set but {name} is not"))),
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}
