//! TLS for verify's HTTPS and h2 checks: the engine's client setup (`serverbench_wire::tls`)
//! trusting exactly the run's certificate (or, for `verify --url -k`, any), offering the ALPN a
//! check asks for (none for HTTP/1.0: servers refuse an `http/1.0` offer). [`TlsClient::connect`] is blocking, for the HTTP/1.1 client in
//! [`crate::http`]; the h2 checks hand [`TlsClient::config`] to tokio-rustls.

use crate::timeouts::IO_TIMEOUT;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};
use serverbench_model::TlsVersion;
use serverbench_wire::tls::{client_config, server_name, FlagError, TlsOptions};
use serverbench_wire::tls::{TlsCause, Trust};
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;

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
            trust: Trust::CaFile(cert.into()),
        }
    }
}

/// Why a TLS client could not be set up: the certificate file or the name, as the engine says.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct TlsError(#[from] FlagError);

/// A client configuration (trust, versions, ALPN) and the server name it connects to.
#[derive(Debug, Clone)]
pub struct TlsClient {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
}

impl TlsClient {
    /// A client for `target` offering `alpn` (empty: no ALPN extension) and `version` (None:
    /// TLS 1.3 and 1.2, the server picks).
    pub fn new(
        target: &TlsTarget,
        alpn: &[&[u8]],
        version: Option<TlsVersion>,
    ) -> Result<Self, TlsError> {
        let opts = TlsOptions {
            trust: target.trust.clone(),
            version,
            ..Default::default()
        };
        Ok(TlsClient {
            config: Arc::new(client_config(&opts, alpn)?),
            name: server_name(&target.server_name)?,
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

/// The handshake's failure by cause, with what to do about it.
fn handshake_error(e: io::Error) -> io::Error {
    let kind = e.kind();
    let cause = e
        .get_ref()
        .and_then(|i| i.downcast_ref::<rustls::Error>())
        .map(TlsCause::of);
    match cause.and_then(|c| c.hint().map(|h| (c, h))) {
        Some((c, hint)) => io::Error::new(kind, format!("TLS handshake: {c} ({e}): {hint}")),
        None => io::Error::new(kind, format!("TLS handshake: {e}")),
    }
}
