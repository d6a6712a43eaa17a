//! The phases around the main loop: opening connections before measurement, waiting at a
//! gate, and draining echoes after a TCP stream ends.

use super::{Backend, Plan, Shared, Worker, DRAIN_NS, TICK_NS};
use crate::conn::State;
use crate::sys;
use mio::Events;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Where a gated run stands.
pub(super) enum Gate {
    /// Still waiting.
    Shut,
    /// Open: measurement starts at this monotonic ns.
    Open(u64),
    /// The run was called off.
    CalledOff,
}

impl Worker<'_> {
    /// Gated runs: once the warm-up is over (`pause_at`), no new request goes out (those in
    /// flight complete, connections stay open), so that a host waiting at the barrier leaves
    /// its CPUs idle and the release line is read at once. When the gate opens, every
    /// connection resumes (the `-R` schedule restarts from now; an HTTP/2 connection keeps its
    /// session and opens streams on it) and the measurement start is returned:
    /// [`crate::GATE_LEAD`] later, so the load is back up before it is measured.
    pub(super) fn watch_gate(&mut self, shared: &Shared, pause_at: u64) -> Gate {
        let now = sys::now_ns();
        match shared.measure_from.load(Ordering::Acquire) {
            u64::MAX => {
                self.paused |= now >= pause_at;
                Gate::Shut
            }
            _ if shared.abort.load(Ordering::Relaxed) => Gate::CalledOff,
            at => {
                self.paused = false;
                if let Some(r) = &mut self.rate {
                    r.start = now;
                    r.k = 0;
                }
                for i in 0..self.conns.len() {
                    if self.conns[i].state != State::Ready {
                        continue;
                    }
                    if self.conns[i].h2.is_some() {
                        // Its preface and SETTINGS are done: a new session would send a second
                        // preface on the same connection.
                        self.refill(i, now);
                        self.flush(i, now);
                    } else {
                        self.on_ready(i, now);
                    }
                }
                Gate::Open(at)
            }
        }
    }

    /// Opens every connection (paced by `--connect-rate`) and waits until each is up or failed;
    /// returns the number that failed.
    pub(super) fn setup(&mut self, plan: &Plan, up: &AtomicU64) -> u64 {
        let mut events = Events::with_capacity(1024);
        let start = sys::now_ns();
        let mut opened = 0;
        let mut failed = 0u64;
        let mut pending = 0usize;
        loop {
            let now = sys::now_ns();
            while opened < self.conns.len()
                && now >= start + opened as u64 * plan.connect_interval_ns
            {
                match self.open(opened, now) {
                    Ok(()) => pending += 1,
                    Err(_) => failed += 1,
                }
                opened += 1;
            }
            for i in 0..self.conns.len() {
                if let State::Connecting(t) = self.conns[i].state {
                    if now.saturating_sub(t) > self.timeout_ns {
                        self.close(i, now);
                        pending -= 1;
                        failed += 1;
                    }
                }
            }
            if opened == self.conns.len() && pending == 0 {
                return failed;
            }
            let wait = if opened < self.conns.len() {
                plan.connect_interval_ns.min(TICK_NS)
            } else {
                TICK_NS
            };
            for (i, writable) in self.connect_events(&mut events, wait) {
                if !matches!(self.conns[i].state, State::Connecting(_)) {
                    continue;
                }
                match self.conns[i].check_connected(writable) {
                    Some(true) => {
                        self.conns[i].state = State::Connected;
                        pending -= 1;
                        up.fetch_add(1, Ordering::Relaxed);
                    }
                    Some(false) => {
                        self.close(i, 0);
                        pending -= 1;
                        failed += 1;
                    }
                    None => {}
                }
            }
        }
    }

    /// Setup: waits up to `wait_ns` for connects to end; returns each connection that had an
    /// event, and whether it was writable.
    fn connect_events(&mut self, events: &mut Events, wait_ns: u64) -> Vec<(usize, bool)> {
        match &mut self.io {
            Backend::Epoll(poll) => {
                let _ = poll.poll(events, Some(Duration::from_nanos(wait_ns)));
                events
                    .iter()
                    .map(|ev| (ev.token().0, ev.is_writable()))
                    .collect()
            }
            Backend::Uring(u) => {
                let Ok(batch) = u.turn(wait_ns) else {
                    return Vec::new();
                };
                let up = batch
                    .iter()
                    .filter_map(|c| self.uring_setup_event(c))
                    .collect();
                self.uring().ring.put_batch(batch);
                up
            }
        }
    }

    /// Copies this worker's figures to its live slot when the coordinator asked for them
    /// (one relaxed load when it did not), or with `done` as its last copy.
    pub(super) fn publish(&mut self, shared: &Shared, done: bool) {
        if !done && !shared.live.wanted(self.answered) {
            return;
        }
        let in_flight = self.conns.iter().map(|c| c.in_flight() as u64).sum();
        self.answered = shared.live.publish(
            self.slot,
            self.answered,
            done,
            &self.stats,
            sys::now_ns(),
            in_flight,
        );
    }

    /// TCP stream: stop writing and read until every connection got back what it sent.
    pub(super) fn drain_stream(&mut self, events: &mut Events) {
        self.stopping = true;
        let deadline = sys::now_ns() + DRAIN_NS;
        if let Backend::Uring(_) = self.io {
            while self.draining() && sys::now_ns() < deadline {
                if self.uring_turn(TICK_NS, None).is_err() {
                    break;
                }
            }
            return;
        }
        let mut buf = std::mem::take(&mut self.buf);
        // Events of the last batch were not handled: read every connection once first.
        for i in 0..self.conns.len() {
            self.drain_one(i, &mut buf);
        }
        while self.draining() && sys::now_ns() < deadline {
            let Backend::Epoll(poll) = &mut self.io else {
                break;
            };
            let _ = poll.poll(events, Some(Duration::from_millis(10)));
            for ev in events.iter() {
                if ev.token().0 < self.conns.len() {
                    self.drain_one(ev.token().0, &mut buf);
                }
            }
        }
        self.buf = buf;
    }

    /// Whether a TCP stream connection still waits for echoes of what it sent.
    fn draining(&self) -> bool {
        self.conns
            .iter()
            .any(|c| c.state == State::Ready && c.rd < c.wr)
    }

    /// Reads one connection to EAGAIN; echoes that arrive after the end still answer measured
    /// writes, so they are counted.
    fn drain_one(&mut self, i: usize, buf: &mut [u8]) {
        if self.conns[i].state != State::Ready {
            return;
        }
        let before = self.conns[i].rd;
        self.read_all(i, true, sys::now_ns(), buf);
        self.stats.bytes_read += self.conns[i].rd.saturating_sub(before);
    }
}
