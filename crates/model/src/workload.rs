//! [`Workload`]: which protocol driver a load runs, the one enum every layer agrees on. The
//! engine picks its driver by it, a [`crate::result::LoadResult`] carries the matching protocol
//! block, and a suite's `mode` with its transport's `protocol` names one. Adding a protocol
//! adds a variant here first (see `spec/adding-a-protocol.md`).

use crate::result::Mode;
use crate::transport::Protocol;
use serde::{Deserialize, Serialize};

/// What runs on each connection: one variant per driver in the engine (`engine/src/proto/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// HTTP/1.1 requests (plain or TLS; keep-alive, pipelined or a connection per request).
    Http1,
    /// HTTP/2 streams (h2 over TLS by ALPN, or h2c with prior knowledge).
    Http2,
    /// WebSocket echo: an HTTP/1.1 upgrade, then one message per frame each way.
    WebSocket,
    /// TCP echo, a message written repeatedly as fast as the socket takes it.
    TcpStream,
    /// TCP echo, one message at a time, waiting for the whole echo.
    TcpPingPong,
    /// gRPC calls (`grpc://`, `grpcs://`): HTTP/2 streams judged by gRPC's rules.
    Grpc,
    /// HTTP/3 streams over QUIC (UDP, TLS 1.3 inside, ALPN `h3`).
    Http3,
}

impl Workload {
    /// Every workload, in the order reports list them.
    pub const ALL: [Workload; 7] = [
        Workload::Http1,
        Workload::Http2,
        Workload::WebSocket,
        Workload::TcpStream,
        Workload::TcpPingPong,
        Workload::Grpc,
        Workload::Http3,
    ];

    /// The workload a suite's (or a record's) `mode` and transport `protocol` name.
    pub fn of(mode: Mode, protocol: Protocol) -> Workload {
        match (mode, protocol) {
            (Mode::Http, Protocol::H1) => Workload::Http1,
            (Mode::Http, Protocol::H2 | Protocol::H2c) => Workload::Http2,
            (Mode::Http, Protocol::H3) => Workload::Http3,
            (Mode::Ws, _) => Workload::WebSocket,
            (Mode::TcpStream, _) => Workload::TcpStream,
            (Mode::TcpPingpong, _) => Workload::TcpPingPong,
            (Mode::Grpc, _) => Workload::Grpc,
        }
    }

    /// The spelling in JSON and messages: `http1`, `http2`, `web-socket`, `tcp-stream`,
    /// `tcp-ping-pong`, `grpc`, `http3`.
    pub fn as_str(self) -> &'static str {
        match self {
            Workload::Http1 => "http1",
            Workload::Http2 => "http2",
            Workload::WebSocket => "web-socket",
            Workload::TcpStream => "tcp-stream",
            Workload::TcpPingPong => "tcp-ping-pong",
            Workload::Grpc => "grpc",
            Workload::Http3 => "http3",
        }
    }

    /// The mode suites and lap records spell it by (HTTP/1.1, HTTP/2 and HTTP/3 are `http`).
    pub fn mode(self) -> Mode {
        match self {
            Workload::Http1 | Workload::Http2 | Workload::Http3 => Mode::Http,
            Workload::WebSocket => Mode::Ws,
            Workload::TcpStream => Mode::TcpStream,
            Workload::TcpPingPong => Mode::TcpPingpong,
            Workload::Grpc => Mode::Grpc,
        }
    }

    /// HTTP requests, over HTTP/1.1, HTTP/2 or HTTP/3 (what request options apply to).
    pub fn is_http(self) -> bool {
        matches!(self, Workload::Http1 | Workload::Http2 | Workload::Http3)
    }

    /// Concurrent streams per connection (`-m`): HTTP/2, HTTP/3 and gRPC.
    pub fn has_streams(self) -> bool {
        matches!(self, Workload::Http2 | Workload::Http3 | Workload::Grpc)
    }

    /// The unit one answer counts: a request (HTTP/2 and HTTP/3: a stream) or an echoed message.
    pub fn counts_messages(self) -> bool {
        matches!(self, Workload::WebSocket | Workload::TcpPingPong)
    }
}

impl std::fmt::Display for Workload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mode_and_a_protocol_name_one_workload_and_its_spelling_round_trips() {
        assert_eq!(Workload::of(Mode::Http, Protocol::H2c), Workload::Http2);
        assert_eq!(Workload::of(Mode::Ws, Protocol::H1), Workload::WebSocket);
        assert_eq!(Workload::of(Mode::Http, Protocol::H3), Workload::Http3);
        for w in Workload::ALL {
            let json = serde_json::to_string(&w).unwrap();
            assert_eq!(json, format!("\"{}\"", w.as_str()));
            assert_eq!(serde_json::from_str::<Workload>(&json).unwrap(), w);
        }
    }
}
