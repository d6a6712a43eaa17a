//! The phases around the main loop: opening connections before measurement, waiting at a
//! gate, and draining echoes after a TCP stream ends.

use super::{Backend, Plan, Shared, Worker, DRAIN_NS, TICK_NS};
use crate::conn::State;
use crate::proto::Driver;
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

impl<D: Driver> Worker<'_, D> {
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
                    D::resume(self, i, now);
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
                    // A UDP transport is up at once: its handshake starts with the loop.
                    Ok(()) if self.conns[opened].state == State::Connected => {
                        up.fetch_add(1, Ordering::Relaxed);
                    }
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

    /// Requests (messages, streams) sent on this thread's connections and not answered yet.
    pub(super) fn in_flight(&self) -> u64 {
        self.conns.iter().map(|c| c.in_flight() as u64).sum()
    }

    /// Copies this worker's figures to its live slot when the coordinator asked for them
    /// (one relaxed load when it did not), or with `done` as its last copy.
    pub(super) fn publish(&mut self, shared: &Shared, done: bool) {
        if !done && !shared.live.wanted(self.answered) {
            return;
        }
        let in_flight = self.in_flight();
        self.answered = shared.live.publish(
            self.slot,
            self.answered,
            done,
            &self.stats,
            sys::now_ns(),
            in_flight,
        );
    }

    /// TCP stream: stop writing and read until every connection got back what it sent, or until
    /// nothing came back for the request timeout (at least [`DRAIN_NS`]), or [`DRAIN_CAP`] spans
    /// of that. What was still in flight then is the result's `bytes_in_flight`.
    pub(super) fn drain_stream(&mut self, events: &mut Events) {
        self.stopping = true;
        let stall = self.timeout_ns.max(DRAIN_NS);
        let mut drain = Drain::new(sys::now_ns(), stall);
        let mut buf = std::mem::take(&mut self.buf);
        if let Backend::Epoll(_) = self.io {
            // Events of the last batch were not handled: read every connection once first.
            for i in 0..self.conns.len() {
                self.drain_one(i, &mut buf);
            }
        }
        while self.draining() && drain.goes_on(sys::now_ns(), self.echoed()) {
            match &mut self.io {
                Backend::Uring(_) => {
                    if self.uring_turn(TICK_NS, None).is_err() {
                        break;
                    }
                }
                Backend::Epoll(poll) => {
                    let _ = poll.poll(events, Some(Duration::from_millis(10)));
                    for ev in events.iter() {
                        if ev.token().0 < self.conns.len() {
                            self.drain_one(ev.token().0, &mut buf);
                        }
                    }
                }
            }
        }
        self.buf = buf;
        self.stats.bytes_in_flight = self
            .conns
            .iter()
            .filter(|c| c.state == State::Ready)
            .map(|c| c.wr.saturating_sub(c.rd))
            .sum();
    }

    /// Echo bytes read back so far, over the connections still up.
    fn echoed(&self) -> u64 {
        self.conns.iter().map(|c| c.rd).sum()
    }

    /// Whether a TCP stream connection still waits for echoes of what it sent (io_uring: or for
    /// a send still in the kernel, whose bytes count once it completes).
    fn draining(&self) -> bool {
        self.conns
            .iter()
            .enumerate()
            .any(|(i, c)| c.state == State::Ready && (c.rd < c.wr || self.send_in_kernel(i)))
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

/// How many stall spans a drain may last in all, however slowly echoes trickle back.
const DRAIN_CAP: u64 = 5;

/// The clock of a TCP stream's drain: it goes on while echoes keep coming, until one stall span
/// passes without a byte, or [`DRAIN_CAP`] spans in all.
#[derive(Debug, Clone, Copy)]
pub(super) struct Drain {
    stall: u64,
    cap_at: u64,
    last_progress: u64,
    echoed: Option<u64>,
}

impl Drain {
    pub(super) fn new(now: u64, stall: u64) -> Self {
        Drain {
            stall,
            cap_at: now.saturating_add(stall.saturating_mul(DRAIN_CAP)),
            last_progress: now,
            echoed: None,
        }
    }

    /// Whether to wait on, given the echo bytes read so far.
    pub(super) fn goes_on(&mut self, now: u64, echoed: u64) -> bool {
        if self.echoed != Some(echoed) {
            self.echoed = Some(echoed);
            self.last_progress = now;
        }
        now < self.cap_at && now.saturating_sub(self.last_progress) < self.stall
    }
}

#[cfg(test)]
mod drain_tests {
    use super::Drain;

    #[test]
    fn a_drain_goes_on_while_echoes_keep_coming_past_one_stall_span() {
        let mut d = Drain::new(0, 100);
        assert!(d.goes_on(0, 0));
        assert!(d.goes_on(90, 10));
        assert!(d.goes_on(180, 20), "progress at 90 restarted the span");
        assert!(!d.goes_on(281, 20), "no byte for a whole span");
    }

    #[test]
    fn a_drain_stops_at_its_cap_even_while_echoes_trickle_in() {
        let mut d = Drain::new(0, 100);
        let mut echoed = 0;
        let mut t = 0;
        while d.goes_on(t, echoed) {
            t += 50;
            echoed += 1;
        }
        assert_eq!(t, 500);
    }
}
