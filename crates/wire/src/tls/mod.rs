//! TLS for `https://` URLs: the options, the rustls client configuration each worker thread
//! uses, and names for what a handshake negotiated or why it failed.
//!
//! A TLS connection is a plain one whose bytes pass through a rustls `ClientConnection`
//! (the engine's `conn::tls`): the same worker loop, one transport parameter more. Nothing here
//! touches a socket.
//!
//! Crypto provider: ring, chosen by measurement against aws-lc-rs (rustls 0.23.46 in memory,
//! client and server in one thread, ECDSA P-256 certificate verified against its root, X25519;
//! median client CPU of three interleaved rounds on this 2-core machine):
//!
//! | client CPU                                       | ring 0.17 | aws-lc-rs 1.19 |
//! |--------------------------------------------------|----------:|---------------:|
//! | TLS 1.3 full handshake                           |    207 µs |         191 µs |
//! | TLS 1.3 resumed handshake                        |    105 µs |          88 µs |
//! | TLS 1.2 full handshake                           |    202 µs |         166 µs |
//! | TLS 1.2 resumed handshake                        |     14 µs |  17 µs (noise) |
//! | keep-alive request (encrypt 45 B, decrypt 170 B) |   1.25 µs |        1.34 µs |
//! | first use of the random generator, per process   |      0 ms |          23 ms |
//!
//! aws-lc-rs handshakes cost 15-35 µs less, but it seeds its generator from CPU jitter
//! entropy: 23 ms of CPU in every process, as much as 2,000 keep-alive requests, and its
//! per-record cost on small records is 7% higher. The keep-alive path is where the client
//! must stay under wrk's CPU per request; with `--new-conn` on ring serverbench already uses
//! 0.42x (full) and 0.57x (resumed) of h2load's CPU per handshake (docs/results/tls.md).
//! ring also builds in 12 s where aws-lc-sys takes 80 s, with nothing but a C compiler. Key exchange groups are pinned to
//! X25519 first whatever features other crates switch on, so a ClientHello carries one cheap
//! key share.

mod names;
mod sessions;
mod verify;

pub use names::{Cipher, Negotiated, TlsCause};

use rustls::client::Resumption;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, NamedGroup, RootCertStore};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A TLS option that cannot be used: the flag and why (the engine reports it as a
/// configuration error naming the flag).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{flag}: {why}")]
pub struct FlagError {
    pub flag: &'static str,
    pub why: String,
}

impl FlagError {
    fn new(flag: &'static str, why: impl Into<String>) -> Self {
        FlagError {
            flag,
            why: why.into(),
        }
    }
}

/// Which certificates the client trusts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Trust {
    /// The Mozilla roots compiled in (webpki-roots).
    #[default]
    WebPkiRoots,
    /// `--cacert FILE`: the PEM certificates in this file, and only those. As with curl and
    /// OpenSSL, a server certificate that is itself in the file is trusted even when it is
    /// marked CA:TRUE (a self-signed `openssl req -x509` one); name and dates are still checked.
    CaFile(PathBuf),
    /// `-k/--insecure`: any certificate for any name. Handshake signatures are still checked,
    /// so a handshake costs what a verifying client's does, minus the chain.
    Insecure,
}

// `--tls-resume` and the TLS version are the model's types, shared with the records and the CLI.
use serverbench_model::{TlsResume, TlsVersion};

/// The TLS flags, before the rustls configuration is built from them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    pub trust: Trust,
    /// None: TLS 1.3 and 1.2, the server picks.
    pub version: Option<TlsVersion>,
    pub resume: TlsResume,
}

/// A built client configuration and the name the server is asked for (SNI).
#[derive(Clone)]
pub struct TlsSpec {
    config: Arc<ClientConfig>,
    server_name: ServerName<'static>,
    pub resume: TlsResume,
}

impl fmt::Debug for TlsSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSpec")
            .field("server_name", &self.server_name)
            .field("resume", &self.resume)
            .finish_non_exhaustive()
    }
}

/// The cryptography every TLS connection uses: ring, X25519 first.
fn provider() -> Arc<CryptoProvider> {
    let mut p = rustls::crypto::ring::default_provider();
    p.kx_groups.sort_by_key(|g| g.name() != NamedGroup::X25519);
    Arc::new(p)
}

impl TlsSpec {
    /// Builds the client configuration for `host` (SNI; an IP address sends none), offering
    /// the `alpn` protocols. Errors name the flag: an unreadable or empty `--cacert`.
    pub fn new(opts: &TlsOptions, host: &str, alpn: &[&[u8]]) -> Result<TlsSpec, FlagError> {
        Ok(TlsSpec {
            config: Arc::new(client_config(opts, alpn)?),
            server_name: server_name(host)?,
            resume: opts.resume,
        })
    }

    /// A configuration for one worker thread with `connections`: the same settings with a
    /// session cache of its own, so that nothing is shared between threads on the hot path.
    pub fn thread_config(&self, connections: usize) -> Arc<ClientConfig> {
        let mut c = (*self.config).clone();
        let store = || Arc::new(sessions::Sessions::new(connections));
        c.resumption = match self.resume {
            TlsResume::Off => Resumption::disabled(),
            TlsResume::Tickets => Resumption::store(store())
                .tls12_resumption(rustls::client::Tls12Resumption::SessionIdOrTickets),
            TlsResume::Ids => Resumption::store(store())
                .tls12_resumption(rustls::client::Tls12Resumption::SessionIdOnly),
        };
        Arc::new(c)
    }

    pub fn server_name(&self) -> &ServerName<'static> {
        &self.server_name
    }
}

/// The one rustls client configuration of serverbench (the engine's and the contract's):
/// ring with X25519 first, the versions asked for, the trust, the `alpn` offer (empty: none).
/// Session resumption is the engine's business ([`TlsSpec::thread_config`]).
pub fn client_config(opts: &TlsOptions, alpn: &[&[u8]]) -> Result<ClientConfig, FlagError> {
    let versions: &[&rustls::SupportedProtocolVersion] = match opts.version {
        None => rustls::DEFAULT_VERSIONS,
        Some(TlsVersion::V1_2) => &[&rustls::version::TLS12],
        Some(TlsVersion::V1_3) => &[&rustls::version::TLS13],
    };
    let builder = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .map_err(|e| FlagError::new("--tls-version", e.to_string()))?;
    let mut config = match &opts.trust {
        Trust::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(verify::AcceptAnyCertificate::new(provider()))
            .with_no_client_auth(),
        Trust::WebPkiRoots => {
            let roots = RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        Trust::CaFile(path) => {
            let bad =
                |why: String| FlagError::new("--cacert", format!("{}: {why}", path.display()));
            let verifier = verify::CaFile::new(ca_file(path)?, provider()).map_err(bad)?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(verifier)
                .with_no_client_auth()
        }
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// The name a certificate must be valid for: a DNS name or an IP literal (`[::1]` as `::1`).
pub fn server_name(host: &str) -> Result<ServerName<'static>, FlagError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(bare.to_string())
        .map_err(|_| FlagError::new("URL", format!("`{host}` is not a valid TLS name")))
}

/// Reads `--cacert`: every PEM certificate in the file.
fn ca_file(path: &Path) -> Result<Vec<CertificateDer<'static>>, FlagError> {
    let bad = |why: String| FlagError::new("--cacert", format!("{}: {why}", path.display()));
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no PEM certificate in the file".into()));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_ca_file_names_the_flag_and_the_file() {
        let opts = TlsOptions {
            trust: Trust::CaFile("/nonexistent/ca.pem".into()),
            ..Default::default()
        };
        let err = TlsSpec::new(&opts, "localhost", &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--cacert") && err.contains("/nonexistent/ca.pem"),
            "{err}"
        );
    }

    #[test]
    fn x25519_is_offered_first() {
        assert_eq!(provider().kx_groups[0].name(), NamedGroup::X25519);
    }
}
