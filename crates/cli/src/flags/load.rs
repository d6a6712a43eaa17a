//! `serverbench load`: HTTP/1.1 (plain or TLS), HTTP/2 (h2 or h2c) or TCP echo load from the
//! engine, a human summary or JSON.

mod distributed;
mod find_max;
mod live;
mod mix_table;
mod summary;
mod units;
mod verdict;

use crate::exit::Exit;
use anyhow::Context;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use serverbench_engine::{Config, EngineError, Event, Lifetime, Protocol, Stop};
use serverbench_model::spec::{HttpLoad, TcpLoad, WsLoad};
use serverbench_model::{parse_duration, CpuList, LoadSpec, Mode, TlsResume};
use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

/// Arguments of `serverbench load`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  serverbench load -c 50 -d 10s http://127.0.0.1:8080/hello\n  \
    serverbench load -R 2000 -d 30s http://127.0.0.1:8080/hello\n  \
    serverbench load --cacert ca.pem -d 10s https://127.0.0.1:8443/hello\n  \
    serverbench load --new-conn --tls-resume tickets -k -d 10s https://127.0.0.1:8443/hello\n  \
    serverbench load --http2 -m 10 -d 10s http://127.0.0.1:8080/hello\n  \
    serverbench load -X POST --body-size 500KB..20MB -c 8 -d 10s http://127.0.0.1:8080/upload\n  \
    serverbench load -d 10s 'http://127.0.0.1:8080/baseline?a={rand:1-100}&b={rand:1-100}'\n  \
    serverbench load --tcp 127.0.0.1:9000 --mode stream --message 'hello world' -d 10s\n  \
    serverbench load -c 16 -p 16 --message-size 4096 --binary -d 10s ws://127.0.0.1:8080/ws\n  \
    serverbench load --hosts hosts.toml --client-hosts load1,load2 -c 200 -d 10s http://10.0.0.2:8080/hello"
)]
pub struct Args {
    /// URL(s) to load, all on one host:port; several URLs are rotated per request.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
    /// The whole load as JSON (a LoadSpec; `-`: one line on stdin) instead of the load flags:
    /// how `--tool serverbench` and client hosts are handed a load.
    #[arg(long, value_name = "FILE|-", conflicts_with_all = ["urls", "tcp", "hosts"])]
    spec: Option<String>,
    /// TCP echo target instead of HTTP.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "urls")]
    tcp: Option<String>,
    /// TCP mode: `stream` (write continuously, count bytes) or `pingpong` (timed echoes).
    #[arg(long, value_enum, default_value = "pingpong", requires = "tcp")]
    mode: TcpMode,
    /// TCP stream: the message written repeatedly; ws://: every message sent (default
    /// `hello world`).
    #[arg(long, conflicts_with = "message_size")]
    message: Option<String>,
    /// ws://: messages of this many random bytes (made once; printable ASCII unless --binary).
    #[arg(long, value_name = "BYTES")]
    message_size: Option<usize>,
    /// ws://: binary frames instead of text.
    #[arg(long, conflicts_with = "tcp")]
    binary: bool,
    /// ws://: send pings and time each pong instead of echoed messages.
    #[arg(long, conflicts_with_all = ["tcp", "binary"])]
    ws_ping: bool,
    /// Close each connection after N responses (ws://: echoes, with a close 1000) and open a
    /// new one: connects (and TLS handshakes, WebSocket upgrades) are in the figures.
    #[arg(long, value_name = "N", conflicts_with = "tcp")]
    reconnect_every: Option<u64>,
    /// TCP ping-pong: message size in bytes.
    #[arg(long, default_value_t = 64, requires = "tcp")]
    size: usize,
    /// Open connections.
    #[arg(short, long, default_value_t = 50)]
    connections: u32,
    /// Worker threads (default: the CPUs this process may run on).
    #[arg(short, long)]
    threads: Option<u32>,
    /// How long to measure, e.g. 500ms, 10s, 1m (default 10s unless -n is given).
    #[arg(short, long, value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Stop after this many requests.
    #[arg(short = 'n', long, conflicts_with = "duration")]
    requests: Option<u64>,
    /// Load without measuring for this long first.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    warmup: Duration,
    /// Per-request timeout; a timed-out connection is counted and reopened.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    timeout: Duration,
    /// Pin worker threads to these CPUs, e.g. 1,3 or 0-3.
    #[arg(long, value_name = "LIST", value_parser = clap::value_parser!(CpuList))]
    cpus: Option<CpuList>,
    /// Extra request header `Name: value` (repeatable).
    #[arg(short = 'H', long = "header")]
    headers: Vec<String>,
    /// HTTP method (`-X` as in curl; `-m` is --streams, as in h2load).
    #[arg(short = 'X', long, default_value = "GET")]
    method: String,
    /// Request body.
    #[arg(long, conflicts_with_all = ["body_file", "body_size"])]
    body: Option<String>,
    /// Request body read from a file.
    #[arg(long, conflicts_with = "body_size")]
    body_file: Option<std::path::PathBuf>,
    /// Request bodies of random bytes (made once per thread), the size drawn per request:
    /// `500KB..20MB`, or one size like `1MiB` (KB/MB: powers of 1000, KiB/MiB: of 1024).
    #[arg(long, value_name = "SIZE|MIN..MAX")]
    body_size: Option<serverbench_model::SizeRange>,
    /// Send the body with `Transfer-Encoding: chunked` (needs --body, --body-file or
    /// --body-size).
    #[arg(long)]
    chunked: bool,
    /// With --chunked: bytes per chunk (default 16KiB).
    #[arg(long, value_name = "SIZE", requires = "chunked", value_parser = chunk_size)]
    chunk_size: Option<u64>,
    /// A weighted mix of requests (TOML, or JSON by extension: `[[request]]` entries of
    /// method, path, headers, body / body_file / body_size, weight, name), each request drawn
    /// by weight, on the one URL's host:port (give it without a path). The result has each
    /// entry's requests, errors and latency.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tcp", "body", "body_file", "body_size", "chunked", "method"])]
    mix: Option<std::path::PathBuf>,
    /// Requests in flight per connection (HTTP/1.1 pipelining).
    #[arg(short, long, default_value_t = 1)]
    pipeline: u32,
    /// HTTP/2: h2 over TLS (ALPN) for https:// URLs, h2c with prior knowledge for http://.
    #[arg(long, conflicts_with = "tcp")]
    http2: bool,
    /// With --http2: concurrent streams per connection (as h2load's -m); the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS caps it.
    #[arg(short = 'm', long, default_value_t = 1, requires = "http2")]
    streams: u32,
    /// With -p, or --http2 -m over h2c: read every segment as it lands, timing each response
    /// exactly, instead of waking once per window of responses (costs more client CPU).
    #[arg(long)]
    eager_reads: bool,
    /// When a thread has nothing to do: `auto` naps 1/32 of its fast latencies (a floor near
    /// their few-percent quantile; 10-200 µs, blocks below that) in the closed loop, `block`
    /// waits for the kernel to wake it, or a nap like `50us`. Napping spares the server the
    /// cost of waking the client.
    #[arg(long, default_value = "auto", value_name = "auto|block|NAP")]
    idle: serverbench_engine::Idle,
    /// How the load threads drive their sockets: epoll, io_uring (one ring per thread; falls
    /// back to epoll with a note where the kernel refuses it), or auto (epoll: io_uring did not
    /// measure cheaper here).
    #[arg(long, default_value = "auto", value_name = "auto|epoll|uring")]
    io: serverbench_model::Io,
    /// Open loop at this many requests/s in total (latency from the intended send time).
    #[arg(short = 'R', long)]
    rate: Option<f64>,
    /// Status codes that are not errors (default: any 2xx), e.g. 200,404.
    #[arg(long, value_delimiter = ',')]
    expect_status: Vec<u16>,
    /// Every body must match the first body of its URL in length and checksum.
    #[arg(long)]
    verify: bool,
    /// New connections per second while ramping up (measurement starts when all are up).
    #[arg(long)]
    connect_rate: Option<f64>,
    /// A new connection for every request (sent with `Connection: close`): measures connects
    /// per second, and over https:// TLS handshakes per second.
    #[arg(long)]
    new_conn: bool,
    /// With --new-conn over https://: resume TLS sessions with `tickets` (TLS 1.2 tickets or
    /// session ids, TLS 1.3 tickets) or TLS 1.2 session `ids`; `off` makes every handshake full.
    /// Exits 5 if the server resumed none.
    #[arg(long, value_name = "HOW", conflicts_with = "tcp", value_parser = resume_parser())]
    tls_resume: Option<TlsResume>,
    /// Offer only this TLS version (default: 1.3 and 1.2, the server picks).
    #[arg(long, value_name = "VERSION", conflicts_with = "tcp", value_parser = version_parser())]
    tls_version: Option<serverbench_model::TlsVersion>,
    /// Trust only the CA certificates in this PEM file (default: the Mozilla roots).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["insecure", "tcp"])]
    cacert: Option<std::path::PathBuf>,
    /// Accept any server certificate for any name (handshake signatures are still checked).
    #[arg(short = 'k', long, conflicts_with = "tcp")]
    insecure: bool,
    /// Output format: text (the summary) or json (spec/load-result.schema.json).
    #[arg(short = 'f', long, value_name = "FORMAT")]
    format: Option<crate::flags::TextOrJson>,
    /// The same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Write the JSON result to this file (the summary still goes to stdout).
    #[arg(short, long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// No live view on stderr (it is shown only when stderr is a terminal: phase, elapsed,
    /// req/s, p50/p99 and errors so far, redrawn once a second).
    #[arg(short, long)]
    quiet: bool,
    /// For distributed runs: connect and warm up, print `ready` on stdout, keep loading
    /// unmeasured until a `go` line arrives on stdin, then measure (EOF: exit 8, nothing measured).
    #[arg(long, conflicts_with = "requests")]
    barrier: bool,
    /// Several machines: the inventory (spec/hosts.md) naming the --client-hosts.
    #[arg(
        long,
        value_name = "FILE",
        requires = "client_hosts",
        help_heading = "Several machines"
    )]
    hosts: Option<std::path::PathBuf>,
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
    client_hosts: Vec<String>,
    /// How long the client hosts may take to connect (plus --warmup) before the run is called off.
    #[arg(
        long,
        default_value = "60s",
        value_name = "DURATION",
        value_parser = parse_duration,
        help_heading = "Several machines"
    )]
    barrier_timeout: Duration,
    #[command(flatten)]
    find_max: find_max::FindMaxArgs,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum TcpMode {
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
    fn load_spec(&self) -> anyhow::Result<LoadSpec> {
        if let Some(from) = &self.spec {
            return read_spec(from);
        }
        let tcp = self.tcp.as_ref().map(|addr| TcpLoad {
            addr: addr.clone(),
            mode: match self.mode {
                TcpMode::Stream => Mode::TcpStream,
                TcpMode::Pingpong => Mode::TcpPingpong,
            },
            message: self.message.clone().unwrap_or_else(|| "hello world".into()),
            size: self.size,
        });
        Ok(LoadSpec {
            urls: self.urls.clone(),
            tcp,
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
            http: HttpLoad {
                method: self.method.clone(),
                headers: self.headers.clone(),
                body: self.body.clone(),
                body_file: self.body_file.clone(),
                body_size: self.body_size,
                chunked: self.chunked.then(|| {
                    self.chunk_size
                        .unwrap_or(serverbench_engine::request::DEFAULT_CHUNK as u64)
                }),
                pipeline: self.pipeline,
                expect_status: self.expect_status.clone(),
                verify: self.verify,
                eager_reads: self.eager_reads,
                http2: self.http2,
                streams: self.streams,
                new_conn: self.new_conn,
                tls_resume: self.tls_resume,
                tls_version: self.tls_version,
                cacert: self.cacert.clone(),
                insecure: self.insecure,
            },
            ws: WsLoad {
                message: self.message.clone().filter(|_| self.tcp.is_none()),
                message_size: self.message_size,
                binary: self.binary,
                ping: self.ws_ping,
            },
            reconnect_every: self.reconnect_every,
            mix: match &self.mix {
                Some(path) => Some(
                    serverbench_model::Mix::load(path).map_err(|e| anyhow::anyhow!("--mix {e}"))?,
                ),
                None => None,
            },
        })
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
    serde_json::from_str(text.trim()).with_context(|| format!("--spec {from}: not a load spec"))
}

/// Runs `serverbench load`.
pub fn run(mut args: Args) -> anyhow::Result<Exit> {
    args.json |= args.format == Some(crate::flags::TextOrJson::Json);
    let spec = match args.load_spec() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("serverbench load: {e:#}");
            return Ok(Exit::BadInput);
        }
    };
    if args.find_max.find_max {
        return find_max::run(&args, spec);
    }
    if let Some(flag) = args.find_max.stray() {
        eprintln!("serverbench load: {flag} applies only with --find-max");
        return Ok(Exit::BadInput);
    }
    if args.hosts.is_some() {
        return distributed::run(&args, &spec);
    }
    let config = match Config::try_from(&spec) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("serverbench load: {e:#}");
            return Ok(Exit::BadInput);
        }
    };
    let quiet = args.quiet || !std::io::stderr().is_terminal();
    let line = std::cell::RefCell::new((!quiet).then(|| live::LiveLine::new(shape(&config))));
    let observer = |ev: Event| {
        if let Some(l) = line.borrow_mut().as_mut() {
            l.event(&ev);
        }
    };
    let gate = || {
        let mut out = std::io::stdout().lock();
        if writeln!(out, "ready").and_then(|()| out.flush()).is_err() {
            return false;
        }
        let mut line = String::new();
        matches!(std::io::stdin().read_line(&mut line), Ok(n) if n > 0 && line.trim() == "go")
    };
    let gate: Option<&dyn Fn() -> bool> = if args.barrier { Some(&gate) } else { None };
    let outcome = serverbench_engine::run_gated(&config, &observer, gate);
    if let Some(l) = line.borrow_mut().as_mut() {
        l.clear();
    }
    let result = match outcome {
        Ok(r) => r,
        Err(EngineError::Cancelled) => {
            eprintln!("serverbench load: --barrier: no `go` line on stdin (closed or another line); nothing measured");
            return Ok(Exit::NoGo);
        }
        Err(e @ EngineError::Refused { .. }) => {
            eprintln!("serverbench load: {e}");
            return Ok(Exit::Refused);
        }
        Err(e @ (EngineError::Config(_) | EngineError::FileLimit { .. })) => {
            eprintln!("serverbench load: {e}");
            return Ok(Exit::BadInput);
        }
        Err(e) => return Err(e).context("serverbench load"),
    };
    let json = serde_json::to_string_pretty(&result).context("serializing the result")?;
    if let Some(path) = &args.output {
        std::fs::write(path, format!("{json}\n"))
            .with_context(|| format!("writing --output {}", path.display()))?;
    }
    if args.json {
        println!("{json}");
    } else {
        print!("{}", summary::render(&result));
    }
    let (exit, why) = verdict::of(&result);
    if let Some(why) = why {
        eprintln!("serverbench load: {why}");
    }
    Ok(exit)
}

/// What the live line shows for this run.
fn shape(c: &Config) -> live::Shape {
    live::Shape {
        warmup: c.warmup,
        duration: match c.stop {
            Stop::Duration(d) => Some(d),
            Stop::Requests(_) => None,
        },
        stream: matches!(c.protocol, Protocol::TcpStream { .. }),
        handshakes: c.tls.is_some() && c.lifetime == Lifetime::PerRequest,
        http2: matches!(c.protocol, Protocol::Http2(_)),
        messages: matches!(c.protocol, Protocol::WebSocket(_)),
    }
}
