//! Every rule about a [`LoadSpec`], checked once: [`LoadSpec::validate`]. The CLI's flags, a
//! suite's scenario x profile and a client host's share all become a spec and are checked here;
//! the engine then only resolves and prepares. An error names the option as its origin spells
//! it: the flag (`--body-size`) for flags, the suite key (`body_size`) for a suite.

use super::{LoadSpec, MAX_BODY_SIZE};
use crate::{Method, Mode, TlsResume, Workload};
use std::fmt;

/// One option of a load, with its flag and its suite key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Connections,
    Threads,
    Duration,
    Requests,
    Timeout,
    Rate,
    ConnectRate,
    Pipeline,
    Streams,
    NewConn,
    TlsResume,
    ReconnectEvery,
    Method,
    Body,
    BodyFile,
    BodySize,
    Chunked,
    ChunkSize,
    Mix,
    Message,
    Size,
    MessageSize,
    Binary,
    WsPing,
    Http2,
    /// The gRPC method, the path of a `grpc://` URL.
    GrpcMethod,
    Deadline,
    /// `--stream`: gRPC streaming calls.
    Stream,
    StreamMessages,
    Proto,
    Data,
    Verify,
    /// `--http3`: the transport's protocol `h3`.
    Http3,
    /// `--0rtt`: HTTP/3 requests in 0-RTT on resumed connections.
    ZeroRtt,
    TlsVersion,
}

/// Where in a suite a key is written: the scenario (what is requested) or the profile (how
/// hard).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Scenario,
    Profile,
}

impl Key {
    /// `serverbench load`'s spelling: `--body-size`, `-c/--connections`.
    pub fn flag(self) -> &'static str {
        match self {
            Key::Connections => "-c/--connections",
            Key::Threads => "-t/--threads",
            Key::Duration => "-d/--duration",
            Key::Requests => "-n/--requests",
            Key::Timeout => "--timeout",
            Key::Rate => "-R/--rate",
            Key::ConnectRate => "--connect-rate",
            Key::Pipeline => "-p/--pipeline",
            Key::Streams => "-m/--streams",
            Key::NewConn => "--new-conn",
            Key::TlsResume => "--tls-resume",
            Key::ReconnectEvery => "--reconnect-every",
            Key::Method => "-X/--method",
            Key::Body => "--body",
            Key::BodyFile => "--body-file",
            Key::BodySize => "--body-size",
            Key::Chunked => "--chunked",
            Key::ChunkSize => "--chunk-size",
            Key::Mix => "--mix",
            Key::Message => "--message",
            Key::Size => "--size",
            Key::MessageSize => "--message-size",
            Key::Binary => "--binary",
            Key::WsPing => "--ws-ping",
            Key::Http2 => "--http2",
            Key::GrpcMethod => "grpc://HOST:PORT/package.Service/Method",
            Key::Deadline => "--deadline",
            Key::Stream => "--stream",
            Key::StreamMessages => "--stream-messages",
            Key::Proto => "--proto",
            Key::Data => "--data",
            Key::Verify => "--verify",
            Key::Http3 => "--http3",
            Key::ZeroRtt => "--0rtt",
            Key::TlsVersion => "--tls-version",
        }
    }

    /// A suite's spelling: `body_size`, `connections` (a file has no body in a suite: `body`).
    pub fn suite_key(self) -> &'static str {
        match self {
            Key::Connections => "connections",
            Key::Threads => "threads",
            Key::Duration => "duration",
            Key::Requests => "requests",
            Key::Timeout => "timeout",
            Key::Rate => "rate",
            Key::ConnectRate => "connect_rate",
            Key::Pipeline => "pipeline",
            Key::Streams => "streams",
            Key::NewConn => "new_conn",
            Key::TlsResume => "tls_resume",
            Key::ReconnectEvery => "reconnect_every",
            Key::Method => "method",
            Key::Body | Key::BodyFile => "body",
            Key::BodySize => "body_size",
            Key::Chunked => "chunked",
            Key::ChunkSize => "chunk_size",
            Key::Mix => "mix",
            Key::Message => "message",
            Key::Size | Key::MessageSize => "size",
            Key::Binary => "binary",
            Key::WsPing => "ws_ping",
            Key::Http2 => "protocol",
            Key::GrpcMethod => "paths",
            Key::Deadline => "deadline",
            Key::Stream => "stream",
            Key::StreamMessages => "stream_messages",
            Key::Proto => "proto",
            Key::Data => "data",
            Key::Verify => "verify",
            Key::Http3 => "protocol",
            Key::ZeroRtt => "zero_rtt",
            Key::TlsVersion => "tls_version",
        }
    }

    /// The suite table the key is written in.
    pub fn table(self) -> Table {
        match self {
            Key::Connections
            | Key::Threads
            | Key::Duration
            | Key::Requests
            | Key::Timeout
            | Key::Rate
            | Key::ConnectRate
            | Key::Pipeline => Table::Profile,
            _ => Table::Scenario,
        }
    }
}

/// Where a spec came from: how its errors spell the options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `serverbench load`'s flags (or `--spec`, which has their names).
    Flags,
    /// A suite's scenario at one of its profiles (by name).
    Suite { scenario: String, profile: String },
}

impl Origin {
    fn spell(&self, key: Key) -> &'static str {
        match self {
            Origin::Flags => key.flag(),
            Origin::Suite { .. } => key.suite_key(),
        }
    }
}

/// What is wrong with a key; other keys it names are spelled as the origin spells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    AtLeastOne,
    MoreThanZero,
    NotEmpty,
    /// Only one of the two may be given.
    Excludes(Key),
    /// Needs the other key (and why).
    Needs(Key, &'static str),
    /// Does not apply to this workload.
    NotFor(Workload),
    /// Applies with HTTP/1.1 only.
    Http1Only,
    /// Does not apply to HTTP/2: streams are its requests in flight.
    NotHttp2,
    /// Cannot be combined with the other key (and why).
    With(Key, &'static str),
    /// A body larger than [`MAX_BODY_SIZE`].
    TooLarge(crate::SizeRange),
    /// Chunks of no body.
    NeedsBody,
    /// A request option with a workload that sends no HTTP request.
    HttpOnly(Workload),
    /// A mix entry has its own method and body.
    MixHasIt,
    /// A message of this many bytes, over what the frame may carry (WebSocket: 16 MiB a
    /// message, 125 bytes a ping).
    Over(usize, usize),
    /// A `grpc://` URL without `/package.Service/Method`.
    NoGrpcMethod,
    /// A method the built-in benchmark service does not have (the path given).
    UnknownGrpcMethod(String),
    /// An option of the benchmark service's Echo and of streams only (the method given).
    EchoOnly(String),
    /// A stream kind with a URL naming another method (the method given).
    StreamMethod(GrpcStream, String),
    /// A streaming method without its stream kind.
    StreamNeeded(GrpcStream),
    /// Streaming calls of this many messages of this many bytes: over the limits.
    StreamOver(u64, u64),
    /// `--proto` without its compiled descriptors (a spec written by hand).
    NotCompiled,
    /// `--verify` with a message drawn per call: each reply answers another question.
    Draws,
    /// HTTP/3 over a URL without TLS: QUIC carries TLS 1.3.
    NeedsTls,
    /// HTTP/3 with `--io uring`: the QUIC driver runs on epoll only.
    EpollOnly,
}

/// A rule a [`LoadSpec`] breaks: the key, what is wrong, and where the spec came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {}", self.location(), self.message())]
pub struct SpecError {
    pub key: Key,
    pub why: Why,
    pub origin: Origin,
}

impl SpecError {
    /// The flag (`--body-size`), or the suite key and its table (`body_size in [[scenario]]
    /// hello`).
    pub fn location(&self) -> String {
        match &self.origin {
            Origin::Flags => self.key.flag().to_string(),
            Origin::Suite { scenario, profile } => {
                let name = match self.key.table() {
                    Table::Scenario => scenario,
                    Table::Profile => profile,
                };
                let table = self.key.table();
                format!("{} in [[{table}]] {name}", self.key.suite_key())
            }
        }
    }

    /// What is wrong, without the key: other keys spelled as the origin spells them, and for a
    /// suite's profile key, the scenario it was combined with.
    pub fn message(&self) -> String {
        let o = &self.origin;
        let text = match &self.why {
            Why::AtLeastOne => "must be at least 1".to_string(),
            Why::MoreThanZero => "must be more than 0".to_string(),
            Why::NotEmpty => "must not be empty (leave it out for none)".to_string(),
            Why::Excludes(other) => format!("cannot be combined with {}", o.spell(*other)),
            Why::Needs(other, why) => format!("needs {}{why}", o.spell(*other)),
            Why::NotFor(w) => format!("does not apply to {}", workload_name(*w, o)),
            Why::Http1Only => "applies to HTTP/1.1 only: the engine sends no drawn or chunked \
                               body over HTTP/2 or HTTP/3"
                .to_string(),
            Why::NotHttp2 => format!(
                "does not apply to HTTP/2 ({} sets the requests in flight per connection)",
                o.spell(Key::Streams)
            ),
            Why::With(other, why) => format!("cannot be combined with {}{why}", o.spell(*other)),
            Why::TooLarge(r) => {
                format!("{r}: at most 1GiB (each load thread holds the largest body)")
            }
            Why::NeedsBody => format!(
                "needs a body ({} or {})",
                o.spell(Key::Body),
                o.spell(Key::BodySize)
            ),
            Why::HttpOnly(w) => match o {
                Origin::Flags => {
                    format!("applies to HTTP requests, not to {}", workload_name(*w, o))
                }
                Origin::Suite { .. } => {
                    "applies to http only (ws and tcp scenarios send no request)".to_string()
                }
            },
            Why::Over(size, max) => format!("{size} bytes is over the {max} bytes it may carry"),
            Why::NoGrpcMethod => match o {
                Origin::Flags => format!(
                    "a grpc:// URL needs its method as the path: {}",
                    grpc::METHODS.join(" or ")
                ),
                Origin::Suite { .. } => format!(
                    "a grpc scenario needs its method as its one path: paths = [\"{}\"] (or {})",
                    grpc::SUM,
                    grpc::ECHO
                ),
            },
            Why::UnknownGrpcMethod(m) => format!(
                "`{m}` is not a method of the built-in benchmark service ({}; other services \
                 need --proto FILE)",
                grpc::METHODS.join(", ")
            ),
            Why::EchoOnly(m) => format!(
                "applies to {} and to {} only, not to `{m}`",
                grpc::ECHO,
                o.spell(Key::Stream)
            ),
            Why::StreamMethod(k, m) => format!(
                "`{k}` calls {}, not `{m}` (name it as the URL's path, or leave the path out)",
                k.method().path()
            ),
            Why::StreamNeeded(k) => format!(
                "{} is a streaming method: give {} {k}",
                k.method().path(),
                o.spell(Key::Stream)
            ),
            Why::StreamOver(n, size) => format!(
                "{n} messages of {size} bytes per call: at most {} messages and {} MiB per call",
                grpc::MAX_STREAM_MESSAGES,
                grpc::MAX_STREAM_BYTES >> 20
            ),
            Why::NotCompiled => "its compiled descriptors are missing from the spec (give \
                                 --proto FILE on a command line, which compiles it)"
                .to_string(),
            Why::Draws => format!(
                "cannot be combined with {{rand:A-B}} in {}: each call asks another question, \
                 so replies differ",
                o.spell(Key::Data)
            ),
            Why::NeedsTls => match o {
                Origin::Flags => "needs https://: QUIC carries TLS 1.3".to_string(),
                Origin::Suite { .. } => "h3 needs TLS: QUIC carries TLS 1.3".to_string(),
            },
            Why::EpollOnly => "runs on epoll only: the QUIC driver has no io_uring path (leave \
                               out --io uring)"
                .to_string(),
            Why::MixHasIt => format!(
                "a mix entry has its own method and body: give them in the mix file (not with {})",
                o.spell(Key::Mix)
            ),
        };
        match o {
            Origin::Suite { scenario, .. } if self.key.table() == Table::Profile => {
                format!("{text} (scenario `{scenario}`)")
            }
            _ => text,
        }
    }
}

/// A workload as the origin names it: `ws:// URLs` and `--tcp` for flags, the mode for a suite.
fn workload_name(w: Workload, o: &Origin) -> String {
    match (o, w) {
        (Origin::Flags, Workload::WebSocket) => "ws:// and wss:// URLs".into(),
        (Origin::Flags, Workload::TcpStream | Workload::TcpPingPong) => "--tcp".into(),
        (Origin::Flags, Workload::Http2) => "--http2".into(),
        (Origin::Flags, Workload::Http3) => "--http3".into(),
        (Origin::Flags, Workload::Grpc) => "grpc:// and grpcs:// URLs".into(),
        (Origin::Suite { .. }, Workload::Http2) => "h2 and h2c".into(),
        (Origin::Suite { .. }, Workload::Http3) => "h3".into(),
        (Origin::Suite { .. }, _) => format!("{} scenarios", w.mode().as_str()),
        (Origin::Flags, _) => w.as_str().into(),
    }
}

type Rule = Result<(), (Key, Why)>;

/// The WebSocket message when neither a message nor its size is given.
pub const DEFAULT_WS_MESSAGE: &str = "hello world";
/// The largest WebSocket message the engine sends or takes (16 MiB).
pub const MAX_WS_MESSAGE: usize = 16 << 20;
/// The largest ping payload (a control frame's, RFC 6455 section 5.5).
pub const MAX_WS_PING: usize = 125;

impl LoadSpec {
    /// What runs: the work's mode, HTTP/3, HTTP/2 or HTTP/1.1 by the transport's protocol.
    pub fn workload(&self) -> Workload {
        match self.work.mode {
            Mode::TcpStream => Workload::TcpStream,
            Mode::TcpPingpong => Workload::TcpPingPong,
            Mode::Ws => Workload::WebSocket,
            Mode::Grpc => Workload::Grpc,
            Mode::Http if self.transport.protocol.is_h3() => Workload::Http3,
            Mode::Http if self.transport.protocol.is_h2() => Workload::Http2,
            Mode::Http => Workload::Http1,
        }
    }

    /// Concurrent streams per connection (one unless HTTP/2, HTTP/3 or gRPC asks for more).
    pub fn streams(&self) -> u32 {
        self.transport.streams.unwrap_or(1)
    }

    /// Checks every rule about the spec that needs no I/O (the target's address, files and
    /// templates are the engine's to resolve); the error names the key as `origin` spells it.
    pub fn validate(&self, origin: &Origin) -> Result<(), SpecError> {
        self.pace()
            .and_then(|()| self.connection())
            .and_then(|()| self.request())
            .map_err(|(key, why)| SpecError {
                key,
                why,
                origin: origin.clone(),
            })
    }

    /// How many, how long, how fast.
    fn pace(&self) -> Rule {
        let positive = |x: f64| x > 0.0 && x.is_finite();
        let pipeline = self.pipeline;
        match () {
            _ if self.connections == 0 => Err((Key::Connections, Why::AtLeastOne)),
            _ if self.threads == Some(0) => Err((Key::Threads, Why::AtLeastOne)),
            _ if self.duration.is_some_and(|d| d.is_zero()) => {
                Err((Key::Duration, Why::MoreThanZero))
            }
            _ if self.requests == Some(0) => Err((Key::Requests, Why::AtLeastOne)),
            _ if self.timeout.is_zero() => Err((Key::Timeout, Why::MoreThanZero)),
            _ if pipeline == 0 => Err((Key::Pipeline, Why::AtLeastOne)),
            _ if self.rate.is_some_and(|r| !positive(r)) => Err((Key::Rate, Why::MoreThanZero)),
            _ if self.rate.is_some() && pipeline > 1 => {
                Err((Key::Rate, Why::With(Key::Pipeline, " > 1")))
            }
            _ if self.connect_rate.is_some_and(|r| !positive(r)) => {
                Err((Key::ConnectRate, Why::MoreThanZero))
            }
            _ => Ok(()),
        }
    }

    /// Streams, pipelining, a connection per request, resumption, reconnects and TCP echo.
    fn connection(&self) -> Rule {
        let (t, w, pipeline) = (&self.transport, self.workload(), self.pipeline);
        let one_request = " (one request per connection)";
        match () {
            _ if t.streams == Some(0) => Err((Key::Streams, Why::AtLeastOne)),
            _ if self.streams() > 1 && !w.has_streams() => Err((
                Key::Streams,
                Why::Needs(Key::Http2, " (or --http3, or a grpc:// URL)"),
            )),
            _ if pipeline > 1 && w == Workload::Http2 => Err((Key::Pipeline, Why::NotHttp2)),
            _ if t.new_conn && !w.is_http() => Err((Key::NewConn, Why::NotFor(w))),
            _ if t.new_conn && self.streams() > 1 => {
                Err((Key::Streams, Why::With(Key::NewConn, one_request)))
            }
            _ if t.new_conn && pipeline > 1 => {
                Err((Key::Pipeline, Why::With(Key::NewConn, one_request)))
            }
            _ if t.new_conn && self.rate.is_some() => Err((
                Key::Rate,
                Why::With(Key::NewConn, " (connections are opened in a closed loop)"),
            )),
            _ if t.tls_resume.is_some_and(|r| r != TlsResume::Off) && !t.new_conn => Err((
                Key::TlsResume,
                Why::Needs(Key::NewConn, " (keep-alive connections handshake once)"),
            )),
            _ => self
                .http3_rules(w)
                .and_then(|()| self.reconnects_and_echo(w))
                .and_then(|()| self.websocket(w))
                .and_then(|()| self.grpc_rules(w)),
        }
    }

    /// A WebSocket message: text or binary frames, or pings, of one message or a drawn size.
    fn websocket(&self, w: Workload) -> Rule {
        let (work, ping) = (&self.work, self.ws_ping);
        let http = w.is_http();
        if w != Workload::WebSocket {
            return match () {
                _ if work.binary => Err((Key::Binary, Why::NotFor(w))),
                _ if ping => Err((Key::WsPing, Why::NotFor(w))),
                _ if http && work.size.is_some() => Err((Key::MessageSize, Why::NotFor(w))),
                _ => Ok(()),
            };
        }
        let given = work.size.map(|n| n as usize);
        let size = work.message.as_ref().map(String::len).or(given);
        match size.unwrap_or(DEFAULT_WS_MESSAGE.len()) {
            _ if self.transport.protocol.is_h2() => Err((Key::Http2, Why::NotFor(w))),
            _ if work.message.is_some() && work.size.is_some() => {
                Err((Key::MessageSize, Why::Excludes(Key::Message)))
            }
            n if n > MAX_WS_MESSAGE => match work.message {
                Some(_) => Err((Key::Message, Why::Over(n, MAX_WS_MESSAGE))),
                None => Err((Key::MessageSize, Why::Over(n, MAX_WS_MESSAGE))),
            },
            _ if ping && work.binary => Err((Key::WsPing, Why::Excludes(Key::Binary))),
            n if ping && n > MAX_WS_PING => Err((Key::WsPing, Why::Over(n, MAX_WS_PING))),
            _ => Ok(()),
        }
    }

    fn reconnects_and_echo(&self, w: Workload) -> Rule {
        let tcp = matches!(w, Workload::TcpStream | Workload::TcpPingPong);
        let work = &self.work;
        match work.reconnect_every {
            Some(0) => Err((Key::ReconnectEvery, Why::AtLeastOne)),
            Some(_) if self.transport.new_conn => {
                let why = " (a connection per request)";
                Err((Key::ReconnectEvery, Why::With(Key::NewConn, why)))
            }
            Some(_) if tcp => Err((Key::ReconnectEvery, Why::NotFor(w))),
            _ if w == Workload::TcpStream && work.message.as_deref().unwrap_or("").is_empty() => {
                Err((Key::Message, Why::NotEmpty))
            }
            _ if w == Workload::TcpPingPong && work.size == Some(0) => {
                Err((Key::Size, Why::AtLeastOne))
            }
            _ if w == Workload::TcpStream && self.rate.is_some() => {
                Err((Key::Rate, Why::NotFor(w)))
            }
            _ => Ok(()),
        }
    }

    /// The first request option given: the body, its size, chunks, the method (when not GET;
    /// a body makes a suite's POST).
    fn request_key(&self) -> Option<Key> {
        let w = &self.work;
        [
            (w.body.is_some(), Key::Body),
            (self.http.body_file.is_some(), Key::BodyFile),
            (w.body_size.is_some(), Key::BodySize),
            (self.chunked.is_some(), Key::Chunked),
            (w.method.is_some_and(|m| m != Method::Get), Key::Method),
        ]
        .into_iter()
        .find_map(|(given, key)| given.then_some(key))
    }

    /// The request's method and body: what applies to which workload, and with what.
    fn request(&self) -> Rule {
        let (h, w) = (&self.work, self.workload());
        let mix = h.mix.is_some() || h.mix_requests.is_some();
        let Some(first) = self.request_key() else {
            return match (mix, w) {
                (true, _) if w.is_http() => Ok(()),
                (false, _) => Ok(()),
                (true, _) => Err((Key::Mix, Why::HttpOnly(w))),
            };
        };
        if !w.is_http() {
            return Err((first, Why::HttpOnly(w)));
        }
        if mix {
            return Err((first, Why::MixHasIt));
        }
        let (file, chunked) = (self.http.body_file.is_some(), self.chunked);
        let body = h.body.is_some() || file;
        if let Some(r) = h.body_size.filter(|r| r.max > MAX_BODY_SIZE) {
            return Err((Key::BodySize, Why::TooLarge(r)));
        }
        match () {
            _ if h.body.is_some() && file => Err((Key::BodyFile, Why::Excludes(Key::Body))),
            _ if h.body_size.is_some() && body => {
                let other = match h.body.is_some() {
                    true => Key::Body,
                    false => Key::BodyFile,
                };
                Err((Key::BodySize, Why::Excludes(other)))
            }
            _ if h.body.as_deref() == Some("") => Err((Key::Body, Why::NotEmpty)),
            _ if chunked.is_some() && !body && h.body_size.is_none() => {
                Err((Key::Chunked, Why::NeedsBody))
            }
            _ if chunked == Some(0) => Err((Key::ChunkSize, Why::AtLeastOne)),
            _ if w != Workload::Http1 && chunked.is_some() => Err((Key::Chunked, Why::Http1Only)),
            _ if w != Workload::Http1 && h.body_size.is_some() => {
                Err((Key::BodySize, Why::Http1Only))
            }
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Table::Scenario => "scenario",
            Table::Profile => "profile",
        })
    }
}

mod grpc;
mod h3;
pub use grpc::{grpc_method, GrpcMethod, GrpcStream, MAX_GRPC_MESSAGE};
pub use grpc::{DEFAULT_STREAM_MESSAGES, DEFAULT_STREAM_MESSAGE_SIZE, MAX_STREAM_BYTES};

#[cfg(test)]
mod tests;
