//! [`Work`]: what each connection of a lap does, in a suite's words. A suite's scenario and a
//! lap record embed it and the [`Transport`] beside it (both flattened, so their keys are the
//! ones they always had; two flattened structs side by side, not one inside the other, so a
//! suite's unknown key is still refused), and [`LoadSpec::lap`] turns them, with the profile's
//! pace and the server's address, into the one [`LoadSpec`] a lap runs.

use super::{GrpcStream, LoadSpec};
use crate::{Method, Mix, Mode, SizeRange, Transport};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// What is requested (or echoed), and over which protocol.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Work {
    /// `http` (default), `tcp-stream`, `tcp-pingpong`, `ws` (WebSocket echo on `/ws`) or
    /// `grpc` (unary calls of the benchmark service, `spec/serverbench.proto`).
    #[serde(default)]
    pub mode: Mode,
    /// HTTP paths requested in rotation; `grpc`: the one method called
    /// (`/serverbench.Bench/Sum` or `/serverbench.Bench/Echo`).
    #[serde(default)]
    pub paths: Vec<String>,
    /// `tcp-stream`: the message written repeatedly (`ws`: the message sent).
    #[serde(default)]
    pub message: Option<String>,
    /// `tcp-pingpong` and `ws`: the message size in bytes (`ws`: random bytes made once);
    /// `grpc`: Echo's payload in bytes.
    #[serde(default)]
    pub size: Option<u32>,
    /// `ws`: binary frames instead of text.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
    /// `http` and `ws`: a new connection after this many responses (echoes), HttpArena's
    /// limited-conn and echo-ws-limited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_every: Option<u64>,
    /// `http`: a mix file whose entries are drawn by weight instead of `paths` (serverbench's
    /// engine only): as the suite names it, made absolute when the suite is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<PathBuf>,
    /// The mix file's entries, read when the suite is loaded (never written).
    #[serde(skip)]
    pub mix_requests: Option<Mix>,
    /// `http`: the method (in a suite: default `GET`, or `POST` when a body is given; in a lap
    /// record: the method sent, when not GET).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
    /// `http`: the same body with every request (`body = "20"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// `http`: random bytes, the size drawn per request (`"500KB..20MB"`, or one size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_size: Option<SizeRange>,
    /// `grpc`: streaming calls of the benchmark service (`server`, `client` or `bidi`) instead
    /// of unary ones; each chunk's data is `size` bytes (default 32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<GrpcStream>,
    /// `grpc` with `stream`: messages per call (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_messages: Option<u32>,
}

impl Work {
    /// Whether its requests carry a body (`body` or `body_size`).
    pub fn has_body(&self) -> bool {
        self.body.is_some() || self.body_size.is_some()
    }

    /// The method of its requests when not GET: `method`, else POST when they carry a body.
    pub fn request_method(&self) -> Option<Method> {
        let default = match self.has_body() {
            true => Method::Post,
            false => Method::Get,
        };
        Some(self.method.unwrap_or(default)).filter(|m| *m != Method::Get)
    }
}

/// How hard a lap loads: a suite profile's, as a lap runs it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pace {
    pub connections: u32,
    /// `None`: the engine's default (one per client CPU).
    pub threads: Option<u32>,
    pub duration: Option<Duration>,
    pub requests: Option<u64>,
    pub pipeline: u32,
    pub rate: Option<f64>,
    /// The body sent chunked, in chunks of this many bytes.
    pub chunked: Option<u64>,
}

/// Where a lap's load goes: the server's HTTP base (`http://host:port`, or `https://` on its
/// TLS port), its echo address (`host:port`) and the certificate to trust over TLS (`None`:
/// trust any).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Address {
    pub http_base: String,
    pub echo: String,
    pub ca_file: Option<PathBuf>,
}

/// Seconds as a duration of whole milliseconds (at least 1 ms), as a lap runs it.
pub fn lap_duration(seconds: f64) -> Duration {
    Duration::from_millis((seconds * 1000.0).round().max(1.0) as u64)
}

impl LoadSpec {
    /// The one load of a lap: `work` over `transport` at `pace` against `at`. HTTP, WebSocket
    /// and gRPC go to the HTTP base's `host:port` (TLS when it is `https://`, so `grpcs://` on
    /// the TLS port; `ws` upgrades on `/ws`; `grpc` calls its one path), TCP echo to the echo
    /// address; the trust is the run's certificate, else any.
    /// Every key of `work` and `transport` is carried over, so [`LoadSpec::validate`] sees what
    /// a suite gave.
    pub fn lap(work: &Work, transport: &Transport, pace: &Pace, at: &Address) -> LoadSpec {
        let mut s = LoadSpec {
            work: work.clone(),
            transport: transport.clone(),
            connections: pace.connections,
            threads: pace.threads,
            duration: pace.duration,
            requests: pace.requests,
            chunked: pace.chunked,
            ..LoadSpec::default()
        };
        if work.mode.is_tcp() {
            // Echo runs in a closed loop, one message at a time per connection.
            s.target = at.echo.clone();
            s.work.size = Some(work.size.unwrap_or(64));
            return s;
        }
        let (scheme, authority) = at
            .http_base
            .split_once("://")
            .unwrap_or(("http", &at.http_base));
        s.target = authority.trim_end_matches('/').to_string();
        s.transport.tls = scheme.eq_ignore_ascii_case("https");
        s.rate = pace.rate;
        s.pipeline = pace.pipeline;
        if work.mode == Mode::Ws {
            s.work.paths = vec!["/ws".into()];
        }
        if s.transport.tls {
            match &at.ca_file {
                Some(ca) => s.http.cacert = Some(ca.clone()),
                None => s.http.insecure = true,
            }
        }
        s
    }
}

/// A [`Work`] as a spec writes it: with its mix's entries (`mix_requests`), which a suite
/// and a lap record leave out, so a client host needs no mix file.
#[derive(Serialize)]
struct WorkOut<'a> {
    #[serde(flatten)]
    work: &'a Work,
    #[serde(skip_serializing_if = "Option::is_none")]
    mix_requests: &'a Option<Mix>,
}

/// A [`Work`] as a spec reads it: its keys and the mix's entries, nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkIn {
    #[serde(flatten)]
    work: Work,
    #[serde(default)]
    mix_requests: Option<Mix>,
}

pub(super) fn with_mix<S: serde::Serializer>(work: &Work, s: S) -> Result<S::Ok, S::Error> {
    let out = WorkOut {
        work,
        mix_requests: &work.mix_requests,
    };
    out.serialize(s)
}

pub(super) fn read_mix<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Work, D::Error> {
    let WorkIn {
        mut work,
        mix_requests,
    } = WorkIn::deserialize(d)?;
    work.mix_requests = mix_requests;
    Ok(work)
}
