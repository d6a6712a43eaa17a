//! One load, described once: what `serverbench load` runs. The CLI parses its flags into a
//! [`LoadSpec`], built around the [`Work`] and [`Transport`] a suite's scenario and a lap record
//! share; a lap's is [`LoadSpec::lap`]; `--tool serverbench` and the client hosts of a distributed run hand it over as
//! JSON (`serverbench load --spec -`, one line on stdin) instead of rebuilding a command line;
//! [`LoadSpec::split`] shares it between client hosts.

use crate::duration;
use crate::Transport;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

mod before;
mod target;
mod validate;
mod work;
pub use before::BeforeError;
pub use target::UrlError;
pub use validate::{grpc_method, GrpcMethod, GrpcStream, MAX_GRPC_MESSAGE};
pub use validate::{Key, Origin, SpecError, Table, Why};
pub use validate::{DEFAULT_STREAM_MESSAGES, DEFAULT_STREAM_MESSAGE_SIZE, MAX_STREAM_BYTES};
pub use validate::{DEFAULT_WS_MESSAGE, MAX_WS_MESSAGE, MAX_WS_PING};
pub use work::{lap_duration, Address, Pace, Work};

/// A whole load: the server ([`LoadSpec::target`]), what each connection does ([`Work`]), how
/// it travels ([`Transport`]), how hard (connections, threads, duration...) and what only a
/// load has ([`HttpLoad`]: headers, a body file, TLS trust). Every key is optional in JSON (the
/// defaults are `serverbench load`'s); a spec in the shape before this one (`urls`, `tcp`,
/// `http.method`...) still reads ([`LoadSpec::from_json`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoadSpec {
    /// The server's `host:port`: HTTP's and WebSocket's (the paths are `work.paths`, the scheme
    /// is `work.mode` and `transport.tls`), or TCP echo's. Empty: no target.
    pub target: String,
    /// What each connection does: the mode, the paths, the message, the method and body.
    /// `work.mix_requests` travels as `mix` (the entries, read where the load was described).
    #[serde(serialize_with = "work::with_mix", deserialize_with = "work::read_mix")]
    pub work: Work,
    /// HTTP/1.1, HTTP/2 or HTTP/3, TLS, a connection per request, resumption, streams.
    pub transport: Transport,
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
    /// Requests in flight per connection (HTTP/1.1 pipelining).
    pub pipeline: u32,
    /// `--chunked`: the body sent `Transfer-Encoding: chunked`, in chunks of this many bytes
    /// (`--chunk-size`; `None`: with Content-Length).
    pub chunked: Option<u64>,
    /// What only a load has: headers, a body file, statuses, checks, TLS trust.
    pub http: HttpLoad,
    /// `--ws-ping`: ping frames, each answered by a pong, instead of echoed messages.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ws_ping: bool,
    /// gRPC (`grpc://`, `grpcs://`; mode `grpc`, the method as the path): the call's options.
    #[serde(skip_serializing_if = "GrpcLoad::is_default")]
    pub grpc: GrpcLoad,
    /// HTTP/3 (`--http3`, `transport.protocol` `h3`): what only a QUIC load has.
    #[serde(skip_serializing_if = "Http3Load::is_default")]
    pub http3: Http3Load,
}

/// An HTTP/3 load's options beside its [`Transport`] (`protocol` `h3`, `streams`, `new_conn`,
/// `tls_resume`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Http3Load {
    /// `--0rtt`: on a resumed connection (`--tls-resume tickets`), the request is sent in
    /// 0-RTT, before the handshake completes.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub zero_rtt: bool,
}

impl Http3Load {
    fn is_default(&self) -> bool {
        *self == Http3Load::default()
    }
}

/// A gRPC load's options beside its [`Work`] (the method is `work.paths`' one path, Echo's
/// payload size `work.size`): unary calls of the built-in benchmark service, or with `proto`
/// of any service.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GrpcLoad {
    /// `--deadline`: sent as `grpc-timeout` with every call.
    #[serde(with = "duration::opt_text")]
    pub deadline: Option<Duration>,
    /// `--proto`: a user's service, its method `work.paths`' one path (`--call`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proto: Option<ProtoCall>,
}

/// A call of any service (`--proto FILE -I DIR --call pkg.Svc/Method --data JSON`), as ghz
/// users write it. The files are compiled where the load is described and travel compiled
/// (`descriptors`): a client host or a later reading of a lap record needs none of them, and
/// the compiled set is what was called even if the files change after.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProtoCall {
    /// `--proto FILE`, as given.
    pub file: PathBuf,
    /// `-I/--import-path DIR`, as given (the file's folder is searched last).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub includes: Vec<PathBuf>,
    /// `--data` (or `--data-file`'s text): the request message as protobuf JSON, with
    /// `{rand:A-B}` placeholders drawn per call (empty: `{}`).
    pub data: String,
    /// `--data-file FILE`, as given (its text is `data`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_file: Option<PathBuf>,
    /// The compiled files, imports included: an encoded `FileDescriptorSet`, in base64.
    pub descriptors: String,
}

impl ProtoCall {
    /// Whether the request message draws `{rand:A-B}` per call.
    pub fn draws(&self) -> bool {
        self.data.contains("{rand:")
    }
}

impl GrpcLoad {
    fn is_default(&self) -> bool {
        *self == GrpcLoad::default()
    }
}

/// What only a load has, beside [`Work`] and [`Transport`]: its HTTP extras and TLS trust.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpLoad {
    /// Extra headers, `Name: value`.
    pub headers: Vec<String>,
    /// The request body read from a file (on the machine that runs the load).
    pub body_file: Option<PathBuf>,
    /// Status codes that are not errors (empty: any 2xx).
    pub expect_status: Vec<u16>,
    /// Every body must match the first body of its URL.
    pub verify: bool,
    /// Read every segment as it lands.
    pub eager_reads: bool,
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
            target: String::new(),
            work: Work::default(),
            transport: Transport::default(),
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
            pipeline: 1,
            chunked: None,
            http: HttpLoad::default(),
            ws_ping: false,
            grpc: GrpcLoad::default(),
            http3: Http3Load::default(),
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

    /// A spec from JSON: today's shape, or the shape before [`Work`] and [`Transport`]
    /// (`urls`, `tcp`, `http.method`...). Neither: today's shape's error.
    pub fn from_json(text: &str) -> Result<LoadSpec, SpecJsonError> {
        let now = match serde_json::from_str::<LoadSpec>(text) {
            Ok(spec) => return Ok(spec),
            Err(e) => e,
        };
        match serde_json::from_str::<before::Before>(text) {
            Ok(old) => Ok(LoadSpec::try_from(old)?),
            Err(_) => Err(SpecJsonError::Json(now)),
        }
    }
}

/// JSON that is not a load spec, in today's shape or the one before.
#[derive(Debug, thiserror::Error)]
pub enum SpecJsonError {
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Before(#[from] BeforeError),
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
        let mut spec = LoadSpec {
            duration: Some(Duration::from_millis(2500)),
            warmup: Duration::from_micros(250),
            io: crate::Io::Uring,
            transport: Transport {
                protocol: crate::Protocol::H2,
                streams: Some(16),
                tls_resume: Some(crate::TlsResume::Tickets),
                ..Transport::default()
            },
            http: HttpLoad {
                tls_version: Some(TlsVersion::V1_3),
                ..HttpLoad::default()
            },
            ..LoadSpec::default()
        };
        spec.at_urls(&["https://127.0.0.1:8443/hello".into()])
            .unwrap();
        let line = spec.to_line();
        assert!(!line.contains('\n'));
        assert!(line.contains(r#""duration":"2s 500ms""#), "{line}");
        assert!(line.contains(r#""tls_version":"1.3""#), "{line}");
        assert!(line.contains(r#""io":"uring""#), "{line}");
        assert!(line.contains(r#""target":"127.0.0.1:8443""#), "{line}");
        assert_eq!(LoadSpec::from_json(&line).unwrap(), spec);
    }

    #[test]
    fn a_partial_spec_takes_the_defaults_and_an_unknown_key_is_refused() {
        let spec: LoadSpec = LoadSpec::from_json(r#"{"target": "h:1", "duration": "3s"}"#).unwrap();
        assert_eq!((spec.connections, spec.pipeline), (50, 1));
        assert_eq!(spec.measured(), Duration::from_secs(3));
        let err = LoadSpec::from_json(r#"{"conections": 5}"#).unwrap_err();
        assert!(err.to_string().contains("conections"), "{err}");
        let err = LoadSpec::from_json(r#"{"work": {"pahts": []}}"#).unwrap_err();
        assert!(err.to_string().contains("pahts"), "{err}");
    }

    #[test]
    fn a_mix_travels_with_its_entries_and_comes_back_the_same() {
        let no_files = |_: &std::path::Path| Err(std::io::Error::other("none"));
        let mix = crate::Mix::parse("[[request]]\npath = \"/a\"\n", "m.toml".as_ref(), &no_files);
        let mut spec = LoadSpec::default();
        spec.at_urls(&["http://h:1".into()]).unwrap();
        spec.work.mix_requests = Some(mix.unwrap());
        let line = spec.to_line();
        assert!(line.contains(r#""mix_requests""#), "{line}");
        assert_eq!(LoadSpec::from_json(&line).unwrap(), spec);
    }

    #[test]
    fn a_spec_file_in_the_shape_before_work_and_transport_still_reads() {
        let text = include_str!("../tests/fixtures/spec-before-work.json");
        let spec = LoadSpec::from_json(text).unwrap();
        assert_eq!(spec.target, "127.0.0.1:8443");
        assert_eq!(spec.work.paths, ["/hello", "/upload?x={rand:1-9}"]);
        assert_eq!(spec.work.method, Some(crate::Method::Put));
        assert_eq!(spec.work.body_size, Some("1KB..2KB".parse().unwrap()));
        assert_eq!(
            (spec.chunked, spec.pipeline, spec.rate),
            (Some(4096), 1, Some(1000.0))
        );
        let t = &spec.transport;
        assert!(t.tls && t.new_conn && t.protocol.is_h1());
        assert_eq!(t.tls_resume, Some(crate::TlsResume::Tickets));
        assert_eq!(spec.http.cacert, Some(PathBuf::from("/run/tls/cert.pem")));
        assert_eq!(spec.http.expect_status, [200, 201]);
        assert_eq!(spec.urls()[1], "https://127.0.0.1:8443/upload?x={rand:1-9}");
        assert_eq!(LoadSpec::from_json(&spec.to_line()).unwrap(), spec);

        let text = include_str!("../tests/fixtures/spec-before-work-tcp.json");
        let tcp = LoadSpec::from_json(text).unwrap();
        assert_eq!(tcp.target, "127.0.0.1:9000");
        assert_eq!(tcp.work.mode, crate::Mode::TcpStream);
        assert_eq!(tcp.work.message.as_deref(), Some("hello world"));
        assert!(tcp.urls().is_empty());
        assert!(tcp.validate(&Origin::Flags).is_ok());
    }
}
