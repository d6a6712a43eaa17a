//! How an HTTP lap travels, as types: the HTTP version on the wire ([`Protocol`]) and how new
//! TLS connections resume ([`TlsResume`]). Suites, lap records and the tool adapters share them;
//! absent in a record means HTTP/1.1 over plain TCP, as every lap recorded before them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The HTTP version on the wire.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// HTTP/1.1 (over TLS when the lap's `tls` is set).
    #[default]
    H1,
    /// HTTP/2 over TLS, negotiated by ALPN, on the server's `TLS_PORT`.
    H2,
    /// HTTP/2 cleartext with prior knowledge, on `PORT`.
    H2c,
}

impl Protocol {
    /// Every protocol, in the order reports list them.
    pub const ALL: [Protocol; 3] = [Protocol::H1, Protocol::H2, Protocol::H2c];

    /// The spelling in suites and records: `h1`, `h2`, `h2c`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::H1 => "h1",
            Protocol::H2 => "h2",
            Protocol::H2c => "h2c",
        }
    }

    /// HTTP/1.1 (the default, not written into records).
    pub fn is_h1(&self) -> bool {
        *self == Protocol::H1
    }

    /// HTTP/2, over TLS or not.
    pub fn is_h2(self) -> bool {
        self != Protocol::H1
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a new TLS connection resumes an earlier session (`serverbench load --tls-resume`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TlsResume {
    /// TLS 1.2 tickets or session ids, TLS 1.3 tickets.
    Tickets,
    /// TLS 1.2 session ids only.
    Ids,
    /// Every handshake is a full one.
    Off,
}

impl TlsResume {
    /// The spelling of the flag's value.
    pub fn as_str(self) -> &'static str {
        match self {
            TlsResume::Tickets => "tickets",
            TlsResume::Ids => "ids",
            TlsResume::Off => "off",
        }
    }
}

impl fmt::Display for TlsResume {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
