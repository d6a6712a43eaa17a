//! TLS for verify's HTTPS and h2 checks: a rustls client (the ring provider, as the
//! engine's) that trusts exactly the run's certificate (or, for `verify --url -k`, any), offers
//! the ALPN a check asks for (none for HTTP/1.0: servers refuse an `http/1.0` offer), and says
//! what was negotiated. [`TlsClient::connect`] is blocking, for the HTTP/1.1 client in
//! [`crate::http`]; the h2 checks hand [`TlsClient::config`] to tokio-rustls.

use crate::timeouts::IO_TIMEOUT;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, CommonState, DigitallySignedStruct, SignatureScheme};
use std::fmt;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;

/// What the client trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// Exactly the certificate(s) in this PEM file (the run's own, or `--cacert`).
    Cert(PathBuf),
    /// Any certificate (`verify --url -k`): the handshake's signatures are still checked.
    Any,
}

/// Where a server serves TLS and how to trust it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsTarget {
    /// `HOST:TLS_PORT`.
    pub addr: SocketAddr,
    /// The name the certificate must be valid for (an IP literal or a DNS name).
    pub server_name: String,
    /// What the client trusts.
    pub trust: Trust,
}

impl TlsTarget {
    /// A target at `addr` whose certificate is `cert` (a PEM file), valid for `host`.
    pub fn with_cert(addr: SocketAddr, host: &str, cert: impl Into<PathBuf>) -> TlsTarget {
        TlsTarget {
            addr,
            server_name: host.to_owned(),
            trust: Trust::Cert(cert.into()),
        }
    }
}

/// Why a TLS client could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate file could not be read.
    #[error("cannot read the certificate {}: {source}", path.display())]
    ReadCert {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: rustls::pki_types::pem::Error,
    },
    /// The file holds no usable certificate.
    #[error("{}: {message}", path.display())]
    BadCert {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The host is not a name a certificate can be for.
    #[error("`{name}` is not a TLS server name: {source}")]
    ServerName {
        /// The host.
        name: String,
        /// The cause.
        source: rustls::pki_types::InvalidDnsNameError,
    },
    /// rustls refused the configuration.
    #[error("TLS client configuration: {0}")]
    Config(#[from] rustls::Error),
}

/// The TLS versions a client offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Versions {
    /// TLS 1.3 and 1.2 (the server picks).
    Any,
    /// TLS 1.2 only.
    Tls12,
    /// TLS 1.3 only.
    Tls13,
}

/// A client configuration (trust, versions, ALPN) and the server name it connects to.
#[derive(Debug, Clone)]
pub struct TlsClient {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
}

impl TlsClient {
    /// A client for `target` offering `alpn` (empty: no ALPN extension) and `versions`.
    pub fn new(target: &TlsTarget, alpn: &[&[u8]], versions: Versions) -> Result<Self, TlsError> {
        let provider = Arc::new(ring::default_provider());
        let protocols: &[&'static rustls::SupportedProtocolVersion] = match versions {
            Versions::Any => rustls::DEFAULT_VERSIONS,
            Versions::Tls12 => &[&rustls::version::TLS12],
            Versions::Tls13 => &[&rustls::version::TLS13],
        };
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(protocols)?;
        let mut config = match &target.trust {
            Trust::Cert(path) => builder
                .with_root_certificates(roots(path)?)
                .with_no_client_auth(),
            Trust::Any => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AcceptAny(provider)))
                .with_no_client_auth(),
        };
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let bare = target
            .server_name
            .trim_start_matches('[')
            .trim_end_matches(']');
        let name =
            ServerName::try_from(bare.to_owned()).map_err(|source| TlsError::ServerName {
                name: target.server_name.clone(),
                source,
            })?;
        Ok(TlsClient {
            config: Arc::new(config),
            name,
        })
    }

    /// The rustls configuration (for tokio-rustls).
    pub fn config(&self) -> Arc<ClientConfig> {
        Arc::clone(&self.config)
    }

    /// The name the certificate is checked against (and sent as SNI when it is a DNS name).
    pub fn server_name(&self) -> ServerName<'static> {
        self.name.clone()
    }

    /// Connects to `addr` and completes the handshake, with [`IO_TIMEOUT`] on every step.
    pub fn connect(&self, addr: SocketAddr) -> io::Result<TlsStream> {
        let mut sock = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
        sock.set_read_timeout(Some(IO_TIMEOUT))?;
        sock.set_write_timeout(Some(IO_TIMEOUT))?;
        sock.set_nodelay(true)?;
        let mut conn = ClientConnection::new(self.config(), self.server_name())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        while conn.is_handshaking() {
            let (read, wrote) = conn.complete_io(&mut sock).map_err(handshake_error)?;
            if read == 0 && wrote == 0 && conn.is_handshaking() {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection during the TLS handshake",
                ));
            }
        }
        Ok(TlsStream::new(conn, sock))
    }
}

/// A blocking TLS connection.
pub type TlsStream = rustls::StreamOwned<ClientConnection, TcpStream>;

fn handshake_error(e: io::Error) -> io::Error {
    let kind = e.kind();
    io::Error::new(kind, format!("TLS handshake: {e}"))
}

/// A root store holding exactly the certificates of a PEM file.
fn roots(path: &PathBuf) -> Result<rustls::RootCertStore, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|source| TlsError::ReadCert {
            path: path.clone(),
            source,
        })?;
    let bad = |message: String| TlsError::BadCert {
        path: path.clone(),
        message,
    };
    if certs.is_empty() {
        return Err(bad("no PEM certificate in the file".into()));
    }
    let mut store = rustls::RootCertStore::empty();
    for c in certs {
        store.add(c).map_err(|e| bad(e.to_string()))?;
    }
    Ok(store)
}

/// What a handshake settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// `TLS 1.3` or `TLS 1.2`.
    pub version: String,
    /// The cipher suite's IANA name.
    pub cipher: String,
    /// The protocol ALPN chose, if any.
    pub alpn: Option<String>,
}

impl Negotiated {
    /// What `state` (a finished handshake) settled.
    pub fn of(state: &CommonState) -> Negotiated {
        let version = match state.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLS 1.3".to_owned(),
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLS 1.2".to_owned(),
            Some(v) => format!("{v:?}"),
            None => "none".to_owned(),
        };
        let cipher = state
            .negotiated_cipher_suite()
            .and_then(|s| s.suite().as_str())
            .unwrap_or("unknown")
            .to_owned();
        let alpn = state
            .alpn_protocol()
            .map(|p| String::from_utf8_lossy(p).into_owned());
        Negotiated {
            version,
            cipher,
            alpn,
        }
    }
}

impl fmt::Display for Negotiated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let alpn = self.alpn.as_deref().unwrap_or("none");
        write!(f, "{}, {}, ALPN {alpn}", self.version, self.cipher)
    }
}

/// `-k`: any certificate is accepted; the handshake signatures are still verified, so the
/// server must hold the key of the certificate it sends.
#[derive(Debug)]
struct AcceptAny(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
