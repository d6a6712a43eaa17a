//! The flags of `serverbench load` ([`Args`]) and the load they describe ([`Args::load_spec`]),
//! with the checks that are about the flags themselves: a capacity search's (`--find-max`) and
//! a distributed load's (`--hosts`). `cmd/load` runs it.

use anyhow::Context;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use serverbench_analysis::capacity::Plan;
use serverbench_model::slo::Slo;
use serverbench_model::spec::{GrpcLoad, GrpcStream, Http3Load, HttpLoad, ProtoCall, Work};
use serverbench_model::Transport;
use serverbench_model::{parse_duration, CpuList, LoadSpec, Method, Mode, Protocol, TlsResume};
use std::io::BufRead;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `serverbench load`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  serverbench load -c 50 -d 10s http://127.0.0.1:8080/hello\n  \
    serverbench load -R 2000 -d 30s http://127.0.0.1:8080/hello\n  \
    serverbench load --cacert ca.pem -d 10s https://127.0.0.1:8443/hello\n  \
    serverbench load --new-conn --tls-resume tickets -k -d 10s https://127.0.0.1:8443/hello\n  \
    serverbench load --http2 -m 10 -d 10s http://127.0.0.1:8080/hello\n  \
    serverbench load --http3 -m 16 --cacert ca.pem -d 10s https://127.0.0.1:4433/hello\n  \
    serverbench load -X POST --body-size 500KB..20MB -c 8 -d 10s http://127.0.0.1:8080/upload\n  \
    serverbench load -d 10s 'http://127.0.0.1:8080/baseline?a={rand:1-100}&b={rand:1-100}'\n  \
    serverbench load --tcp 127.0.0.1:9000 --mode stream --message 'hello world' -d 10s\n  \
    serverbench load -c 16 -p 16 --message-size 4096 --binary -d 10s ws://127.0.0.1:8080/ws\n  \
    serverbench load -m 16 -d 10s grpc://127.0.0.1:50051/serverbench.Bench/Sum\n  \
    serverbench load --proto api.proto -I protos --call pkg.Svc/Get --data '{\"id\":\"{rand:1-1000}\"}' grpc://127.0.0.1:50051\n  \
    serverbench load --hosts hosts.toml --client-hosts load1,load2 -c 200 -d 10s http://10.0.0.2:8080/hello"
)]
pub struct Args {
    /// URL(s) to load, all on one host:port; several URLs are rotated per request.
    #[arg(value_name = "URL")]
    pub(crate) urls: Vec<String>,
    /// The whole load as JSON (a LoadSpec; `-`: one line on stdin) instead of the load flags:
    /// how `--tool serverbench` and client hosts are handed a load.
    #[arg(long, value_name = "FILE|-", conflicts_with_all = ["urls", "tcp", "hosts"])]
    pub(crate) spec: Option<String>,
    /// TCP echo target instead of HTTP.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "urls")]
    pub(crate) tcp: Option<String>,
    /// TCP mode: `stream` (write continuously, count bytes) or `pingpong` (timed echoes).
    #[arg(long, value_enum, default_value = "pingpong", requires = "tcp")]
    pub(crate) mode: TcpMode,
    /// TCP stream: the message written repeatedly; ws://: every message sent (default
    /// `hello world`).
    #[arg(long, conflicts_with = "message_size")]
    pub(crate) message: Option<String>,
    /// ws://: messages of this many random bytes (made once; printable ASCII unless --binary).
    /// grpc://…/serverbench.Bench/Echo: the payload's bytes (default 0); --stream: each
    /// chunk's data bytes (default 32).
    #[arg(long, value_name = "BYTES")]
    pub(crate) message_size: Option<u32>,
    /// grpc://: every call's deadline, sent as `grpc-timeout` (e.g. 100ms).
    #[arg(long, value_parser = parse_duration)]
    pub(crate) deadline: Option<Duration>,
    /// grpc://: streaming calls of the benchmark service: `server` (ServerStream: N chunks
    /// back), `client` (ClientStream: N chunks sent, one Count back) or `bidi` (BidiEcho: each
    /// chunk sent after the echo of the one before); the URL's path may be left out.
    #[arg(long, value_name = "KIND", value_parser = parse_stream)]
    pub(crate) stream: Option<GrpcStream>,
    /// --stream: messages (chunks) per call (default 100).
    #[arg(long, value_name = "N")]
    pub(crate) stream_messages: Option<u32>,
    /// grpc://: call a method of any service, described by this .proto (compiled at start).
    #[arg(long, value_name = "FILE")]
    pub(crate) proto: Option<PathBuf>,
    /// With --proto: where its imports are looked up (repeatable; then the file's folder).
    #[arg(short = 'I', long = "import-path", value_name = "DIR")]
    pub(crate) import_paths: Vec<PathBuf>,
    /// grpc://: the method, `package.Service/Method` (or give it as the URL's path).
    #[arg(long, value_name = "METHOD")]
    pub(crate) call: Option<String>,
    /// With --proto: the request message as JSON (default `{}`); `{rand:A-B}` in a string
    /// or as an integer field's whole value draws a number per call.
    #[arg(long, value_name = "JSON")]
    pub(crate) data: Option<String>,
    /// With --proto: the request message's JSON read from a file (`-`: stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "data")]
    pub(crate) data_file: Option<PathBuf>,
    /// ws://: binary frames instead of text.
    #[arg(long, conflicts_with = "tcp")]
    pub(crate) binary: bool,
    /// ws://: send pings and time each pong instead of echoed messages.
    #[arg(long, conflicts_with_all = ["tcp", "binary"])]
    pub(crate) ws_ping: bool,
    /// Close each connection after N responses (ws://: echoes, with a close 1000) and open a
    /// new one: connects (and TLS handshakes, WebSocket upgrades) are in the figures.
    #[arg(long, value_name = "N", conflicts_with = "tcp")]
    pub(crate) reconnect_every: Option<u64>,
    /// TCP ping-pong: message size in bytes.
    #[arg(long, default_value_t = 64, requires = "tcp")]
    pub(crate) size: u32,
    /// Open connections.
    #[arg(short, long, default_value_t = 50)]
    pub(crate) connections: u32,
    /// Worker threads (default: the CPUs this process may run on).
    #[arg(short, long)]
    pub(crate) threads: Option<u32>,
    /// How long to measure, e.g. 500ms, 10s, 1m (default 10s unless -n is given).
    #[arg(short, long, value_parser = parse_duration)]
    pub(crate) duration: Option<Duration>,
    /// Stop after this many requests.
    #[arg(short = 'n', long, conflicts_with = "duration")]
    pub(crate) requests: Option<u64>,
    /// Load without measuring for this long first.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub(crate) warmup: Duration,
    /// Per-request timeout; a timed-out connection is counted and reopened.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub(crate) timeout: Duration,
    /// Pin worker threads to these CPUs, e.g. 1,3 or 0-3.
    #[arg(long, value_name = "LIST", value_parser = clap::value_parser!(CpuList))]
    pub(crate) cpus: Option<CpuList>,
    /// Extra request header `Name: value` (repeatable).
    #[arg(short = 'H', long = "header")]
    pub(crate) headers: Vec<String>,
    /// HTTP method (`-X` as in curl; `-m` is --streams, as in h2load).
    #[arg(short = 'X', long, default_value = "GET")]
    pub(crate) method: String,
    /// Request body.
    #[arg(long, conflicts_with_all = ["body_file", "body_size"])]
    pub(crate) body: Option<String>,
    /// Request body read from a file.
    #[arg(long, conflicts_with = "body_size")]
    pub(crate) body_file: Option<std::path::PathBuf>,
    /// Request bodies of random bytes (made once per thread), the size drawn per request:
    /// `500KB..20MB`, or one size like `1MiB` (KB/MB: powers of 1000, KiB/MiB: of 1024).
    #[arg(long, value_name = "SIZE|MIN..MAX")]
    pub(crate) body_size: Option<serverbench_model::SizeRange>,
    /// Send the body with `Transfer-Encoding: chunked` (needs --body, --body-file or
    /// --body-size).
    #[arg(long)]
    pub(crate) chunked: bool,
    /// With --chunked: bytes per chunk (default 16KiB).
    #[arg(long, value_name = "SIZE", requires = "chunked", value_parser = chunk_size)]
    pub(crate) chunk_size: Option<u64>,
    /// A weighted mix of requests (TOML, or JSON by extension: `[[request]]` entries of
    /// method, path, headers, body / body_file / body_size, weight, name), each request drawn
    /// by weight, on the one URL's host:port (give it without a path). The result has each
    /// entry's requests, errors and latency.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tcp", "body", "body_file", "body_size", "chunked", "method"])]
    pub(crate) mix: Option<std::path::PathBuf>,
    /// Requests in flight per connection (HTTP/1.1 pipelining).
    #[arg(short, long, default_value_t = 1)]
    pub(crate) pipeline: u32,
    /// HTTP/2: h2 over TLS (ALPN) for https:// URLs, h2c with prior knowledge for http://.
    #[arg(long, conflicts_with = "tcp")]
    pub(crate) http2: bool,
    /// HTTP/3 over QUIC (UDP, TLS 1.3 inside, ALPN h3) to an https:// URL's port: the server's
    /// H3_PORT. Runs on epoll (not with --io uring).
    #[arg(long)]
    pub(crate) http3: bool,
    /// With --http3 --new-conn --tls-resume tickets: each request on a resumed connection is
    /// sent in 0-RTT, before the handshake completes (the summary says how many the server took).
    #[arg(long = "0rtt")]
    pub(crate) zero_rtt: bool,
    /// With --http2, --http3 or a grpc:// URL: concurrent streams (calls) per connection (as
    /// h2load's -m); the server's SETTINGS_MAX_CONCURRENT_STREAMS (HTTP/3: its
    /// initial_max_streams_bidi) caps it.
    #[arg(short = 'm', long, default_value_t = 1)]
    pub(crate) streams: u32,
    /// With -p, or --http2 -m over h2c: read every segment as it lands, timing each response
    /// exactly, instead of waking once per window of responses (costs more client CPU).
    #[arg(long)]
    pub(crate) eager_reads: bool,
    /// When a thread has nothing to do: `auto` naps 1/32 of its fast latencies (a floor near
    /// their few-percent quantile; 10-200 µs, blocks below that) in the closed loop, `block`
    /// waits for the kernel to wake it, or a nap like `50us`. Napping spares the server the
    /// cost of waking the client.
    #[arg(long, default_value = "auto", value_name = "auto|block|NAP")]
    pub(crate) idle: serverbench_engine::Idle,
    /// How the load threads drive their sockets: epoll, io_uring (one ring per thread; falls
    /// back to epoll with a note where the kernel refuses it), or auto (epoll: io_uring did not
    /// measure cheaper here).
    #[arg(long, default_value = "auto", value_name = "auto|epoll|uring")]
    pub(crate) io: serverbench_model::Io,
    /// Open loop at this many requests/s in total (latency from the intended send time).
    #[arg(short = 'R', long)]
    pub(crate) rate: Option<f64>,
    /// Status codes that are not errors (default: any 2xx), e.g. 200,404.
    #[arg(long, value_delimiter = ',')]
    pub(crate) expect_status: Vec<u16>,
    /// Every body must match the first body of its URL in length and checksum.
    #[arg(long)]
    pub(crate) verify: bool,
    /// New connections per second while ramping up (measurement starts when all are up).
    #[arg(long)]
    pub(crate) connect_rate: Option<f64>,
    /// A new connection for every request (sent with `Connection: close`): measures connects
    /// per second, and over https:// TLS handshakes per second (--http3: QUIC handshakes).
    #[arg(long)]
    pub(crate) new_conn: bool,
    /// With --new-conn over https://: resume TLS sessions with `tickets` (TLS 1.2 tickets or
    /// session ids, TLS 1.3 tickets; --http3: QUIC's, by tickets) or TLS 1.2 session `ids`;
    /// `off` makes every handshake full.
    /// Exits 5 if the server resumed none.
    #[arg(long, value_name = "HOW", conflicts_with = "tcp", value_parser = resume_parser())]
    pub(crate) tls_resume: Option<TlsResume>,
    /// Offer only this TLS version (default: 1.3 and 1.2, the server picks).
    #[arg(long, value_name = "VERSION", conflicts_with = "tcp", value_parser = version_parser())]
    pub(crate) tls_version: Option<serverbench_model::TlsVersion>,
    /// Trust only the CA certificates in this PEM file (default: the Mozilla roots).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["insecure", "tcp"])]
    pub(crate) cacert: Option<std::path::PathBuf>,
    /// Accept any server certificate for any name (handshake signatures are still checked).
    #[arg(short = 'k', long, conflicts_with = "tcp")]
    pub(crate) insecure: bool,
    /// Output format: text (the summary) or json (spec/load-result.schema.json).
    #[arg(short = 'f', long, value_name = "FORMAT")]
    pub(crate) format: Option<crate::flags::TextOrJson>,
    /// The same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub(crate) json: bool,
    /// Write the JSON result to this file (the summary still goes to stdout).
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<std::path::PathBuf>,
    /// No live view on stderr (it is shown only when stderr is a terminal: phase, elapsed,
    /// req/s, p50/p99 and errors so far, redrawn once a second).
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// For distributed runs: connect and warm up, print `ready` on stdout, keep loading
    /// unmeasured until a `go` line arrives on stdin, then measure (EOF: exit 8, nothing measured).
    #[arg(long, conflicts_with = "requests")]
    pub(crate) barrier: bool,
    /// Several machines: the inventory (spec/hosts.md) naming the --client-hosts.
    #[arg(
        long,
        value_name = "FILE",
        requires = "client_hosts",
        help_heading = "Several machines"
    )]
    pub(crate) hosts: Option<std::path::PathBuf>,
    /// The hosts that generate the load, e.g. `load1,load2`: connections, -R and
    /// --connect-rate are split between them; each runs one thread per CPU unless -t is given
    /// (then -t threads each) and is pinned to its inventory `cpus`.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "A,B",
        requires = "hosts",
        help_heading = "Several machines"
    )]
    pub(crate) client_hosts: Vec<String>,
    /// How long the client hosts may take to connect (plus --warmup) before the run is called off.
    #[arg(
        long,
        default_value = "60s",
        value_name = "DURATION",
        value_parser = parse_duration,
        help_heading = "Several machines"
    )]
    pub(crate) barrier_timeout: Duration,
    #[command(flatten)]
    pub(crate) find_max: FindMaxArgs,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TcpMode {
    Stream,
    Pingpong,
}

/// `--chunk-size`: a size, at least one byte.
fn chunk_size(text: &str) -> Result<u64, String> {
    match serverbench_model::parse_size(text) {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// `--tls-resume`: the model's values, listed in the help.
fn resume_parser() -> impl TypedValueParser<Value = TlsResume> {
    PossibleValuesParser::new(TlsResume::ALL.map(TlsResume::as_str))
        .map(|s| s.parse::<TlsResume>().expect("a listed value"))
}

/// `--tls-version`: `1.2` or `1.3`.
fn version_parser() -> impl TypedValueParser<Value = serverbench_model::TlsVersion> {
    PossibleValuesParser::new(["1.2", "1.3"]).map(|s| s.parse().expect("a listed value"))
}

impl Args {
    /// The load these flags describe (or `--spec`'s, read from its file or stdin).
    pub(crate) fn load_spec(&self) -> anyhow::Result<LoadSpec> {
        if let Some(from) = &self.spec {
            return read_spec(from);
        }
        let mut spec = LoadSpec {
            work: self.work()?,
            connections: self.connections,
            threads: self.threads,
            duration: self.duration,
            requests: self.requests,
            warmup: self.warmup,
            timeout: self.timeout,
            cpus: self.cpus.clone().map(|c| c.0).unwrap_or_default(),
            rate: self.rate,
            connect_rate: self.connect_rate,
            idle: self.idle.to_string(),
            io: self.io,
            pipeline: self.pipeline,
            chunked: self.chunked.then(|| {
                self.chunk_size
                    .unwrap_or(serverbench_engine::request::DEFAULT_CHUNK as u64)
            }),
            http: HttpLoad {
                headers: self.headers.clone(),
                body_file: self.body_file.clone(),
                expect_status: self.expect_status.clone(),
                verify: self.verify,
                eager_reads: self.eager_reads,
                tls_version: self.tls_version,
                cacert: self.cacert.clone(),
                insecure: self.insecure,
            },
            ws_ping: self.ws_ping,
            grpc: GrpcLoad {
                deadline: self.deadline,
                proto: self.proto_call()?,
            },
            http3: Http3Load {
                zero_rtt: self.zero_rtt,
            },
            ..LoadSpec::default()
        };
        match &self.tcp {
            Some(addr) => spec.target = addr.clone(),
            None => spec.at_urls(&self.urls)?,
        }
        if let Some(call) = &self.call {
            spec.work.paths = vec![method_path(call, &spec.work.paths)?];
        }
        let tls = spec.transport.tls;
        if self.http3 && self.http2 {
            anyhow::bail!("--http3: cannot be combined with --http2 (one HTTP version per load)");
        }
        spec.transport = Transport {
            protocol: match (self.http2, self.http3, tls) {
                (_, true, _) => Protocol::H3,
                (false, false, _) => Protocol::H1,
                (true, false, true) => Protocol::H2,
                (true, false, false) => Protocol::H2c,
            },
            tls,
            new_conn: self.new_conn,
            tls_resume: self.tls_resume,
            // -m without --http2 or --http3 (nor a grpc:// URL) is refused by the spec's rules.
            streams: (self.http2 || self.http3 || self.streams > 1).then_some(self.streams),
        };
        Ok(spec)
    }

    /// What each connection does: TCP echo's mode and message or size, a WebSocket's message
    /// or its size, an HTTP request's method and body, or the mix (the URLs give the paths).
    fn work(&self) -> anyhow::Result<Work> {
        let method = self.method.parse::<Method>();
        let mut work = Work {
            reconnect_every: self.reconnect_every,
            binary: self.binary,
            method: Some(method.map_err(|e| anyhow::anyhow!("-X/--method: {e}"))?),
            body: self.body.clone(),
            body_size: self.body_size,
            message: self.message.clone(),
            size: self.message_size,
            stream: self.stream,
            stream_messages: self.stream_messages,
            ..Work::default()
        };
        if let Some(path) = &self.mix {
            let mix = serverbench_model::Mix::load(path).map_err(|e| anyhow::anyhow!("--mix {e}"));
            (work.mix, work.mix_requests) = (Some(path.clone()), Some(mix?));
        }
        if self.tcp.is_some() {
            if self.message_size.is_some() {
                anyhow::bail!("--message-size: does not apply to --tcp");
            }
            (work.mode, work.message, work.size) = match self.mode {
                TcpMode::Stream => {
                    let message = self.message.clone();
                    (
                        Mode::TcpStream,
                        Some(message.unwrap_or_else(|| "hello world".into())),
                        None,
                    )
                }
                TcpMode::Pingpong => (Mode::TcpPingpong, None, Some(self.size)),
            };
        }
        Ok(work)
    }
}

impl Args {
    /// `--proto`'s call: the file compiled here (its descriptors travel in the spec), the
    /// message's JSON from `--data` or `--data-file`.
    fn proto_call(&self) -> anyhow::Result<Option<ProtoCall>> {
        let Some(file) = &self.proto else {
            let stray = match () {
                _ if self.data.is_some() => "--data",
                _ if self.data_file.is_some() => "--data-file",
                _ if !self.import_paths.is_empty() => "-I/--import-path",
                _ => return Ok(None),
            };
            anyhow::bail!("{stray}: needs --proto FILE (the built-in benchmark service's messages are serverbench's)");
        };
        let proto = serverbench_protodyn::Proto::compile(file, &self.import_paths)
            .map_err(|e| anyhow::anyhow!("--proto {}: {e}", file.display()))?;
        let data = match &self.data_file {
            Some(f) if f.as_os_str() == "-" => {
                std::io::read_to_string(std::io::stdin()).context("--data-file -: reading stdin")?
            }
            Some(f) => std::fs::read_to_string(f)
                .with_context(|| format!("--data-file {}", f.display()))?,
            None => self.data.clone().unwrap_or_default(),
        };
        Ok(Some(ProtoCall {
            file: file.clone(),
            includes: self.import_paths.clone(),
            data,
            data_file: self.data_file.clone(),
            descriptors: proto.descriptors_base64(),
        }))
    }
}

/// `--call package.Service/Method` as a path, unless the URL names another method.
fn method_path(call: &str, paths: &[String]) -> anyhow::Result<String> {
    let path = format!("/{}", call.trim_start_matches('/'));
    match paths {
        [] => Ok(path),
        [one] if *one == path || one == "/" => Ok(path),
        [one, ..] => anyhow::bail!(
            "--call {call}: the URL names another method ({one}); give it once, as --call or as the URL's path"
        ),
    }
}

/// `--spec FILE`, or `--spec -`: the first line of stdin (a `go` line may follow for --barrier).
fn read_spec(from: &str) -> anyhow::Result<LoadSpec> {
    let text = if from == "-" {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .context("--spec -: reading stdin")?;
        line
    } else {
        std::fs::read_to_string(from).with_context(|| format!("--spec {from}"))?
    };
    LoadSpec::from_json(text.trim()).with_context(|| format!("--spec {from}: not a load spec"))
}

/// The flags of the capacity search (flattened into `load`'s).
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Capacity search")]
pub struct FindMaxArgs {
    /// Search for the highest open-loop rate that meets --slo: ramp ×2 from --start-rate until
    /// the goal fails or the client cannot send the rate, then bisect to --precision; each step
    /// warms up (--warmup, default 1s) and lasts long enough for 100 samples beyond the SLO's
    /// quantile (1-10s) unless -d is given.
    #[arg(long)]
    pub find_max: bool,
    /// The goal, e.g. `p99<=5ms,errors<=0.1%` (measures: p50, p90, p99, p99.9, errors).
    #[arg(long, value_name = "GOALS")]
    pub slo: Option<String>,
    /// Stop when the lowest failing rate is within this of the highest passing one.
    #[arg(long, default_value = "5%", value_name = "PERCENT")]
    pub precision: String,
    /// At most this many steps.
    #[arg(long, default_value_t = 20)]
    pub max_steps: u32,
    /// The first rate (requests/s); the goal failing here ends the search (exit 10).
    #[arg(long, default_value_t = 500.0, value_name = "REQ/S")]
    pub start_rate: f64,
    /// The server's process on this machine: each step's CPU µs per request of its whole
    /// process tree (from /proc, measured over the step's measured span) goes in the curve.
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<u32>,
    /// Never ask for more than this (requests/s).
    #[arg(long, default_value_t = 10_000_000.0, value_name = "REQ/S")]
    pub max_rate: f64,
}

impl FindMaxArgs {
    /// A search flag given without --find-max (those with defaults cannot be told apart).
    pub fn stray(&self) -> Option<&'static str> {
        match () {
            _ if self.find_max => None,
            _ if self.slo.is_some() => Some("--slo"),
            _ if self.server_pid.is_some() => Some("--server-pid"),
            _ => None,
        }
    }
}

/// A bad flag, as one line.
fn plan_of(a: &FindMaxArgs) -> Result<Plan, String> {
    let text = a.precision.trim();
    let precision = text
        .strip_suffix('%')
        .unwrap_or(text)
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|p| *p > 0.0 && *p < 100.0)
        .ok_or_else(|| format!("--precision `{text}`: a percentage above 0, like 5%"))?;
    if a.max_steps < 2 {
        return Err("--max-steps: at least 2 (a bracket needs a pass and a miss)".into());
    }
    if !(a.start_rate > 0.0 && a.start_rate <= a.max_rate) {
        return Err("--start-rate: above 0 and at most --max-rate".into());
    }
    Ok(Plan {
        start: a.start_rate,
        precision: precision / 100.0,
        max_steps: a.max_steps,
        ceiling: a.max_rate,
        ..Plan::default()
    })
}

impl Args {
    /// `--find-max`'s goal and plan, or the flag the search cannot take, as one line (clap's
    /// conflicts print a usage block).
    pub(crate) fn search(&self, spec: &LoadSpec) -> Result<(Slo, Plan), String> {
        let why = if self.find_max.slo.is_none() {
            "needs --slo, e.g. --slo 'p99<=5ms,errors<=0.1%'"
        } else if spec.pipeline > 1 {
            "-p/--pipeline: the open loop sends one request at a time per connection"
        } else if spec.requests.is_some() {
            "-n/--requests: each step's length is its duration (-d), not a count"
        } else if spec.rate.is_some() {
            "-R/--rate: the search picks the rates (--start-rate, --max-rate)"
        } else if self.barrier {
            "--barrier: a search is many runs, not one to release"
        } else {
            ""
        };
        if !why.is_empty() {
            return Err(why.to_string());
        }
        let text = self.find_max.slo.as_deref().unwrap_or_default();
        let slo: Slo = text.parse().map_err(|e| format!("--slo: {e}"))?;
        Ok((slo, plan_of(&self.find_max)?))
    }

    /// The flags that make no sense across hosts (`--hosts`), as one line.
    pub(crate) fn hosts_conflict(&self) -> Option<String> {
        Some(if self.client_hosts.is_empty() {
            "--hosts needs --client-hosts A,B: the hosts that generate the load".into()
        } else if self.cpus.is_some() {
            "--cpus cannot be used with --hosts: give each host's `cpus` in the inventory".into()
        } else if self.requests.is_some() {
            "-n/--requests cannot be used with --hosts: give -d/--duration".into()
        } else if self.barrier {
            "--barrier is what --hosts runs on each client host; do not give both".into()
        } else if (self.connections as usize) < self.client_hosts.len() {
            format!(
                "-c/--connections {} is fewer than the {} client hosts",
                self.connections,
                self.client_hosts.len()
            )
        } else {
            return None;
        })
    }
}

#[cfg(test)]
mod tests;

fn parse_stream(s: &str) -> Result<GrpcStream, String> {
    s.parse()
}
