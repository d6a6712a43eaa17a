//! The rustls `ServerConfig` for `TLS_PORT`: the PEM certificate chain and PKCS#8 key the
//! harness names in `TLS_CERT` and `TLS_KEY`, with rustls's defaults (the aws-lc-rs provider,
//! TLS 1.2 and 1.3, an in-memory session cache of 256 entries, no ticketer). actix-web adds the
//! ALPN protocols itself (`h2`, then `http/1.1`).

use std::io;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;

/// The server configuration built from the files named by `TLS_CERT` and `TLS_KEY`; the error
/// names the variable and the file that is wrong.
pub fn config_from_env() -> io::Result<ServerConfig> {
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
    ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| invalid(format!("TLS_CERT {cert_path} / TLS_KEY {key_path}: {e}")))
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
