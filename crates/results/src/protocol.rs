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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::LoadParams;

    #[test]
    fn params_recorded_before_the_protocol_keys_load_as_plain_http11_and_write_back_unchanged() {
        let old = r#"{"mode":"http","paths":["/hello"],"connections":50,"threads":0,
          "duration_s":3.0,"requests":null,"pipeline":1,"rate":null,"warmup_s":1.0,
          "message":null,"size":null}"#;
        let p: LoadParams = serde_json::from_str(old).unwrap();
        assert_eq!(
            (p.protocol, p.tls, p.new_conn),
            (Protocol::H1, false, false)
        );
        assert_eq!(
            (p.tls_resume, p.streams, p.transport_label()),
            (None, None, String::new())
        );
        let again = serde_json::to_string(&p).unwrap();
        assert!(
            !again.contains("protocol") && !again.contains("tls"),
            "{again}"
        );
    }

    #[test]
    fn protocol_keys_are_written_in_their_spelling() {
        let p = LoadParams {
            protocol: Protocol::H2c,
            streams: Some(16),
            ..LoadParams::default()
        };
        let json = serde_json::to_string(&p).unwrap();
        assert!(
            json.ends_with(r#""protocol":"h2c","streams":16}"#),
            "{json}"
        );
        assert_eq!(p.transport_label(), "h2c m16");
    }
}
