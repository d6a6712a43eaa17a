//! [`Errors`]: a result's errors by kind, the same kinds for every protocol, and how every
//! schema version's names read into them.

#[cfg(doc)]
use super::{BodyResult, TlsResult};
use serde::{Deserialize, Serialize};

/// Errors by kind, the same kinds whatever the protocol. `status` counts non-2xx responses
/// (unless `--expect-status` says otherwise), `body` `--verify` mismatches, `tls` failed
/// handshakes and TLS errors (by cause in [`TlsResult::errors`]), `refused_stream` streams the
/// server refused before processing them (HTTP/2's REFUSED_STREAM), `protocol` the protocol's
/// own rules broken on a connection or a stream (by code or cause in the result's `protocol`
/// block: HTTP/2 frames, GOAWAYs with an error and streams reset; WebSocket upgrades, closes and
/// echoes), `verdict` answers the protocol's own verdict failed although they arrived whole
/// (gRPC: a non-zero grpc-status, no trailers, a wrong content type or framing; by cause in the
/// `protocol` block).
///
/// Read from every schema version: the per-protocol kinds of versions 1 and 2 (`h2`, `ws`,
/// `grpc`) are read into `protocol` and `verdict` ([`ErrorsOnDisk`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "ErrorsOnDisk")]
pub struct Errors {
    pub connect: u64,
    pub read: u64,
    pub write: u64,
    pub timeout: u64,
    pub parse: u64,
    pub status: u64,
    pub body: u64,
    pub tls: u64,
    pub refused_stream: u64,
    /// `--verify`: answers in a coding the request's `Accept-Encoding` did not list, or not
    /// decodable (by cause in [`BodyResult::encoding_errors`]).
    pub encoding: u64,
    /// Responses whose body ended before its length (Content-Length or chunked) said.
    pub truncated: u64,
    /// The protocol's rules broken (see above); not among the requests answered.
    pub protocol: u64,
    /// Answers that arrived and failed by the protocol's own verdict (see above); among the
    /// requests answered.
    pub verdict: u64,
}

/// [`Errors`] as any schema version wrote it: kinds absent from older results read as 0, and
/// version 1 and 2's per-protocol kinds (`h2` and `ws` into `protocol`, `grpc` into `verdict`).
#[derive(Deserialize)]
struct ErrorsOnDisk {
    connect: u64,
    read: u64,
    write: u64,
    timeout: u64,
    parse: u64,
    status: u64,
    body: u64,
    #[serde(default)]
    tls: u64,
    #[serde(default)]
    refused_stream: u64,
    #[serde(default)]
    encoding: u64,
    #[serde(default)]
    truncated: u64,
    #[serde(default)]
    protocol: u64,
    #[serde(default)]
    verdict: u64,
    #[serde(default)]
    h2: u64,
    #[serde(default)]
    ws: u64,
    #[serde(default)]
    grpc: u64,
}

impl From<ErrorsOnDisk> for Errors {
    fn from(d: ErrorsOnDisk) -> Errors {
        Errors {
            connect: d.connect,
            read: d.read,
            write: d.write,
            timeout: d.timeout,
            parse: d.parse,
            status: d.status,
            body: d.body,
            tls: d.tls,
            refused_stream: d.refused_stream,
            encoding: d.encoding,
            truncated: d.truncated,
            protocol: d.protocol + d.h2 + d.ws,
            verdict: d.verdict + d.grpc,
        }
    }
}

impl Errors {
    /// The errors judged on an answer the engine counted among the requests: a status, a body
    /// that differs or an encoding not asked for (`--verify`), the protocol's verdict.
    pub fn on_answers(&self) -> u64 {
        self.status + self.body + self.encoding + self.verdict
    }

    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &Errors) {
        for (mine, theirs) in self.counts_mut().into_iter().zip(o.counts()) {
            *mine += theirs;
        }
    }

    /// The kinds that occurred, by name (as in the JSON result), in a fixed order.
    pub fn by_kind(&self) -> impl Iterator<Item = (&'static str, u64)> {
        Self::KINDS
            .into_iter()
            .zip(self.counts())
            .filter(|&(_, n)| n > 0)
    }

    /// All errors of every kind.
    pub fn total(&self) -> u64 {
        self.counts().iter().sum()
    }

    /// Every kind's name, as in the JSON result, in the order of [`Errors::by_kind`].
    pub const KINDS: [&'static str; 13] = [
        "connect",
        "read",
        "write",
        "timeout",
        "parse",
        "status",
        "body",
        "tls",
        "refused_stream",
        "protocol",
        "encoding",
        "truncated",
        "verdict",
    ];

    fn counts(&self) -> [u64; 13] {
        [
            self.connect,
            self.read,
            self.write,
            self.timeout,
            self.parse,
            self.status,
            self.body,
            self.tls,
            self.refused_stream,
            self.protocol,
            self.encoding,
            self.truncated,
            self.verdict,
        ]
    }

    fn counts_mut(&mut self) -> [&mut u64; 13] {
        [
            &mut self.connect,
            &mut self.read,
            &mut self.write,
            &mut self.timeout,
            &mut self.parse,
            &mut self.status,
            &mut self.body,
            &mut self.tls,
            &mut self.refused_stream,
            &mut self.protocol,
            &mut self.encoding,
            &mut self.truncated,
            &mut self.verdict,
        ]
    }
}
