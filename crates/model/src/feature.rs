//! The features of the server contract (spec/contract.md) a server implements and a scenario
//! requires.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A feature of the server contract (spec/contract.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Feature {
    /// `GET /hello`.
    Hello,
    /// `/hey`, `/hell`, `/about` and the 404.
    Routes,
    /// `GET /json`.
    Json,
    /// `GET /payload`: 1 MiB.
    Payload,
    /// `GET /pingpong`: 1 MiB through a worker.
    Pingpong,
    /// TCP echo on `ECHO_PORT`.
    Echo,
    /// The same HTTP contract over HTTPS (TLS, HTTP/1.1) on `TLS_PORT`, with the certificate and
    /// key the harness hands over in `TLS_CERT` and `TLS_KEY`.
    Tls,
    /// HTTP/2 over TLS (negotiated by ALPN) on `TLS_PORT`.
    H2,
    /// HTTP/2 over cleartext with prior knowledge on `PORT`.
    H2c,
    /// HTTP/3 over QUIC on the UDP port `H3_PORT`, with the certificate of `TLS_PORT` (a server
    /// declaring it declares `tls` too: its `TLS_PORT` answers with `Alt-Svc: h3=":H3_PORT"`).
    H3,
    /// `GET /db`: one random `World` row from the harness's PostgreSQL.
    Db,
    /// `GET /queries?queries=N`: N rows, one `SELECT` each.
    Queries,
    /// `GET /fortunes`: the `Fortune` table plus one row, sorted, through an HTML template.
    Fortunes,
    /// `GET /updates?queries=N`: N rows read one by one, given new random numbers, written back.
    Updates,
    /// WebSocket echo (RFC 6455) on `PORT`, path `/ws`: an HTTP/1.1 upgrade, then every text and
    /// binary message echoed unchanged, pings answered, close 1000 answered with 1000.
    #[serde(rename = "ws-echo")]
    WsEcho,
    /// `GET` and `POST /baseline?a=&b=`: the sum of the query and the integer body.
    Baseline,
    /// `POST /upload`: the body streamed through a bounded buffer, its byte count answered.
    Upload,
    /// `GET /json` compressed in an encoding the client listed in `Accept-Encoding`.
    Compression,
    /// `GET /static/…`: the harness's tree in `STATIC_DIR`, with types, validators, encodings.
    Static,
    /// gRPC: the `serverbench.Bench` service of spec/serverbench.proto on `PORT` (h2c with prior
    /// knowledge) and, with `tls`, on `TLS_PORT` (ALPN `h2`).
    Grpc,
}

impl Feature {
    /// Every feature, in contract order.
    pub const ALL: [Feature; 20] = [
        Feature::Hello,
        Feature::Routes,
        Feature::Json,
        Feature::Payload,
        Feature::Pingpong,
        Feature::Echo,
        Feature::Tls,
        Feature::H2,
        Feature::H2c,
        Feature::H3,
        Feature::Db,
        Feature::Queries,
        Feature::Fortunes,
        Feature::Updates,
        Feature::WsEcho,
        Feature::Baseline,
        Feature::Upload,
        Feature::Compression,
        Feature::Static,
        Feature::Grpc,
    ];

    /// The manifest spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Feature::Hello => "hello",
            Feature::Routes => "routes",
            Feature::Json => "json",
            Feature::Payload => "payload",
            Feature::Pingpong => "pingpong",
            Feature::Echo => "echo",
            Feature::Tls => "tls",
            Feature::H2 => "h2",
            Feature::H2c => "h2c",
            Feature::H3 => "h3",
            Feature::Db => "db",
            Feature::Queries => "queries",
            Feature::Fortunes => "fortunes",
            Feature::Updates => "updates",
            Feature::WsEcho => "ws-echo",
            Feature::Baseline => "baseline",
            Feature::Upload => "upload",
            Feature::Compression => "compression",
            Feature::Static => "static",
            Feature::Grpc => "grpc",
        }
    }

    /// True for the endpoints served over HTTP on `PORT` that the HTTP checks request (not echo,
    /// not the transports, not `ws-echo`: its upgrade is on `PORT` but its checks are its own).
    pub fn is_http(self) -> bool {
        matches!(
            self,
            Feature::Hello | Feature::Routes | Feature::Json | Feature::Payload | Feature::Pingpong
        ) || self.is_shape()
    }

    /// True for the HTTP shapes of issue 32 (`baseline`, `upload`, `compression`, `static`):
    /// endpoints on `PORT` checked by their own rules, not by the endpoint table.
    pub fn is_shape(self) -> bool {
        matches!(
            self,
            Feature::Baseline | Feature::Upload | Feature::Compression | Feature::Static
        )
    }

    /// True for the database workloads (`db`, `queries`, `fortunes`, `updates`): endpoints on
    /// `PORT` that need the harness's PostgreSQL (`DATABASE_URL`).
    pub fn is_database(self) -> bool {
        matches!(
            self,
            Feature::Db | Feature::Queries | Feature::Fortunes | Feature::Updates
        )
    }

    /// True for the transports the endpoints are also served over (`tls`, `h2`, `h2c`, `h3`).
    pub fn is_transport(self) -> bool {
        matches!(
            self,
            Feature::Tls | Feature::H2 | Feature::H2c | Feature::H3
        )
    }

    /// True for the WebSocket features (`ws-echo`): an HTTP/1.1 upgrade on `PORT`, so a server
    /// implementing one listens on `PORT` even without an HTTP endpoint.
    pub fn is_websocket(self) -> bool {
        matches!(self, Feature::WsEcho)
    }

    /// True for gRPC (`grpc`): HTTP/2 calls on `PORT` (h2c) and, with `tls`, on `TLS_PORT`,
    /// checked by their own rules, not by the endpoint table.
    pub fn is_grpc(self) -> bool {
        matches!(self, Feature::Grpc)
    }

    /// Parses the manifest spelling.
    pub fn parse(s: &str) -> Option<Feature> {
        Feature::ALL.into_iter().find(|f| f.as_str() == s)
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
