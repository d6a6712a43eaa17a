//! One load, described once: what `serverbench load` runs. The CLI parses its flags into a
//! [`LoadSpec`]; `--tool serverbench` and the client hosts of a distributed run hand it over as
//! JSON (`serverbench load --spec -`, one line on stdin) instead of rebuilding a command line;
//! [`LoadSpec::split`] shares it between client hosts.

use crate::duration;
use crate::transport::TlsResume;
use crate::Mode;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

mod validate;
mod work;
pub use validate::{Key, Origin, SpecError, Table, Why};
pub use validate::{DEFAULT_WS_MESSAGE, MAX_WS_MESSAGE, MAX_WS_PING};
pub use work::{lap_duration, Address, Pace, Work};

/// A whole load: target, how many connections and threads, how long, and what each request is.
/// Every key is optional in JSON (the defaults are `serverbench load`'s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoadSpec {
    /// URL(s) to load, all on one host:port, rotated per request (empty with `tcp`).
    pub urls: Vec<String>,
    /// TCP echo instead of HTTP.
    pub tcp: Option<TcpLoad>,
    /// Open connections.
    pub connections: u32,
    /// Worker threads (`None`: one per CPU this process may run on, or per `cpus`).
    pub threads: Option<u32>,
    /// How long to measure (`None`: 10 s unless `requests` is given).
    #[serde(with = "duration::opt_text")]
    pub duration: Option<Duration>,
    /// Stop after this many requests.
    pub requests: Option<u64>,
    /// Load without measuring for this long first.
    #[serde(with = "duration::text")]
    pub warmup: Duration,
    /// Per-request timeout.
    #[serde(with = "duration::text")]
    pub timeout: Duration,
    /// CPUs the worker threads are pinned to (empty: not pinned).
    pub cpus: Vec<usize>,
    /// Open loop at this many requests/s in total.
    pub rate: Option<f64>,
    /// New connections per second while ramping up.
    pub connect_rate: Option<f64>,
    /// What a thread does with nothing to do, as `--idle` spells it (`auto`, `block`, `50us`).
    pub idle: String,
    /// `--io`: epoll, io_uring, or the engine's choice.
    pub io: crate::Io,
    /// What each HTTP request is and how it travels.
    pub http: HttpLoad,
    /// `ws://`/`wss://` URLs: what each WebSocket message is.
    pub ws: WsLoad,
    /// `--reconnect-every N`: a connection is closed (WebSocket: with a close 1000) and opened
    /// again after N responses or echoed messages, so connects (and handshakes) are in the
    /// figures (HttpArena's limited-conn and echo-ws-limited).
    pub reconnect_every: Option<u64>,
    /// `--mix FILE`: requests drawn by weight from these entries (on the one host:port of the
    /// first URL) instead of the URLs' paths with `http.method`, `http.body`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mix: Option<crate::Mix>,
}

/// A WebSocket load (`ws://` or `wss://` URLs): each message is one frame, echoed back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WsLoad {
    /// `--message TEXT`: the message sent (default `hello world`), unless `message_size`.
    pub message: Option<String>,
    /// `--message-size N`: a message of N random bytes (made once).
    pub message_size: Option<usize>,
    /// `--binary`: binary frames instead of text.
    pub binary: bool,
    /// `--ws-ping`: ping frames, each answered by a pong, instead of echoed messages.
    pub ping: bool,
}

/// TCP echo: the target and the kind of load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpLoad {
    /// `host:port`.
    pub addr: String,
    /// [`Mode::TcpStream`] or [`Mode::TcpPingpong`].
    pub mode: Mode,
    /// Stream: the message written repeatedly.
    pub message: String,
    /// Ping-pong: the message size in bytes.
    pub size: usize,
}

/// The HTTP side of a load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpLoad {
    pub method: String,
    /// Extra headers, `Name: value`.
    pub headers: Vec<String>,
    /// The request body, or a file to read it from (on the machine that runs the load).
    pub body: Option<String>,
    pub body_file: Option<PathBuf>,
    /// `--body-size`: a body of random bytes (made once per thread), its size drawn per request.
    pub body_size: Option<crate::SizeRange>,
    /// `--chunked`: the body sent `Transfer-Encoding: chunked`, in chunks of this many bytes
    /// (`--chunk-size`; `None`: with Content-Length).
    pub chunked: Option<u64>,
    /// Requests in flight per connection (HTTP/1.1 pipelining).
    pub pipeline: u32,
    /// Status codes that are not errors (empty: any 2xx).
    pub expect_status: Vec<u16>,
    /// Every body must match the first body of its URL.
    pub verify: bool,
    /// Read every segment as it lands.
    pub eager_reads: bool,
    /// HTTP/2 (h2 over TLS for https://, h2c for http://), with `streams` per connection.
    pub http2: bool,
    pub streams: u32,
    /// A new connection per request.
    pub new_conn: bool,
    /// How new TLS connections resume (`None`: every handshake full).
    pub tls_resume: Option<TlsResume>,
    /// The only TLS version offered (`None`: 1.3 and 1.2).
    pub tls_version: Option<TlsVersion>,
    /// Trust only the CA certificates in this PEM file (on the machine that runs the load).
    pub cacert: Option<PathBuf>,
    /// Accept any server certificate.
    pub insecure: bool,
}

/// A TLS protocol version: `--tls-version` (the only one offered; `1.2` or `1.3` in a spec)
/// and what a handshake negotiated, written as OpenSSL writes it (`TLSv1.3`) everywhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum TlsVersion {
    #[serde(rename = "1.2")]
    V1_2,
    #[serde(rename = "1.3")]
    V1_3,
}

impl TlsVersion {
    /// OpenSSL's spelling: `TLSv1.2`, `TLSv1.3`.
    pub fn as_str(self) -> &'static str {
        match self {
            TlsVersion::V1_2 => "TLSv1.2",
            TlsVersion::V1_3 => "TLSv1.3",
        }
    }

    /// The flag's spelling: `1.2`, `1.3`.
    pub fn flag(self) -> &'static str {
        match self {
            TlsVersion::V1_2 => "1.2",
            TlsVersion::V1_3 => "1.3",
        }
    }
}

impl fmt::Display for TlsVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `--tls-version` that is neither 1.2 nor 1.3 (the text given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}`: expected 1.2 or 1.3")]
pub struct BadTlsVersion(pub String);

/// `1.2`/`1.3` (the flag's spelling) or `TLSv1.2`/`TLSv1.3`.
impl FromStr for TlsVersion {
    type Err = BadTlsVersion;
    fn from_str(s: &str) -> Result<TlsVersion, BadTlsVersion> {
        match s.strip_prefix("TLSv").unwrap_or(s) {
            "1.2" => Ok(TlsVersion::V1_2),
            "1.3" => Ok(TlsVersion::V1_3),
            _ => Err(BadTlsVersion(s.to_string())),
        }
    }
}

impl Default for LoadSpec {
    /// `serverbench load`'s defaults, with no target.
    fn default() -> LoadSpec {
        LoadSpec {
            urls: Vec::new(),
            tcp: None,
            connections: 50,
            threads: None,
            duration: None,
            requests: None,
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(2),
            cpus: Vec::new(),
            rate: None,
            connect_rate: None,
            idle: "auto".into(),
            io: crate::Io::Auto,
            http: HttpLoad::default(),
            ws: WsLoad::default(),
            reconnect_every: None,
            mix: None,
        }
    }
}

impl Default for HttpLoad {
    fn default() -> HttpLoad {
        HttpLoad {
            method: "GET".into(),
            headers: Vec::new(),
            body: None,
            body_file: None,
            body_size: None,
            chunked: None,
            pipeline: 1,
            expect_status: Vec::new(),
            verify: false,
            eager_reads: false,
            http2: false,
            streams: 1,
            new_conn: false,
            tls_resume: None,
            tls_version: None,
            cacert: None,
            insecure: false,
        }
    }
}

/// `--chunk-size`'s default (and a suite scenario's `chunk_size`'s): bytes per chunk of a
/// chunked body.
pub const DEFAULT_CHUNK_SIZE: u64 = 16 * 1024;

/// The largest `--body-size` (and a scenario's `body_size`): each load thread holds that many
/// random bytes.
pub const MAX_BODY_SIZE: u64 = 1 << 30;

/// The measured duration when neither a duration nor a request count is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

impl LoadSpec {
    /// The load shared between `hosts` machines: host `i` gets its share of the connections
    /// (the first ones one more when they do not divide), and the same share of the rate and of
    /// the connect rate; everything else is the same. The one split of every distributed load.
    pub fn split(&self, hosts: usize) -> Vec<LoadSpec> {
        let n = hosts.max(1) as u32;
        (0..n)
            .map(|i| {
                let connections = self.connections / n + u32::from(i < self.connections % n);
                let share = f64::from(connections) / f64::from(self.connections.max(1));
                LoadSpec {
                    connections,
                    rate: self.rate.map(|r| r * share),
                    connect_rate: self.connect_rate.map(|r| r * share),
                    ..self.clone()
                }
            })
            .collect()
    }

    /// How long measuring lasts (the default when it stops after a request count is unknown).
    pub fn measured(&self) -> Duration {
        self.duration.unwrap_or(DEFAULT_DURATION)
    }

    /// The spec as one line of JSON (what `serverbench load --spec -` reads).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a load spec always serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_and_rates_split_by_share_and_add_up() {
        let spec = LoadSpec {
            connections: 10,
            rate: Some(1000.0),
            connect_rate: Some(100.0),
            ..LoadSpec::default()
        };
        let parts = spec.split(3);
        let conns: Vec<u32> = parts.iter().map(|p| p.connections).collect();
        assert_eq!(conns, [4, 3, 3]);
        assert_eq!(parts[0].rate, Some(400.0));
        assert_eq!(parts[1].connect_rate, Some(30.0));
        let total: f64 = parts.iter().filter_map(|p| p.rate).sum();
        assert!((total - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn a_spec_round_trips_through_one_line_of_json_with_durations_as_text() {
        let spec = LoadSpec {
            urls: vec!["https://127.0.0.1:8443/hello".into()],
            duration: Some(Duration::from_millis(2500)),
            warmup: Duration::from_micros(250),
            io: crate::Io::Uring,
            http: HttpLoad {
                http2: true,
                streams: 16,
                tls_resume: Some(TlsResume::Tickets),
                tls_version: Some(TlsVersion::V1_3),
                ..HttpLoad::default()
            },
            ..LoadSpec::default()
        };
        let line = spec.to_line();
        assert!(!line.contains('\n'));
        assert!(line.contains(r#""duration":"2s 500ms""#), "{line}");
        assert!(line.contains(r#""tls_version":"1.3""#), "{line}");
        assert!(line.contains(r#""io":"uring""#), "{line}");
        assert_eq!(serde_json::from_str::<LoadSpec>(&line).unwrap(), spec);
    }

    #[test]
    fn a_partial_spec_takes_the_defaults_and_an_unknown_key_is_refused() {
        let spec: LoadSpec =
            serde_json::from_str(r#"{"urls": ["http://h:1/"], "duration": "3s"}"#).unwrap();
        assert_eq!((spec.connections, spec.http.pipeline), (50, 1));
        assert_eq!(spec.measured(), Duration::from_secs(3));
        let err = serde_json::from_str::<LoadSpec>(r#"{"conections": 5}"#).unwrap_err();
        assert!(err.to_string().contains("conections"), "{err}");
    }
}
