//! What to load and how: protocol x schedule x stop, plus validation whose errors name the flag.

use crate::h2;
use crate::request::{Body, RequestTemplate, TemplateError};
use crate::tls::{TlsOptions, TlsSpec};
use serverbench_model::{LoadSpec, Method, TlsResume};
use std::net::SocketAddr;
use std::time::Duration;

mod grpc;
mod h3;
mod mix;
mod spec;
mod url;
mod ws;

pub use grpc::{grpc_target, GrpcSpec, GrpcTarget};
pub use h3::{h3_target, H3Spec};
use mix::{wanted, Wanted};
pub use mix::{MixPlan, Picker};
pub use url::{resolve, split_host_port, HostPortError, Url};
pub use ws::{ws_target, WsKind, WsSpec, DEFAULT_MESSAGE};

/// A configuration problem, reported before any load is generated.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("malformed URL `{url}`: {why}")]
    BadUrl { url: String, why: String },
    #[error("cannot resolve host `{host}`")]
    Unresolvable { host: String },
    #[error("give at least one URL, or --tcp HOST:PORT")]
    NoTarget,
    #[error("{flag}: {why}")]
    Flag { flag: &'static str, why: String },
    /// A flag and what is wrong with its value, the value first: ``--tcp `x`: give HOST:PORT``.
    #[error("{flag} {why}")]
    Value { flag: &'static str, why: String },
    #[error(transparent)]
    Request(#[from] TemplateError),
    /// A rule of the load spec ([`serverbench_model::LoadSpec::validate`]).
    #[error(transparent)]
    Spec(#[from] serverbench_model::spec::SpecError),
}

impl From<crate::tls::FlagError> for ConfigError {
    fn from(e: crate::tls::FlagError) -> Self {
        ConfigError::Flag {
            flag: e.flag,
            why: e.why,
        }
    }
}

impl ConfigError {
    /// A problem with one command-line flag.
    pub fn flag(flag: &'static str, why: impl Into<String>) -> Self {
        ConfigError::Flag {
            flag,
            why: why.into(),
        }
    }

    /// A problem with the value given to one flag; `why` starts with the value.
    pub fn value(flag: &'static str, why: impl Into<String>) -> Self {
        ConfigError::Value {
            flag,
            why: why.into(),
        }
    }
}

/// What each connection sends and how responses are framed.
#[derive(Debug, Clone)]
pub enum Protocol {
    /// HTTP/1.1: one serialized request per URL, rotated per request (`--mix`: per entry,
    /// drawn by weight).
    Http(HttpSpec),
    /// HTTP/2 (`--http2`): h2 over TLS, h2c with prior knowledge; streams per connection.
    Http2(Http2Spec),
    /// TCP echo, writing `message` repeated as fast as the socket takes it.
    TcpStream { message: Vec<u8> },
    /// TCP echo, one `size`-byte message at a time, waiting for the whole echo.
    TcpPingPong { size: usize },
    /// WebSocket (`ws://`, `wss://`): an HTTP/1.1 upgrade, then one message per frame, echoed.
    WebSocket(WsSpec),
    /// gRPC (`grpc://`, `grpcs://`): unary calls as HTTP/2 streams, each judged.
    Grpc(GrpcSpec),
    /// HTTP/3 (`--http3`): QUIC over UDP, a request per bidirectional stream.
    Http3(H3Spec),
}

impl Protocol {
    /// HTTP/1.1 whose result reports bodies ([`HttpSpec::count_bodies`]).
    #[inline]
    pub fn counting_bodies(&self) -> Option<&HttpSpec> {
        match self {
            Protocol::Http(h) if h.count_bodies => Some(h),
            _ => None,
        }
    }
}

/// The prepared HTTP requests.
#[derive(Debug, Clone)]
pub struct HttpSpec {
    /// What to send for each URL, prepared once (a constant request is its bytes).
    pub requests: Vec<RequestTemplate>,
    /// HEAD responses carry no body.
    pub head: bool,
    /// `--expect-status`: codes that are not errors (empty: any 2xx).
    pub expect_status: Vec<u16>,
    /// `--verify`: compare each body's length and checksum with the first one per URL.
    pub verify: bool,
    /// The result reports bodies: requests carry one, `--verify`, or an `Accept-Encoding`.
    pub count_bodies: bool,
}

/// The prepared HTTP/2 requests.
#[derive(Debug, Clone)]
pub struct Http2Spec {
    /// One HEADERS frame (and body) per URL, encoded once.
    pub requests: Vec<h2::Request>,
    /// HEAD responses carry no body.
    pub head: bool,
    /// `--expect-status`: codes that are not errors (empty: any 2xx).
    pub expect_status: Vec<u16>,
    /// `--verify`: compare each body's length and checksum with the first one per URL.
    pub verify: bool,
    /// `-m/--streams`: concurrent streams per connection (the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS may lower it).
    pub streams: u32,
    /// The receive window we advertise per stream and for the connection.
    pub window: u32,
}

/// When requests are sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schedule {
    /// As fast as responses come back, `depth` requests in flight per connection.
    ClosedLoop { depth: u32 },
    /// Open loop at `per_second` requests/s in total, latency from the intended send time.
    Rate { per_second: f64 },
}

/// When a closed-loop connection wakes up to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reads {
    /// Once the bytes of its whole window of pipelined responses (HTTP/2: of its open
    /// streams) can have arrived (`SO_RCVLOWAT`): one wake-up per window. A pipelined response is timed when its
    /// window is read, which adds at most the time the server takes to send that window.
    #[default]
    Window,
    /// On every segment: each pipelined response is timed as it lands, at the cost of more
    /// client CPU (`--eager-reads`).
    Eager,
}

/// How long a connection lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lifetime {
    /// As long as the server keeps it (HTTP keep-alive): connect and handshake once.
    #[default]
    KeepAlive,
    /// `--new-conn`: one request per connection (sent with `Connection: close`), then a new
    /// connection; each costs a connect, and over TLS a handshake.
    PerRequest,
}

/// When the run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Duration(Duration),
    Requests(u64),
}

/// A validated load configuration: the [`LoadSpec`] it was made from (the pace is read from
/// it: connections, warm-up, timeout, CPUs, connect rate, io, reconnects) and what was prepared
/// from it: the address, the protocol's requests, TLS, the schedule, the mix's plan.
///
/// [`LoadSpec`]: serverbench_model::LoadSpec
#[derive(Debug, Clone)]
pub struct Config {
    /// The load as described; a `Config` made by hand keeps its pace here too.
    pub spec: serverbench_model::LoadSpec,
    pub addr: SocketAddr,
    /// Printable names of the target(s), for the result.
    pub target: Vec<String>,
    pub protocol: Protocol,
    pub schedule: Schedule,
    pub stop: Stop,
    /// Worker threads: the spec's, or one per CPU it is pinned to (or per CPU available).
    pub threads: u32,
    /// `--eager-reads`: when pipelined responses are read.
    pub reads: Reads,
    /// `--idle`: what a worker does when its poll finds nothing.
    pub idle: crate::idle::Idle,
    /// `https://`: TLS on every connection (None: plain TCP).
    pub tls: Option<TlsSpec>,
    /// `--new-conn`: a connection per request instead of keep-alive.
    pub lifetime: Lifetime,
    /// `--mix`: the protocol's requests are the mix's entries, drawn by weight.
    pub mix: Option<MixPlan>,
}

/// The spec's URLs parsed (at least one), its `-H` headers checked: what every HTTP driver's
/// target starts from.
pub(crate) fn parsed_urls(spec: &LoadSpec) -> Result<Vec<Url>, ConfigError> {
    let urls = spec.urls();
    if urls.is_empty() {
        return Err(ConfigError::NoTarget);
    }
    for h in &spec.http.headers {
        if !h.contains(':') || h.contains(['\r', '\n']) {
            return Err(ConfigError::flag(
                "-H/--header",
                format!("`{h}` is not `Name: value`"),
            ));
        }
    }
    urls.iter().map(|u| Url::parse(u)).collect()
}

/// A resolved HTTP target: where to connect, the serialized requests, and TLS for `https://`.
#[derive(Debug, Clone)]
pub struct HttpTarget {
    pub addr: SocketAddr,
    pub protocol: Protocol,
    pub tls: Option<TlsSpec>,
}

/// Parses the spec's URLs (one scheme and host:port, as [`LoadSpec::at_urls`] made them),
/// resolves the host, builds the TLS configuration and serializes one request per URL (or per
/// `--mix` entry). Reads `--body-file`; everything else comes from the spec as it is.
pub fn http_target(spec: &LoadSpec) -> Result<HttpTarget, ConfigError> {
    let parsed = parsed_urls(spec)?;
    let first = &parsed[0];
    let method = spec.work.method.unwrap_or(Method::Get).as_str();
    let headers = &spec.http.headers;
    let body = spec::body_of(spec)?;
    let mix = spec.work.mix_requests.as_ref();
    let wanted = wanted(method, &parsed, headers, body.as_deref(), mix)?;
    let h2 = spec.transport.protocol.is_h2();
    let alpn: &[&[u8]] = if h2 { &[b"h2"] } else { &[b"http/1.1"] };
    let tls_options = spec::tls_options(spec);
    let tls = match first.tls {
        true => Some(TlsSpec::new(&tls_options, &first.host, alpn)?),
        false => {
            plain_refuses_tls_flags(&tls_options)?;
            None
        }
    };
    let addr = resolve(&first.host, first.port)?;
    if h2 {
        let protocol = http2_spec(method, first, &wanted, spec)?;
        return Ok(HttpTarget {
            addr,
            protocol,
            tls,
        });
    }
    let has_connection = headers.iter().any(|h| {
        h.split(':')
            .next()
            .is_some_and(|n| n.trim().eq_ignore_ascii_case("connection"))
    });
    let host = first.host_header();
    // --body-size applies to the URLs' requests; a mix entry carries its own body.
    let body_size = match mix {
        None => spec
            .work
            .body_size
            .map(|r| (r.min as usize, r.max as usize)),
        Some(_) => None,
    };
    let chunked = spec.chunked.map(|c| c as usize);
    let requests: Vec<RequestTemplate> = wanted
        .into_iter()
        .map(|w| {
            let mut headers = w.headers;
            if spec.transport.new_conn && !has_connection {
                headers.push("Connection: close".into());
            }
            let body = Body::of(w.body, body_size, chunked)?;
            RequestTemplate::new(w.method, w.path, &host, &headers, body, chunked)
        })
        .collect::<Result<_, _>>()?;
    let count_bodies = spec.http.verify
        || requests
            .iter()
            .any(|t| t.sends_body() || t.accepts != Default::default());
    let prepared = HttpSpec {
        count_bodies,
        requests,
        head: method.eq_ignore_ascii_case("HEAD"),
        expect_status: spec.http.expect_status.clone(),
        verify: spec.http.verify,
    };
    Ok(HttpTarget {
        addr,
        protocol: Protocol::Http(prepared),
        tls,
    })
}

/// Headers that belong to one HTTP/1.1 connection and are not sent over HTTP/2 (RFC 9113
/// section 8.2.2) or HTTP/3 (RFC 9114 section 4.2); `Host` becomes `:authority`.
pub(crate) const HOP_BY_HOP: [&str; 6] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// Encodes one HTTP/2 request per URL (or mix entry).
fn http2_spec(
    method: &str,
    url: &Url,
    wanted: &[Wanted],
    spec: &LoadSpec,
) -> Result<Protocol, ConfigError> {
    let mut requests = Vec::with_capacity(wanted.len());
    for w in wanted {
        let split = |h: &String| {
            let (n, v) = h.split_once(':').expect("checked `Name: value`");
            (n.trim().to_ascii_lowercase(), v.trim().to_string())
        };
        let given: Vec<(String, String)> = w.headers.iter().map(split).collect();
        let host = given
            .iter()
            .find(|(n, _)| n == "host")
            .map(|(_, v)| v.clone());
        let mut headers: Vec<(String, String)> = given
            .into_iter()
            .filter(|(n, _)| !HOP_BY_HOP.contains(&n.as_str()))
            .collect();
        if let Some(body) = w.body {
            if !headers.iter().any(|(n, _)| n == "content-length") {
                headers.push(("content-length".into(), body.len().to_string()));
            }
        }
        let scheme = if url.tls { "https" } else { "http" };
        let authority = host.unwrap_or_else(|| url.host_header());
        let block = h2::hpack::encode_request(w.method, scheme, &authority, w.path, &headers);
        if block.len() > h2::MAX_REQUEST_BLOCK {
            return Err(ConfigError::flag(
                "-H/--header",
                format!(
                    "the HTTP/2 request headers take {} bytes encoded; at most {} fit",
                    block.len(),
                    h2::MAX_REQUEST_BLOCK
                ),
            ));
        }
        requests.push(h2::Request::new(&block, w.body));
    }
    Ok(Protocol::Http2(Http2Spec {
        requests,
        head: method.eq_ignore_ascii_case("HEAD"),
        expect_status: spec.http.expect_status.clone(),
        verify: spec.http.verify,
        streams: spec.streams(),
        window: h2::DEFAULT_WINDOW,
    }))
}

/// TLS flags with an `http://` URL are a mistake worth naming.
pub(crate) fn plain_refuses_tls_flags(t: &TlsOptions) -> Result<(), ConfigError> {
    let why = "applies to https:// URLs only";
    if t.trust != Default::default() {
        return Err(ConfigError::flag("--cacert/-k", why));
    }
    if t.version.is_some() {
        return Err(ConfigError::flag("--tls-version", why));
    }
    if t.resume != TlsResume::Off {
        return Err(ConfigError::flag("--tls-resume", why));
    }
    Ok(())
}

impl Config {
    /// What a worker needs to run at all, checked again by [`crate::run`] for a `Config` made by
    /// hand (a test's, a library user's): its spec's rules
    /// ([`serverbench_model::LoadSpec::validate`], which names the flag), then what was prepared
    /// from it. Errors name the flag.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.spec
            .validate(&serverbench_model::spec::Origin::Flags)?;
        let flag = |flag, why: &str| Err(ConfigError::flag(flag, why));
        let positive = |x: f64| x > 0.0 && x.is_finite();
        match () {
            _ if self.threads == 0 => flag("-t/--threads", "must be at least 1"),
            _ if self.stop == Stop::Duration(Duration::ZERO) => {
                flag("-d/--duration", "must be more than 0")
            }
            _ if self.stop == Stop::Requests(0) => flag("-n/--requests", "must be at least 1"),
            _ if self.schedule == (Schedule::ClosedLoop { depth: 0 }) => {
                flag("-p/--pipeline", "must be at least 1")
            }
            _ if matches!(self.schedule, Schedule::Rate { per_second } if !positive(per_second)) => {
                flag("-R/--rate", "must be more than 0")
            }
            _ => match &self.protocol {
                Protocol::Http2(h) if h.streams == 0 => flag("-m/--streams", "must be at least 1"),
                Protocol::Grpc(g) if g.streams == 0 => flag("-m/--streams", "must be at least 1"),
                Protocol::Http3(h) if h.streams == 0 => flag("-m/--streams", "must be at least 1"),
                Protocol::TcpStream { message } if message.is_empty() => {
                    flag("--message", "must not be empty")
                }
                Protocol::TcpPingPong { size: 0 } => flag("--size", "must be at least 1"),
                _ => Ok(()),
            },
        }
    }
}

#[cfg(test)]
mod tests;
