//! What a handshake negotiated and why one failed, by the names users know: one spelling
//! (`TLSv1.3`, IANA cipher suite names) for the engine's results and the contract's notes, and
//! causes in words a user can act on, with the flag that fixes them.

use super::TlsVersion;
use rustls::{CommonState, ProtocolVersion};
use std::fmt;

/// A negotiated cipher suite, shown by its IANA name (as OpenSSL and h2load show it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cipher(pub rustls::CipherSuite);

impl Cipher {
    /// The IANA name: rustls calls TLS 1.3 suites `TLS13_*`, IANA `TLS_*`.
    pub fn name(self) -> &'static str {
        let suite = self.0.as_str().unwrap_or("unknown");
        match suite.strip_prefix("TLS13_") {
            Some("AES_128_GCM_SHA256") => "TLS_AES_128_GCM_SHA256",
            Some("AES_256_GCM_SHA384") => "TLS_AES_256_GCM_SHA384",
            Some("CHACHA20_POLY1305_SHA256") => "TLS_CHACHA20_POLY1305_SHA256",
            _ => suite,
        }
    }
}

impl fmt::Display for Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What one handshake negotiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    pub version: TlsVersion,
    pub cipher_suite: Option<Cipher>,
    pub key_exchange_group: &'static str,
    /// The ALPN protocol the server chose (None: it ignored ALPN).
    pub alpn: Option<&'static str>,
}

impl Negotiated {
    /// What a finished handshake settled (a `ClientConnection` or tokio-rustls' state).
    pub fn of(c: &CommonState) -> Negotiated {
        // rustls speaks TLS 1.2 and 1.3 only.
        let version = match c.protocol_version() {
            Some(ProtocolVersion::TLSv1_2) => TlsVersion::V1_2,
            _ => TlsVersion::V1_3,
        };
        let key_exchange_group = c
            .negotiated_key_exchange_group()
            .and_then(|g| g.name().as_str())
            .unwrap_or("unknown");
        let alpn = c.alpn_protocol().map(|p| match p {
            b"http/1.1" => "http/1.1",
            b"h2" => "h2",
            b"h3" => "h3",
            _ => "other",
        });
        Negotiated {
            version,
            cipher_suite: c.negotiated_cipher_suite().map(|s| Cipher(s.suite())),
            key_exchange_group,
            alpn,
        }
    }
}

/// `TLSv1.3, TLS_AES_128_GCM_SHA256, ALPN h2`.
impl fmt::Display for Negotiated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cipher = self.cipher_suite.map_or("unknown", Cipher::name);
        let alpn = self.alpn.unwrap_or("none");
        write!(f, "{}, {cipher}, ALPN {alpn}", self.version)
    }
}

/// Why a TLS connection failed, as counted under `errors.tls` and named in `tls.errors`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsCause {
    UnknownIssuer,
    /// A CA certificate (CA:TRUE, as `openssl req -x509` makes) served as the server's own and
    /// not given with `--cacert`.
    CaAsServerCertificate,
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
    /// Malformed or unexpected messages, bad records (e.g. a plain HTTP answer).
    Protocol,
    /// `--http2`: the handshake ended without the server choosing `h2` by ALPN.
    NoH2,
    /// `--http3`: the server refused ALPN `h3` (its `no_application_protocol` alert).
    NoH3,
    /// `--http3`: nothing came back on UDP (no datagram before the timeout, or the port is
    /// closed: ICMP port unreachable).
    NoUdpAnswer,
    Other,
}

impl TlsCause {
    /// The causes without a payload, for [`TlsCause::named`].
    const UNIT: [TlsCause; 14] = [
        TlsCause::UnknownIssuer,
        TlsCause::CaAsServerCertificate,
        TlsCause::NameMismatch,
        TlsCause::Expired,
        TlsCause::NotValidYet,
        TlsCause::BadCertificate,
        TlsCause::HandshakeEof,
        TlsCause::HandshakeTimeout,
        TlsCause::Incompatible,
        TlsCause::Protocol,
        TlsCause::NoH2,
        TlsCause::NoH3,
        TlsCause::NoUdpAnswer,
        TlsCause::Other,
    ];

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
                C::Other(o) if super::verify::is_ca_as_end_entity(o) => {
                    TlsCause::CaAsServerCertificate
                }
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

    /// The cause a name (as [`fmt::Display`] writes it, e.g. from a results file) stands for.
    pub fn named(name: &str) -> Option<TlsCause> {
        if name.starts_with("alert protocol_version") {
            return Some(TlsCause::Alert(rustls::AlertDescription::ProtocolVersion));
        }
        Self::UNIT.into_iter().find(|c| c.to_string() == name)
    }

    /// What to do about it, naming the flag that fixes it (None: nothing to suggest).
    pub fn hint(self) -> Option<&'static str> {
        use rustls::AlertDescription as A;
        Some(match self {
            TlsCause::UnknownIssuer => {
                "pass the CA that signed the server's certificate (or a self-signed certificate \
                 itself) with --cacert FILE, or skip the check with -k/--insecure"
            }
            TlsCause::CaAsServerCertificate => {
                "the server's certificate is self-signed and marked CA:TRUE: trust it by passing \
                 that certificate with --cacert FILE, or skip the check with -k/--insecure"
            }
            TlsCause::NameMismatch => {
                "the certificate does not name the URL's host: use a host it was issued for \
                 (its subjectAltName), or -k/--insecure"
            }
            TlsCause::Expired | TlsCause::NotValidYet => {
                "check the certificate's dates and this machine's clock, or -k/--insecure"
            }
            TlsCause::BadCertificate => {
                "the server's certificate cannot be used (malformed or wrong key usage): \
                 -k/--insecure skips the check"
            }
            TlsCause::HandshakeEof | TlsCause::Protocol => {
                "the server closed or answered without TLS: does this port speak TLS? \
                 (http:// for plain HTTP)"
            }
            TlsCause::Incompatible | TlsCause::Alert(A::ProtocolVersion) => {
                "no version or cipher in common: try --tls-version 1.2 or 1.3"
            }
            TlsCause::NoH2 => "the server does not offer HTTP/2 over TLS: drop --http2",
            TlsCause::NoH3 => "the server does not offer HTTP/3 on this port: drop --http3",
            TlsCause::NoUdpAnswer => {
                "nothing answers QUIC on this UDP port: is it the server's H3_PORT?"
            }
            _ => return None,
        })
    }
}

impl fmt::Display for TlsCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            TlsCause::UnknownIssuer => "certificate unknown issuer",
            TlsCause::CaAsServerCertificate => "certificate is a CA certificate",
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
            TlsCause::NoH3 => "alpn: the server refused h3",
            TlsCause::NoUdpAnswer => "no answer on UDP",
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
    fn every_cause_is_found_by_its_name_and_certificate_causes_name_a_flag() {
        for c in TlsCause::UNIT {
            assert_eq!(TlsCause::named(&c.to_string()), Some(c));
            if c.to_string().starts_with("certificate") {
                let hint = c.hint().unwrap();
                assert!(
                    hint.contains("--cacert") || hint.contains("-k/--insecure"),
                    "{c}"
                );
            }
        }
        let alert = TlsCause::named("alert protocol_version").unwrap();
        assert!(alert.hint().unwrap().contains("--tls-version"));
    }

    #[test]
    fn tls13_suites_get_their_iana_names() {
        let c = Cipher(rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
        assert_eq!(c.to_string(), "TLS_AES_128_GCM_SHA256");
    }
}
