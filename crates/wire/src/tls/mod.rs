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
//! 0.42x (full) and 0.57x (resumed) of h2load's CPU per handshake (README, "Against wrk and
//! h2load over TLS"). ring also builds in 12 s where
//! aws-lc-sys takes 80 s, with nothing but a C compiler. Key exchange groups are pinned to
//! X25519 first whatever features other crates switch on, so a ClientHello carries one cheap
//! key share.

mod sessions;
mod verify;

use rustls::client::Resumption;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, NamedGroup, ProtocolVersion, RootCertStore};
use std::fmt;
use std::path::PathBuf;
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
    /// `--cacert FILE`: the PEM certificates in this file, and only those.
    CaFile(PathBuf),
    /// `-k/--insecure`: any certificate for any name. Handshake signatures are still checked,
    /// so a handshake costs what a verifying client's does, minus the chain.
    Insecure,
}

/// `--tls-resume`: how a new connection tries to resume an earlier session (the model's one
/// type, shared with the records and the CLI).
pub use serverbench_model::TlsResume as Resume;

/// `--tls-version`: the only protocol version offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsVersion {
    V1_2,
    V1_3,
}

/// The TLS flags, before the rustls configuration is built from them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    pub trust: Trust,
    /// None: TLS 1.3 and 1.2, the server picks.
    pub version: Option<TlsVersion>,
    pub resume: Resume,
}

/// A built client configuration and the name the server is asked for (SNI).
#[derive(Clone)]
pub struct TlsSpec {
    config: Arc<ClientConfig>,
    server_name: ServerName<'static>,
    pub resume: Resume,
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
        let server_name = ServerName::try_from(host.to_string())
            .map_err(|_| FlagError::new("URL", format!("`{host}` is not a valid TLS name")))?;
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
            Trust::CaFile(path) => builder
                .with_root_certificates(ca_file(path)?)
                .with_no_client_auth(),
        };
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(TlsSpec {
            config: Arc::new(config),
            server_name,
            resume: opts.resume,
        })
    }

    /// A configuration for one worker thread with `connections`: the same settings with a
    /// session cache of its own, so that nothing is shared between threads on the hot path.
    pub fn thread_config(&self, connections: usize) -> Arc<ClientConfig> {
        let mut c = (*self.config).clone();
        let store = || Arc::new(sessions::Sessions::new(connections));
        c.resumption = match self.resume {
            Resume::Off => Resumption::disabled(),
            Resume::Tickets => Resumption::store(store())
                .tls12_resumption(rustls::client::Tls12Resumption::SessionIdOrTickets),
            Resume::Ids => Resumption::store(store())
                .tls12_resumption(rustls::client::Tls12Resumption::SessionIdOnly),
        };
        Arc::new(c)
    }

    pub fn server_name(&self) -> &ServerName<'static> {
        &self.server_name
    }
}

/// Reads `--cacert`: every PEM certificate in the file becomes a trust anchor.
fn ca_file(path: &std::path::Path) -> Result<RootCertStore, FlagError> {
    let bad = |why: String| FlagError::new("--cacert", format!("{}: {why}", path.display()));
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(e.to_string()))? {
        let cert = cert.map_err(|e| bad(e.to_string()))?;
        roots.add(cert).map_err(|e| bad(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("no PEM certificate in the file".into()));
    }
    Ok(roots)
}

/// What one handshake negotiated, by the names users know (IANA cipher suite names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    pub version: &'static str,
    pub cipher_suite: &'static str,
    pub key_exchange_group: &'static str,
    /// The ALPN protocol the server chose (None: it ignored ALPN).
    pub alpn: Option<&'static str>,
}

impl Negotiated {
    pub fn of(c: &ClientConnection) -> Negotiated {
        let version = match c.protocol_version() {
            Some(ProtocolVersion::TLSv1_3) => "TLSv1.3",
            Some(ProtocolVersion::TLSv1_2) => "TLSv1.2",
            _ => "unknown",
        };
        let suite = c
            .negotiated_cipher_suite()
            .and_then(|s| s.suite().as_str())
            .unwrap_or("unknown");
        let cipher_suite = suite.strip_prefix("TLS13_").map_or(suite, iana_tls13);
        let key_exchange_group = c
            .negotiated_key_exchange_group()
            .and_then(|g| g.name().as_str())
            .unwrap_or("unknown");
        let alpn = c.alpn_protocol().map(|p| match p {
            b"http/1.1" => "http/1.1",
            b"h2" => "h2",
            _ => "other",
        });
        Negotiated {
            version,
            cipher_suite,
            key_exchange_group,
            alpn,
        }
    }
}

/// rustls names TLS 1.3 suites `TLS13_*`; IANA (and OpenSSL) call them `TLS_*`.
fn iana_tls13(rest: &'static str) -> &'static str {
    match rest {
        "AES_128_GCM_SHA256" => "TLS_AES_128_GCM_SHA256",
        "AES_256_GCM_SHA384" => "TLS_AES_256_GCM_SHA384",
        "CHACHA20_POLY1305_SHA256" => "TLS_CHACHA20_POLY1305_SHA256",
        _ => rest,
    }
}

/// Why a TLS connection failed, as counted under `errors.tls` and named in `tls.errors`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsCause {
    UnknownIssuer,
    NameMismatch,
    Expired,
    NotValidYet,
    BadCertificate,
    /// The server closed (or reset) the connection before the handshake finished.
    HandshakeEof,
    HandshakeTimeout,
    /// The server sent this fatal alert.
    Alert(rustls::AlertDescription),
    /// No protocol version, cipher suite or group in common.
    Incompatible,
    /// Malformed or unexpected messages, bad records.
    Protocol,
    /// `--http2`: the handshake ended without the server choosing `h2` by ALPN.
    NoH2,
    Other,
}

impl TlsCause {
    /// Classifies a rustls error.
    pub fn of(e: &rustls::Error) -> TlsCause {
        use rustls::CertificateError as C;
        use rustls::Error as E;
        match e {
            E::InvalidCertificate(c) => match c {
                C::UnknownIssuer => TlsCause::UnknownIssuer,
                C::NotValidForName | C::NotValidForNameContext { .. } => TlsCause::NameMismatch,
                C::Expired | C::ExpiredContext { .. } => TlsCause::Expired,
                C::NotValidYet | C::NotValidYetContext { .. } => TlsCause::NotValidYet,
                _ => TlsCause::BadCertificate,
            },
            E::NoCertificatesPresented | E::UnsupportedNameType => TlsCause::BadCertificate,
            E::AlertReceived(a) => TlsCause::Alert(*a),
            E::PeerIncompatible(_) | E::NoApplicationProtocol => TlsCause::Incompatible,
            E::InvalidMessage(_)
            | E::PeerMisbehaved(_)
            | E::DecryptError
            | E::PeerSentOversizedRecord
            | E::HandshakeNotComplete => TlsCause::Protocol,
            _ => TlsCause::Other,
        }
    }
}

impl fmt::Display for TlsCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            TlsCause::UnknownIssuer => "certificate unknown issuer",
            TlsCause::NameMismatch => "certificate name mismatch",
            TlsCause::Expired => "certificate expired",
            TlsCause::NotValidYet => "certificate not valid yet",
            TlsCause::BadCertificate => "certificate invalid",
            TlsCause::HandshakeEof => "handshake eof",
            TlsCause::HandshakeTimeout => "handshake timeout",
            TlsCause::Alert(a) => return write!(f, "alert {}", snake_case(&format!("{a:?}"))),
            TlsCause::Incompatible => "no common version, cipher suite or group",
            TlsCause::Protocol => "protocol error",
            TlsCause::NoH2 => "alpn: the server did not choose h2",
            TlsCause::Other => "other",
        };
        f.write_str(s)
    }
}

/// `HandshakeFailure` -> `handshake_failure`, the alert names of RFC 8446.
fn snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, ch) in camel.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alerts_are_named_as_in_the_rfc() {
        let cause = TlsCause::Alert(rustls::AlertDescription::HandshakeFailure);
        assert_eq!(cause.to_string(), "alert handshake_failure");
    }

    #[test]
    fn certificate_errors_name_their_cause() {
        let e = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        assert_eq!(TlsCause::of(&e).to_string(), "certificate unknown issuer");
    }

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
