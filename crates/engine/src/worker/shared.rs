//! What a worker is given and hands back, and the little state the threads share.

use crate::stats::Stats;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Barrier;

/// This thread's share of the work.
pub struct Plan {
    pub connections: usize,
    /// `-n`: requests this thread completes (None: run for the duration).
    pub quota: Option<u64>,
    /// `-R`: nanoseconds between this thread's sends.
    pub rate_interval_ns: Option<f64>,
    /// `--connect-rate`: nanoseconds between this thread's connects during ramp-up.
    pub connect_interval_ns: u64,
    pub cpu: Option<usize>,
}

/// The only state threads share: touched during setup, with a gate until measuring, and once a
/// second (a relaxed load every 10 ms, one copy into a slot of their own) for the live view.
pub struct Shared {
    pub barrier: Barrier,
    pub connected: AtomicU64,
    /// Workers done with setup (about to wait at the barrier).
    pub arrived: AtomicU64,
    /// Connections up so far during setup (for the live view).
    pub up: AtomicU64,
    pub abort: AtomicBool,
    /// The run has a gate: fixed before the threads start, so a thread that reaches its loop
    /// after the gate answered still goes through it (reading `measure_from` alone raced with a
    /// gate answering at once: that thread ran the whole duration).
    pub gated: bool,
    /// 0: measure after the warm-up; `u64::MAX`: wait for the gate; else the monotonic ns at
    /// which measurement starts (set once by the gate).
    pub measure_from: AtomicU64,
    /// Where each worker publishes its figures for the live view when asked.
    pub live: crate::live::Board,
}

/// What one thread hands back.
pub struct Outcome {
    /// The backend this thread ran on, and why it is not the one asked for.
    pub backend: serverbench_model::IoBackend,
    pub note: Option<String>,
    pub stats: Stats,
    pub connect_failures_at_setup: u64,
    /// Nanoseconds from the start of measurement to the end of this thread's loop.
    pub measured_ns: u64,
    /// Over the measured span: nanoseconds this thread waited for a CPU while runnable, and
    /// the span's length (`None` where the kernel does not say).
    pub run_wait: Option<(u64, u64)>,
}
