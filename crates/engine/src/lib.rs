//! serverbench's load generator: share-nothing, edge-triggered event loops (one per thread) for
//! HTTP/1.1 (closed loop, pipelined, or constant rate; plain or TLS; keep-alive or a connection
//! per request), HTTP/2 (h2 over TLS or h2c, streams per connection), WebSocket echo (ws:// or
//! wss://, messages per connection) and TCP echo (stream or ping-pong), on epoll or, with `--io uring`, on one io_uring per thread ([`uring`]).
//!
//! The library never prints: progress goes to an observer callback, the outcome is a
//! [`LoadResult`] or an [`EngineError`].

pub mod config;
use serverbench_wire::{h2, http, tls};
mod conn;
mod coordinator;
use serverbench_model::result;
mod histo;
pub mod idle;
pub mod limits;
pub mod live;
pub mod request;
pub mod stats;
pub mod sys;
pub mod uring;
mod worker;

pub use config::{
    Config, ConfigError, Http2Options, Http2Spec, HttpOptions, HttpSpec, HttpTarget, Lifetime,
    Protocol, Reads, Schedule, Stop,
};
pub use idle::Idle;
pub use live::{Phase, Snapshot};
use result::LoadResult;
use serverbench_model::IoBackend;

use stats::{latency_of, Stats};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// With a gate, measurement starts this long after the gate opens: every worker sees the
/// start (they wake at least every 10 ms) before it comes, so none loses the first
/// milliseconds, and every host of a distributed run adds the same lead.
pub const GATE_LEAD: Duration = Duration::from_millis(25);

/// Progress reported to the observer (from the calling thread, never from the workers).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Every connection was opened (or failed): `connected` of `total` are up.
    Connected { connected: u64, total: u64 },
    /// Warm-up is over; measurement starts.
    Measuring,
    /// About once a second from the start (connecting included): `elapsed` since the load
    /// started (while connecting: since connecting started), and the figures so far.
    Tick {
        elapsed: Duration,
        snapshot: Box<Snapshot>,
    },
}

/// Why a run could not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{target} refused every connection ({attempts} attempts): is the server running?")]
    Refused { target: String, attempts: u64 },
    #[error(
        "{connections} connections need {needed} file descriptors; the limit is {limit} \
         (ulimit -n; the hard limit caps it)"
    )]
    FileLimit {
        connections: u32,
        needed: u64,
        limit: u64,
    },
    #[error("worker thread failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("worker thread panicked")]
    Panicked,
    #[error("the gate did not open: the run was called off before measuring")]
    Cancelled,
}

/// Raises the open-file limit for `connections`, or says why the run cannot fit.
fn check_file_limit(connections: u32) -> Result<(), EngineError> {
    let needed = u64::from(connections) + limits::SPARE_FDS;
    let limit = limits::raise_nofile(needed)?;
    if limit < needed {
        return Err(EngineError::FileLimit {
            connections,
            needed,
            limit,
        });
    }
    Ok(())
}

/// Validates `config`, runs the load and returns the merged result.
pub fn run(config: &Config, observer: &dyn Fn(Event)) -> Result<LoadResult, EngineError> {
    run_gated(config, observer, None)
}

/// Like [`run`], but with a `gate`: once connected and warmed up, the workers pause (no new
/// request; connections stay open) and `gate` is called; when it returns true the load
/// resumes at once and measurement starts [`GATE_LEAD`] later, for the whole duration; when
/// it returns false the run stops with [`EngineError::Cancelled`]. `-n` (a request count)
/// cannot be gated.
pub fn run_gated(
    config: &Config,
    observer: &dyn Fn(Event),
    gate: Option<&dyn Fn() -> bool>,
) -> Result<LoadResult, EngineError> {
    config.validate()?;
    if gate.is_some() && matches!(config.stop, Stop::Requests(_)) {
        return Err(ConfigError::flag("-n/--requests", "cannot be used with a barrier").into());
    }
    check_file_limit(config.connections)?;
    let threads = config.threads.min(config.connections) as usize;
    let plans = plans(config, threads);
    let (backend, note) = uring::choose(config.io);
    let shared = worker::Shared {
        barrier: Barrier::new(threads + 1),
        connected: AtomicU64::new(0),
        arrived: AtomicU64::new(0),
        up: AtomicU64::new(0),
        abort: AtomicBool::new(false),
        gated: gate.is_some(),
        measure_from: AtomicU64::new(if gate.is_some() { u64::MAX } else { 0 }),
        live: live::Board::new(plans.len()),
    };
    let outcomes = std::thread::scope(|scope| {
        let handles: Vec<_> = plans
            .into_iter()
            .enumerate()
            .map(|(i, plan)| {
                let shared = &shared;
                std::thread::Builder::new()
                    .name(format!("serverbench-load-{i}"))
                    .spawn_scoped(scope, move || worker::run(config, plan, i, shared, backend))
            })
            .collect::<Result<_, _>>()?;
        coordinator::wait_connected(config, threads as u64, &shared, observer);
        shared.barrier.wait();
        let connected = shared.connected.load(Ordering::SeqCst);
        if connected == 0 {
            shared.abort.store(true, Ordering::SeqCst);
        }
        observer(Event::Connected {
            connected,
            total: config.connections as u64,
        });
        shared.barrier.wait();
        let t0 = Instant::now();
        // Nothing connected: the workers are already done, there is nothing to release.
        let gate = gate.filter(|_| connected > 0);
        let start = coordinator::wait_measuring(config, t0, &handles, observer, gate, &shared);
        let outcomes: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        let cpu_s = sys::process_cpu_s() - start.cpu_s;
        Ok::<_, EngineError>((outcomes, cpu_s, connected, start))
    });
    let (outcomes, cpu_s, connected, start) = outcomes?;
    let mut measured_ns = 0;
    // Threads' shares of the measured span spent waiting for a CPU, summed.
    let mut waiting = 0.0;
    let mut merged: Option<Stats> = None;
    let mut refused = 0;
    let mut ran = backend;
    let mut notes: Vec<String> = note.into_iter().collect();
    for o in outcomes {
        let o = o.map_err(|_| EngineError::Panicked)??;
        if o.backend == IoBackend::Epoll {
            ran = IoBackend::Epoll; // a thread refused its ring: the run is not all io_uring
        }
        notes.extend(o.note.filter(|n| !notes.contains(n)));
        refused += o.connect_failures_at_setup;
        measured_ns = measured_ns.max(o.measured_ns);
        waiting += o.run_wait.map_or(0.0, |(w, t)| w as f64 / t.max(1) as f64);
        match &mut merged {
            None => merged = Some(o.stats),
            Some(m) => m.merge(&o.stats),
        }
    }
    if connected == 0 {
        return Err(EngineError::Refused {
            target: config.addr.to_string(),
            attempts: refused.max(config.connections as u64),
        });
    }
    if start.cancelled {
        return Err(EngineError::Cancelled);
    }
    let stats = merged.unwrap_or_else(|| Stats::new(false));
    let duration = match config.stop {
        Stop::Duration(d) => d,
        Stop::Requests(_) => Duration::from_nanos(measured_ns),
    };
    let waited_s = waiting * duration.as_secs_f64();
    let mut result = build_result(config, threads, &stats, duration, (cpu_s, waited_s));
    result.measure_start_unix_s = Some(start.unix_s);
    result.io = Some(ran);
    result.notes = notes;
    Ok(result)
}

/// Splits connections, `-n` and `-R` statically across threads.
fn plans(config: &Config, threads: usize) -> Vec<worker::Plan> {
    let t = threads as u64;
    let c = config.connections as u64;
    (0..t)
        .map(|i| {
            let share = |total: u64| total / t + u64::from(i < total % t);
            worker::Plan {
                connections: share(c) as usize,
                quota: match config.stop {
                    Stop::Requests(n) => Some(share(n)),
                    Stop::Duration(_) => None,
                },
                rate_interval_ns: match config.schedule {
                    Schedule::Rate { per_second } => Some(1e9 * t as f64 / per_second),
                    Schedule::ClosedLoop { .. } => None,
                },
                connect_interval_ns: config
                    .connect_rate
                    .map_or(0, |r| (1e9 * t as f64 / r) as u64),
                cpu: (!config.cpus.is_empty()).then(|| config.cpus[i as usize % config.cpus.len()]),
            }
        })
        .filter(|p| p.connections > 0)
        .collect()
}

fn build_result(
    config: &Config,
    threads: usize,
    s: &Stats,
    duration: Duration,
    (cpu_s, waited_s): (f64, f64),
) -> result::LoadResult {
    let secs = duration.as_secs_f64().max(1e-9);
    let (mode, message_len) = match &config.protocol {
        Protocol::Http(_) | Protocol::Http2(_) => (result::Mode::Http, 0),
        Protocol::TcpStream { message } => (result::Mode::TcpStream, message.len() as u64),
        Protocol::TcpPingPong { .. } => (result::Mode::TcpPingpong, 0),
        Protocol::WebSocket(_) => (result::Mode::Ws, 0),
    };
    let requests = s.bytes_read.checked_div(message_len).unwrap_or(s.requests);
    let ran_on = if config.cpus.is_empty() {
        threads.min(serverbench_machine::affinity::affinity_cpus().len())
    } else {
        let mut used: Vec<usize> = (0..threads)
            .map(|i| config.cpus[i % config.cpus.len()])
            .collect();
        used.sort_unstable();
        used.dedup();
        used.len()
    }
    .max(1);
    let rate = matches!(config.schedule, Schedule::Rate { .. });
    let tcp = mode.is_tcp();
    let bytes_both_ways = tcp || mode == result::Mode::Ws;
    let mbps = |b: u64| b as f64 * 8.0 / secs / 1e6;
    let seconds = duration.as_secs_f64().ceil() as usize;
    let connects = s.conn.connects;
    let (mix, mix_latency_us) = match &config.mix {
        Some(plan) => stats::mix_results(plan, &s.mix),
        None => Default::default(),
    };
    let mut histograms = histo::of_run(
        &s.latency,
        s.uncorrected.as_ref(),
        &s.seconds[..seconds.min(s.seconds.len())],
        (connects > 0).then_some(&s.conn.connect),
        config.tls.is_some().then_some(&s.conn.handshake),
        (mode == result::Mode::Ws).then_some(&s.ws.upgrade),
    );
    histograms.mix_latency_us = mix_latency_us;
    result::LoadResult {
        mode,
        target: config.target.clone(),
        connections: config.connections,
        threads: threads as u32,
        requests,
        duration_s: secs,
        rps: requests as f64 / secs,
        bytes_read: s.bytes_read,
        bytes_written: s.bytes_written,
        latency_us: latency_of(&s.latency),
        errors: s.errors.clone(),
        status: s
            .status
            .iter()
            .enumerate()
            .filter(|&(code, &n)| code > 0 && n > 0)
            .map(|(code, &n)| (code.to_string(), n))
            .collect(),
        client_cpu_s: cpu_s,
        client_cpu_us_per_request: (requests > 0).then(|| cpu_s * 1e6 / requests as f64),
        // Busy, or runnable and waiting for a CPU (a client sharing its cores falls behind
        // the schedule without ever showing 90% of CPU).
        client_saturated: (cpu_s + waited_s) / (secs * ran_on as f64) >= 0.9,
        timeline: s.timeline(seconds),
        rate_target: match config.schedule {
            Schedule::Rate { per_second } => Some(per_second),
            Schedule::ClosedLoop { .. } => None,
        },
        rate_achieved: rate.then(|| s.sent as f64 / secs),
        late: rate.then_some(s.late),
        latency_us_uncorrected: s.uncorrected.as_ref().map(latency_of),
        mbps_down: bytes_both_ways.then(|| mbps(s.bytes_read)),
        mbps_up: bytes_both_ways.then(|| mbps(s.bytes_written)),
        bytes_per_connection: bytes_both_ways
            .then(|| (s.bytes_read + s.bytes_written) as f64 / config.connections as f64),
        bytes_in_flight: (mode == result::Mode::TcpStream).then_some(s.bytes_in_flight),
        measure_start_unix_s: None,
        histograms: Some(histograms),
        connection_mode: (!tcp).then(|| {
            match config.lifetime {
                Lifetime::KeepAlive => "keep-alive",
                Lifetime::PerRequest => "new-conn",
            }
            .to_string()
        }),
        connects: Some(connects),
        connects_per_s: Some(connects as f64 / secs),
        connect_latency_us: (connects > 0).then(|| latency_of(&s.conn.connect)),
        tls: config
            .tls
            .as_ref()
            .map(|t| tls_result(config, t, s, secs, cpu_s)),
        http2: match &config.protocol {
            Protocol::Http2(h) => Some(http2_result(config, h, s)),
            _ => None,
        },
        idle: Some(config.idle.result(&s.naps)),
        io: None,
        notes: Vec::new(),
        ws: match &config.protocol {
            Protocol::WebSocket(w) => Some(ws_result(config, w, s, secs)),
            _ => None,
        },
        bodies: match &config.protocol {
            Protocol::Http(h) if h.count_bodies => Some(s.bodies.result()),
            _ => None,
        },
        mix,
        in_flight_at_end: s.in_flight_at_end,
        // A stream has no answers to time: it would read as silent throughout.
        silences: match mode {
            result::Mode::TcpStream => Vec::new(),
            _ => s.silences_s(),
        },
    }
}

fn ws_result(config: &Config, spec: &config::WsSpec, s: &Stats, secs: f64) -> result::WsResult {
    let w = &s.ws;
    let by_name = |upgrade: bool| {
        let mut m = std::collections::BTreeMap::new();
        for (cause, n) in w.causes.iter().filter(|(c, _)| c.is_upgrade() == upgrade) {
            *m.entry(cause.name().to_string()).or_insert(0) += n;
        }
        m
    };
    result::WsResult {
        message_kind: spec.kind.as_str().to_string(),
        message_size: spec.payload.len() as u64,
        reconnect_every: config.reconnect_every,
        messages_sent: w.messages_sent,
        upgrades: w.upgrades,
        upgrades_per_s: w.upgrades as f64 / secs,
        upgrade_latency_us: latency_of(&w.upgrade),
        upgrade_failures: by_name(true),
        close_codes: w
            .close_codes
            .iter()
            .map(|(code, n)| (code.to_string(), *n))
            .collect(),
        protocol_errors: by_name(false),
        upgrades_unanswered: w.upgrades_unanswered,
    }
}

fn http2_result(config: &Config, spec: &Http2Spec, s: &Stats) -> result::Http2Result {
    let settings = s.h2.settings;
    result::Http2Result {
        protocol: if config.tls.is_some() { "h2" } else { "h2c" }.to_string(),
        streams: spec.streams,
        max_concurrent_streams: settings.and_then(|s| s.max_concurrent_streams),
        initial_window_size: settings.map(|s| s.initial_window_size),
        max_frame_size: settings.map(|s| s.max_frame_size),
        goaways: s.h2.goaways,
        errors: s
            .h2
            .errors_by_name()
            .map(|(name, n)| (name.to_string(), n))
            .collect(),
    }
}

fn tls_result(
    config: &Config,
    spec: &tls::TlsSpec,
    s: &Stats,
    secs: f64,
    cpu_s: f64,
) -> result::TlsResult {
    let c = &s.conn;
    let n = c.negotiated;
    let handshakes = c.handshakes();
    let per_request = config.lifetime == Lifetime::PerRequest;
    result::TlsResult {
        version: n.map(|n| n.version.to_string()),
        cipher_suite: n.and_then(|n| n.cipher_suite).map(|c| c.to_string()),
        key_exchange_group: n.map(|n| n.key_exchange_group.to_string()),
        alpn: n.and_then(|n| n.alpn).map(str::to_string),
        mixed: c.mixed,
        resume: spec.resume.as_str().to_string(),
        handshakes,
        handshakes_full: c.handshakes_full,
        handshakes_resumed: c.handshakes_resumed,
        handshakes_per_s: handshakes as f64 / secs,
        handshake_latency_us: latency_of(&c.handshake),
        client_cpu_us_per_handshake: (per_request && handshakes > 0)
            .then(|| cpu_s * 1e6 / handshakes as f64),
        errors: c
            .tls_errors
            .iter()
            .map(|(cause, n)| (cause.to_string(), *n))
            .collect(),
    }
}
