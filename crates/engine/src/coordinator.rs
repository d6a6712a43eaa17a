//! The calling thread while the workers run: it waits for the connections (reporting progress),
//! through the warm-up and the gate, marks the start of measurement, and once a second merges
//! the workers' published figures into an [`Event::Tick`] (see [`crate::live`]).

use crate::live::{Merger, Phase, Snapshot};
use crate::{sys, worker, Config, Event, GATE_LEAD};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const SECOND: Duration = Duration::from_secs(1);

/// When measurement started, as the coordinating thread saw it.
pub(crate) struct MeasureStart {
    /// Process CPU seconds at that instant.
    pub cpu_s: f64,
    /// Wall clock, seconds since the epoch.
    pub unix_s: f64,
    /// The gate returned false.
    pub cancelled: bool,
    /// Monotonic, for the live view.
    at: Instant,
}

impl MeasureStart {
    fn now() -> Self {
        MeasureStart {
            cpu_s: sys::process_cpu_s(),
            unix_s: unix_now(),
            cancelled: false,
            at: Instant::now(),
        }
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Waits for the gate, then tells the workers when measurement starts.
fn open_gate(gate: &dyn Fn() -> bool, shared: &worker::Shared) -> MeasureStart {
    if !gate() {
        shared.abort.store(true, Ordering::SeqCst);
        shared.measure_from.store(0, Ordering::SeqCst);
        return MeasureStart {
            cancelled: true,
            ..MeasureStart::now()
        };
    }
    let at = sys::now_ns() + GATE_LEAD.as_nanos() as u64;
    let unix_s = unix_now() + GATE_LEAD.as_secs_f64();
    shared.measure_from.store(at, Ordering::SeqCst);
    std::thread::sleep(Duration::from_nanos(at.saturating_sub(sys::now_ns())));
    MeasureStart {
        unix_s,
        ..MeasureStart::now()
    }
}

/// Until every worker has opened its connections: a tick a second with how many are up.
pub(crate) fn wait_connected(
    config: &Config,
    workers: u64,
    shared: &worker::Shared,
    observer: &dyn Fn(Event),
) {
    let t0 = Instant::now();
    let mut next_tick = SECOND;
    while shared.arrived.load(Ordering::SeqCst) < workers {
        let elapsed = t0.elapsed();
        if elapsed >= next_tick {
            next_tick += SECOND;
            let snapshot = Snapshot {
                phase: Phase::Connecting,
                elapsed,
                connected: shared.up.load(Ordering::Relaxed),
                connections: config.spec.connections as u64,
                ..Snapshot::default()
            };
            observer(Event::Tick {
                elapsed,
                snapshot: Box::new(snapshot),
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Reports a merged snapshot, `in_phase` into its phase.
fn tick(
    observer: &dyn Fn(Event),
    elapsed: Duration,
    mut snapshot: Snapshot,
    in_phase: Duration,
    config: &Config,
    shared: &worker::Shared,
) {
    snapshot.elapsed = in_phase;
    snapshot.connected = shared.connected.load(Ordering::Relaxed);
    snapshot.connections = config.spec.connections as u64;
    observer(Event::Tick {
        elapsed,
        snapshot: Box::new(snapshot),
    });
}

/// Sleeps through warm-up and the gate, if any, and the measurement, reporting a tick a
/// second; returns when measurement began once the workers are done.
pub(crate) fn wait_measuring<T>(
    config: &Config,
    t0: Instant,
    handles: &[std::thread::ScopedJoinHandle<'_, T>],
    observer: &dyn Fn(Event),
    gate: Option<&dyn Fn() -> bool>,
    shared: &worker::Shared,
) -> MeasureStart {
    let mut start: Option<MeasureStart> = None;
    let mut next_tick = SECOND;
    let mut merger = Merger::new(handles.len(), sys::now_ns());
    loop {
        let elapsed = t0.elapsed();
        if start.is_none() && elapsed >= config.spec.warmup {
            let measuring = match gate {
                Some(g) => open_gate(g, shared),
                None => MeasureStart::now(),
            };
            // A warm-up tick asked for is shown with the answers in; ticks restart with the
            // phase, the first measured one a second in.
            if let Some(snapshot) = merger.flush(&shared.live, Phase::WarmUp) {
                tick(observer, elapsed, snapshot, t0.elapsed(), config, shared);
            }
            start = Some(measuring);
            observer(Event::Measuring);
            next_tick = t0.elapsed() + SECOND;
        }
        if handles.iter().all(|h| h.is_finished()) {
            return start.unwrap_or_else(MeasureStart::now);
        }
        if elapsed >= next_tick && !merger.pending() {
            merger.ask(&shared.live);
            next_tick += SECOND;
        }
        let phase = match start {
            Some(_) => Phase::Measuring,
            None => Phase::WarmUp,
        };
        if let Some(snapshot) = merger.collect(&shared.live, phase) {
            let in_phase = start.as_ref().map_or(t0.elapsed(), |s| s.at.elapsed());
            tick(observer, elapsed, snapshot, in_phase, config, shared);
        }
        let until = if start.is_none() {
            config.spec.warmup
        } else {
            next_tick
        };
        let mut nap = until.saturating_sub(elapsed).min(Duration::from_millis(50));
        if merger.pending() {
            nap = nap.min(Duration::from_millis(2));
        }
        std::thread::sleep(nap.max(Duration::from_micros(200)));
    }
}
