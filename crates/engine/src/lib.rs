//! serverbench's load generator: share-nothing, edge-triggered event loops (one per thread) for
//! HTTP/1.1 (closed loop, pipelined, or constant rate; plain or TLS; keep-alive or a connection
//! per request), HTTP/2 (h2 over TLS or h2c, streams per connection), WebSocket echo (ws:// or
//! wss://, messages per connection) and TCP echo (stream or ping-pong), on epoll or, with
//! `--io uring`, on one io_uring per thread ([`uring`]).
//!
//! Each protocol is a driver behind one seam (`proto::Driver`, in `src/proto/`: `http1/`,
//! `http2/`, `ws/`, `tcp/`): it opens a session on a connection, writes what is due, consumes
//! what was read and reports completions and errors into the worker's stats. The worker loop
//! (`src/worker/`: schedule, stop, gate, timers, TLS, the epoll and io_uring backends) is
//! generic over the driver and instantiated once per driver where each thread starts
//! (`proto::run`), so the hot path has no dynamic dispatch; each driver also makes its thread's
//! protocol block of the result. `proto/mod.rs` is the only module outside `config` that
//! matches on `config::Protocol`. `src/proto/mod.rs` says how a driver is added and the shape a
//! transport that is not TCP (QUIC for HTTP/3) takes.
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
mod proto;
pub mod request;
pub mod stats;
pub mod sys;
pub mod uring;
mod worker;

pub use config::{
    Config, ConfigError, Http2Spec, HttpSpec, HttpTarget, Lifetime, Protocol, Reads, Schedule, Stop,
};
pub use idle::Idle;
use result::LoadResult;
use serverbench_model::live::Snapshot;
use serverbench_model::IoBackend;

use stats::Stats;
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
    check_file_limit(config.spec.connections)?;
    let threads = config.threads.min(config.spec.connections) as usize;
    let plans = plans(config, threads);
    let (backend, note) = uring::choose(config.spec.io);
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
                    .spawn_scoped(scope, move || proto::run(config, plan, i, shared, backend))
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
            total: config.spec.connections as u64,
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
    // Each thread's protocol block, merged by the model's one exact merge.
    let mut protocols = Vec::new();
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
        protocols.push(stats::assemble::protocol_part(config, &o.stats));
        match &mut merged {
            None => merged = Some(o.stats),
            Some(m) => m.merge(&o.stats),
        }
    }
    if connected == 0 {
        return Err(EngineError::Refused {
            target: config.addr.to_string(),
            attempts: refused.max(config.spec.connections as u64),
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
    let mut result = stats::assemble::load_result(
        config,
        threads,
        (&stats, &protocols),
        duration,
        (cpu_s, waited_s),
    );
    result.measure_start_unix_s = Some(start.unix_s);
    result.io = Some(ran);
    result.notes = notes;
    Ok(result)
}

/// Splits connections, `-n` and `-R` statically across threads.
fn plans(config: &Config, threads: usize) -> Vec<worker::Plan> {
    let t = threads as u64;
    let c = config.spec.connections as u64;
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
                    .spec
                    .connect_rate
                    .map_or(0, |r| (1e9 * t as f64 / r) as u64),
                cpu: (!config.spec.cpus.is_empty())
                    .then(|| config.spec.cpus[i as usize % config.spec.cpus.len()]),
            }
        })
        .filter(|p| p.connections > 0)
        .collect()
}
