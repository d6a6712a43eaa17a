//! A `--spec` file in the shape `serverbench load` read before [`Work`] and [`Transport`]
//! (`urls`, `tcp`, `http.method`, `http.http2`, `ws.message_size`...): read only, and turned
//! into today's [`LoadSpec`] by [`LoadSpec::from_json`]. Never written.

use super::{HttpLoad, LoadSpec, TlsVersion, UrlError, Work};
use crate::transport::TlsResume;
use crate::{duration, Mix, Mode, Protocol, SizeRange, Transport};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct Before {
    urls: Vec<String>,
    tcp: Option<Tcp>,
    connections: u32,
    threads: Option<u32>,
    #[serde(with = "duration::opt_text")]
    duration: Option<Duration>,
    requests: Option<u64>,
    #[serde(with = "duration::text")]
    warmup: Duration,
    #[serde(with = "duration::text")]
    timeout: Duration,
    cpus: Vec<usize>,
    rate: Option<f64>,
    connect_rate: Option<f64>,
    idle: String,
    io: crate::Io,
    http: Http,
    ws: Ws,
    reconnect_every: Option<u64>,
    mix: Option<Mix>,
}

#[derive(Deserialize)]
struct Tcp {
    addr: String,
    mode: Mode,
    message: String,
    size: usize,
}

#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Ws {
    message: Option<String>,
    message_size: Option<usize>,
    binary: bool,
    ping: bool,
}

#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Http {
    method: String,
    headers: Vec<String>,
    body: Option<String>,
    body_file: Option<PathBuf>,
    body_size: Option<SizeRange>,
    chunked: Option<u64>,
    pipeline: u32,
    expect_status: Vec<u16>,
    verify: bool,
    eager_reads: bool,
    http2: bool,
    streams: u32,
    new_conn: bool,
    tls_resume: Option<TlsResume>,
    tls_version: Option<TlsVersion>,
    cacert: Option<PathBuf>,
    insecure: bool,
}

impl Default for Before {
    fn default() -> Before {
        let now = LoadSpec::default();
        Before {
            urls: Vec::new(),
            tcp: None,
            connections: now.connections,
            threads: None,
            duration: None,
            requests: None,
            warmup: now.warmup,
            timeout: now.timeout,
            cpus: Vec::new(),
            rate: None,
            connect_rate: None,
            idle: now.idle,
            io: now.io,
            http: Http::default(),
            ws: Ws::default(),
            reconnect_every: None,
            mix: None,
        }
    }
}

impl Default for Http {
    fn default() -> Http {
        Http {
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

/// Why an old-shape spec does not make today's: its URLs, or its method.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BeforeError {
    #[error("{0}")]
    Url(#[from] UrlError),
    #[error("http.method: {0}")]
    Method(#[from] crate::method::BadMethod),
}

impl TryFrom<Before> for LoadSpec {
    type Error = BeforeError;

    fn try_from(b: Before) -> Result<LoadSpec, BeforeError> {
        let h = b.http;
        let mut spec = LoadSpec {
            work: Work {
                method: Some(h.method.parse()?),
                body: h.body,
                body_size: h.body_size,
                reconnect_every: b.reconnect_every,
                mix_requests: b.mix,
                message: b.ws.message,
                size: b.ws.message_size.map(|n| n as u32),
                binary: b.ws.binary,
                ..Work::default()
            },
            connections: b.connections,
            threads: b.threads,
            duration: b.duration,
            requests: b.requests,
            warmup: b.warmup,
            timeout: b.timeout,
            cpus: b.cpus,
            rate: b.rate,
            connect_rate: b.connect_rate,
            idle: b.idle,
            io: b.io,
            pipeline: h.pipeline,
            chunked: h.chunked,
            http: HttpLoad {
                headers: h.headers,
                body_file: h.body_file,
                expect_status: h.expect_status,
                verify: h.verify,
                eager_reads: h.eager_reads,
                tls_version: h.tls_version,
                cacert: h.cacert,
                insecure: h.insecure,
            },
            ws_ping: b.ws.ping,
            ..LoadSpec::default()
        };
        spec.at_urls(&b.urls)?;
        let tls = spec.transport.tls;
        spec.transport = Transport {
            protocol: match (h.http2, tls) {
                (false, _) => Protocol::H1,
                (true, true) => Protocol::H2,
                (true, false) => Protocol::H2c,
            },
            tls,
            new_conn: h.new_conn,
            tls_resume: h.tls_resume,
            streams: h.http2.then_some(h.streams),
        };
        if let Some(t) = b.tcp {
            spec.target = t.addr;
            spec.work.mode = t.mode;
            spec.work.message = (t.mode == Mode::TcpStream).then_some(t.message);
            spec.work.size = (t.mode != Mode::TcpStream).then_some(t.size as u32);
        }
        Ok(spec)
    }
}
