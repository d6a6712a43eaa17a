//! The certificate and key of `TLS_CERT` and `TLS_KEY` (PEM chain, PKCS#8 key), loaded once into
//! two rustls `ServerConfig`s on the ring provider: HTTP/1.1 over TCP (ALPN `http/1.1`, TLS 1.2
//! and 1.3) and QUIC (ALPN `h3`, TLS 1.3 only, as QUIC requires). Session resumption is
//! rustls's default: an in-memory session cache of 256 entries, no ticketer.

use std::io;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;

/// The two TLS configurations.
pub struct Configs {
    /// HTTPS on `TLS_PORT`.
    pub https: Arc<ServerConfig>,
    /// QUIC on `H3_PORT`.
    pub quic: ServerConfig,
}

/// Both configurations from the files named by `TLS_CERT` and `TLS_KEY`; the error names the
/// variable and the file that is wrong.
pub fn from_env() -> io::Result<Configs> {
    let cert_path = required_var("TLS_CERT")?;
    let key_path = required_var("TLS_KEY")?;
    let chain = CertificateDer::pem_file_iter(&cert_path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| invalid(format!("TLS_CERT {cert_path}: {e}")))?;
    if chain.is_empty() {
        return Err(invalid(format!("TLS_CERT {cert_path}: no certificate in it")));
    }
    let key = PrivateKeyDer::from_pem_file(&key_path)
        .map_err(|e| invalid(format!("TLS_KEY {key_path}: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let build = |versions: &[&'static rustls::SupportedProtocolVersion], alpn: &[u8]| {
        let mut config = ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(versions)
            .map_err(|e| invalid(format!("TLS versions: {e}")))?
            .with_no_client_auth()
            .with_single_cert(chain.clone(), key.clone_key())
            .map_err(|e| invalid(format!("TLS_CERT {cert_path} / TLS_KEY {key_path}: {e}")))?;
        config.alpn_protocols = vec![alpn.to_vec()];
        Ok::<_, io::Error>(config)
    };
    let https = build(rustls::DEFAULT_VERSIONS, b"http/1.1")?;
    let mut quic = build(&[&rustls::version::TLS13], b"h3")?;
    // QUIC carries no early data here; 0-RTT stays off (rustls's default).
    quic.max_early_data_size = 0;
    Ok(Configs {
        https: Arc::new(https),
        quic,
    })
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
