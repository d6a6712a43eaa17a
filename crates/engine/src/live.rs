//! The live view's figures: what each worker publishes about itself, and how the coordinating
//! thread merges that into a [`Snapshot`] for [`crate::Event::Tick`] once a second.
//!
//! The workers stay share-nothing on the hot path: a request touches only its own thread's
//! [`crate::stats::Stats`]. To take a snapshot the coordinator bumps an epoch (one atomic). Each
//! worker loads it (relaxed) in the housekeeping it already does every 10 ms and, when it
//! changed, copies its counters and its latency histogram into its own [`Slot`], a `Mutex` it
//! only ever `try_lock`s: if the coordinator happens to hold it, the worker tries again 10 ms
//! later and never waits. The copy goes into the slot's preallocated histogram (`reset` then
//! `add`, a 136 KiB memcpy for same-shaped histograms): no allocation, once a second per thread.
//! The coordinator collects the slots as they answer (at most 30 ms, without delaying the
//! start of measurement), adds the counters and the histograms (HdrHistogram's `add` is
//! exact) and reads p50/p99 from the merge: percentiles are never averaged.
//!
//! Why on request and not every 100-250 ms: each tick sees copies at most ~10 ms old, all
//! from the same moment, and there is one copy per second instead of four to ten. Why a
//! `Mutex` and not atomics with a seqlock: the latency histogram is ~17k counters; a seqlock
//! over it would make the reader retry a large copy, a `try_lock` costs one uncontended CAS.
//!
//! The rate over the last second is taken per slot — (requests now − requests at the
//! previous copy) / the worker's own time between the two copies — and summed, so a late
//! answer does not skew it.

use crate::result::Errors;
use crate::stats::{new_histogram, Stats};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

// The snapshot's types are the model's: the CLI renders them through serverbench-report.
pub(crate) use serverbench_model::live::{Phase, Snapshot};

/// One worker's published copy.
pub(crate) struct Slot {
    /// The request this copy answers (0: none yet).
    epoch: u64,
    /// The worker's loop is over: this copy is its last.
    done: bool,
    /// When it was taken, monotonic ns.
    at_ns: u64,
    /// Whether the counts below are measured ones (else the warm-up's).
    measuring: bool,
    /// Requests and handshakes of both phases, for the rates over the last second.
    all_requests: u64,
    all_handshakes: u64,
    requests: u64,
    errors: Errors,
    bytes_read: u64,
    bytes_written: u64,
    handshakes: u64,
    in_flight: u64,
    /// gRPC messages received (measured ones).
    messages: u64,
    latency: Histogram<u64>,
}

impl Slot {
    fn new() -> Self {
        Slot {
            epoch: 0,
            done: false,
            at_ns: 0,
            measuring: false,
            all_requests: 0,
            all_handshakes: 0,
            requests: 0,
            errors: Errors::default(),
            bytes_read: 0,
            bytes_written: 0,
            handshakes: 0,
            in_flight: 0,
            messages: 0,
            latency: new_histogram(),
        }
    }

    /// Copies `stats` as of `now` (the phase the worker is in decides which counts).
    fn copy(&mut self, stats: &Stats, now: u64, in_flight: u64) {
        let w = &stats.warm;
        let measured_hs = stats.conn.handshakes();
        self.at_ns = now;
        self.measuring = stats.started(now);
        self.all_requests = w.requests + stats.requests;
        self.all_handshakes = w.handshakes + measured_hs;
        self.in_flight = in_flight;
        self.messages = stats.grpc.messages_received;
        self.latency.reset();
        let latency = if self.measuring {
            self.requests = stats.requests;
            self.errors.clone_from(&stats.errors);
            self.bytes_read = stats.bytes_read;
            self.bytes_written = stats.bytes_written;
            self.handshakes = measured_hs;
            &stats.latency
        } else {
            self.requests = w.requests;
            self.errors.clone_from(&w.errors);
            self.bytes_read = w.bytes_read;
            self.bytes_written = w.bytes_written;
            self.handshakes = w.handshakes;
            &w.latency
        };
        // Same bounds: a plain copy of the counts, which cannot fail.
        let _ = self.latency.add(latency);
    }
}

/// The slots of all workers and the epoch the coordinator asks with.
pub(crate) struct Board {
    epoch: AtomicU64,
    slots: Vec<Mutex<Slot>>,
}

impl Board {
    pub(crate) fn new(workers: usize) -> Self {
        Board {
            epoch: AtomicU64::new(0),
            slots: (0..workers).map(|_| Mutex::new(Slot::new())).collect(),
        }
    }

    /// Worker `slot`: whether a copy is wanted (a relaxed load; nothing else is touched).
    #[inline]
    pub(crate) fn wanted(&self, answered: u64) -> bool {
        self.epoch.load(Ordering::Relaxed) != answered
    }

    /// Worker `slot`: publishes `stats` unless the slot is busy; returns the epoch answered
    /// (unchanged when busy, so the worker tries again at its next housekeeping). The last
    /// copy (`done`) waits for the lock: the loop is over, and it must land.
    pub(crate) fn publish(
        &self,
        slot: usize,
        answered: u64,
        done: bool,
        stats: &Stats,
        now: u64,
        in_flight: u64,
    ) -> u64 {
        let epoch = self.epoch.load(Ordering::Relaxed);
        let mut s = match self.slots[slot].try_lock() {
            Ok(s) => s,
            Err(_) if done => self.lock(slot),
            Err(_) => return answered,
        };
        s.copy(stats, now, in_flight);
        s.epoch = epoch;
        s.done = done;
        epoch
    }

    fn lock(&self, i: usize) -> MutexGuard<'_, Slot> {
        self.slots[i].lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The coordinator's side: asks, waits for the answers, merges.
pub(crate) struct Merger {
    /// The epoch asked for, and when (`None`: no question pending).
    asked: Option<(u64, std::time::Instant)>,
    /// Per slot: (at_ns, all requests, all handshakes, gRPC messages) at the previous tick.
    prev: Vec<(u64, u64, u64, u64)>,
    latency: Histogram<u64>,
}

/// How long the coordinator waits for a busy worker before merging without its new copy.
const ANSWER_WITHIN: Duration = Duration::from_millis(30);

impl Merger {
    /// `start_ns`: when the load started (monotonic), the base of the first rate.
    pub(crate) fn new(workers: usize, start_ns: u64) -> Self {
        Merger {
            asked: None,
            prev: vec![(start_ns, 0, 0, 0); workers],
            latency: new_histogram(),
        }
    }

    pub(crate) fn pending(&self) -> bool {
        self.asked.is_some()
    }

    /// The pending question's snapshot at once, with whatever answers are in (at a phase
    /// change: a warm-up tick asked for is shown, not lost).
    pub(crate) fn flush(&mut self, board: &Board, phase: Phase) -> Option<Snapshot> {
        self.asked.take()?;
        Some(self.merge(board, phase))
    }

    /// Asks every worker for a copy.
    pub(crate) fn ask(&mut self, board: &Board) {
        let epoch = board.epoch.fetch_add(1, Ordering::Relaxed) + 1;
        self.asked = Some((epoch, std::time::Instant::now()));
    }

    /// Once every worker answered (or [`ANSWER_WITHIN`] passed): the merged snapshot of
    /// `phase`, whose slots are those of workers already in it (a worker a few ms behind at a
    /// phase change is left out of the counts, not mixed in).
    pub(crate) fn collect(&mut self, board: &Board, phase: Phase) -> Option<Snapshot> {
        let (epoch, at) = self.asked?;
        let answered = (0..board.slots.len()).all(|i| {
            let s = board.lock(i);
            s.epoch == epoch || s.done
        });
        if !answered && at.elapsed() < ANSWER_WITHIN {
            return None;
        }
        self.asked = None;
        Some(self.merge(board, phase))
    }

    fn merge(&mut self, board: &Board, phase: Phase) -> Snapshot {
        let mut snap = Snapshot {
            phase,
            ..Snapshot::default()
        };
        self.latency.reset();
        for i in 0..board.slots.len() {
            let s = board.lock(i);
            if s.at_ns == 0 {
                continue; // never published
            }
            let (at, req, hs, msgs) = self.prev[i];
            let secs = s.at_ns.saturating_sub(at) as f64 / 1e9;
            if secs > 0.0 {
                snap.rate_now += s.all_requests.saturating_sub(req) as f64 / secs;
                snap.handshakes_now += s.all_handshakes.saturating_sub(hs) as f64 / secs;
                snap.messages_now += s.messages.saturating_sub(msgs) as f64 / secs;
            }
            self.prev[i] = (s.at_ns, s.all_requests, s.all_handshakes, s.messages);
            snap.in_flight += s.in_flight;
            if s.measuring != (phase == Phase::Measuring) {
                continue;
            }
            snap.requests += s.requests;
            snap.errors.add(&s.errors);
            snap.bytes_read += s.bytes_read;
            snap.bytes_written += s.bytes_written;
            snap.handshakes += s.handshakes;
            let _ = self.latency.add(&s.latency);
        }
        if !self.latency.is_empty() {
            snap.p50_us = Some(self.latency.value_at_quantile(0.5) as f64);
            snap.p99_us = Some(self.latency.value_at_quantile(0.99) as f64);
        }
        snap
    }
}

#[cfg(test)]
mod tests;
