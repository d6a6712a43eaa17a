//! How an HTTP lap travels, as types: the HTTP version on the wire ([`Protocol`]), how new
//! TLS connections resume ([`TlsResume`]) and the whole of it ([`Transport`]). Suites, lap
//! records, the load spec and the tool adapters share them; absent in a record means HTTP/1.1
//! over plain TCP, as every lap recorded before them.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

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
    /// HTTP/3 over QUIC (TLS 1.3 inside, ALPN `h3`), on the server's UDP `H3_PORT`.
    H3,
}

impl Protocol {
    /// Every protocol, in the order reports list them.
    pub const ALL: [Protocol; 4] = [Protocol::H1, Protocol::H2, Protocol::H2c, Protocol::H3];

    /// The spelling in suites and records: `h1`, `h2`, `h2c`, `h3`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::H1 => "h1",
            Protocol::H2 => "h2",
            Protocol::H2c => "h2c",
            Protocol::H3 => "h3",
        }
    }

    /// HTTP/1.1 (the default, not written into records).
    pub fn is_h1(&self) -> bool {
        *self == Protocol::H1
    }

    /// HTTP/2, over TLS or not.
    pub fn is_h2(self) -> bool {
        matches!(self, Protocol::H2 | Protocol::H2c)
    }

    /// HTTP/3 over QUIC.
    pub fn is_h3(self) -> bool {
        self == Protocol::H3
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a new TLS connection resumes an earlier session (`serverbench load --tls-resume`): the
/// one type of the engine, the records and the CLI.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TlsResume {
    /// TLS 1.2 session tickets or ids, TLS 1.3 tickets.
    Tickets,
    /// TLS 1.2 session ids only. TLS 1.3 has only tickets (stateless or stateful at the
    /// server's choice), so with TLS 1.3 this resumes as `Tickets` does.
    Ids,
    /// Every handshake is a full one.
    #[default]
    Off,
}

impl TlsResume {
    /// Every way, in the order of the flag's help.
    pub const ALL: [TlsResume; 3] = [TlsResume::Tickets, TlsResume::Ids, TlsResume::Off];

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

/// A TLS resumption that is none of tickets, ids or off (the text given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown TLS resumption `{0}` (tickets, ids or off)")]
pub struct BadTlsResume(pub String);

impl FromStr for TlsResume {
    type Err = BadTlsResume;
    fn from_str(s: &str) -> Result<TlsResume, BadTlsResume> {
        TlsResume::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| BadTlsResume(s.to_string()))
    }
}

/// How a lap travels: the HTTP version, TLS, a connection per request, resumption and streams.
/// Declared once for the suites' scenarios, the lap records' parameters and the load spec, and
/// flattened into each, so the keys on disk are the ones they always had.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Transport {
    /// HTTP version on the wire: `h1` (default), `h2` (over TLS, ALPN), `h2c` (prior
    /// knowledge) or `h3` (QUIC on the server's UDP `H3_PORT`). `h2` needs the feature `h2`,
    /// `h2c` the feature `h2c`, `h3` the feature `h3`.
    #[serde(default, skip_serializing_if = "Protocol::is_h1")]
    pub protocol: Protocol,
    /// HTTPS: the load goes to the server's `TLS_PORT` (always so with `h2`; `h3` goes to its
    /// `H3_PORT`, TLS inside QUIC); absent: plain TCP.
    #[serde(default, skip_serializing_if = "is_false")]
    pub tls: bool,
    /// A new connection per request (handshakes per second over TLS); absent: keep-alive.
    #[serde(default, skip_serializing_if = "is_false")]
    pub new_conn: bool,
    /// With `new_conn` over TLS: how sessions resume; absent: the tool's default (full).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_resume: Option<TlsResume>,
    /// HTTP/2 and HTTP/3: concurrent streams per connection (h2load's `-m`); absent: one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u32>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Transport {
    /// The protocol label of a lap: `https`, `h2`, `h2c`, `h3`, with ` new-conn`, ` resume=tickets`
    /// and ` m16` as they apply. Empty for plain HTTP/1.1 keep-alive.
    pub fn label(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        match (self.protocol, self.tls) {
            (Protocol::H1, false) => {}
            (Protocol::H1, true) => parts.push("https".into()),
            (p, _) => parts.push(p.to_string()),
        }
        if self.new_conn {
            parts.push("new-conn".into());
        }
        if let Some(r) = self.tls_resume {
            parts.push(format!("resume={r}"));
        }
        if let Some(m) = self.streams {
            parts.push(format!("m{m}"));
        }
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_transport_writes_no_key_and_reads_back_from_nothing() {
        let t: Transport = serde_json::from_str("{}").unwrap();
        assert_eq!(t, Transport::default());
        assert_eq!(serde_json::to_string(&t).unwrap(), "{}");
        assert_eq!(t.label(), "");
    }

    #[test]
    fn the_label_names_what_differs_from_plain_http11() {
        let t = Transport {
            protocol: Protocol::H1,
            tls: true,
            new_conn: true,
            tls_resume: Some(TlsResume::Tickets),
            streams: None,
        };
        assert_eq!(t.label(), "https new-conn resume=tickets");
        assert_eq!("ids".parse::<TlsResume>(), Ok(TlsResume::Ids));
        assert!("both".parse::<TlsResume>().is_err());
    }

    #[test]
    fn http3_is_neither_http11_nor_http2_and_labels_itself_h3() {
        let t = Transport {
            protocol: Protocol::H3,
            tls: true,
            streams: Some(16),
            ..Transport::default()
        };
        assert!(!t.protocol.is_h1() && !t.protocol.is_h2() && t.protocol.is_h3());
        assert_eq!(t.label(), "h3 m16");
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains(r#""protocol":"h3""#), "{json}");
        assert_eq!(serde_json::from_str::<Transport>(&json).unwrap(), t);
    }
}
