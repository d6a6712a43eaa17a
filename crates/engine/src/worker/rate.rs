//! The open-loop (`-R`) schedule: requests are due at fixed intervals from the start and go out
//! on whichever connection is idle; latency counts from the intended send time.

use super::{Worker, LATE_NS};
use crate::conn::State;
use crate::sys::TimerFd;

/// `-R`: the arrival schedule and the connections free to take the next send.
pub(super) struct RateState {
    pub(super) interval: f64,
    pub(super) start: u64,
    pub(super) k: u64,
    pub(super) idle: Vec<usize>,
    pub(super) timer: TimerFd,
}

impl RateState {
    fn next_due(&self) -> u64 {
        self.start + (self.k as f64 * self.interval) as u64
    }
}

impl Worker<'_> {
    pub(super) fn make_idle(&mut self, i: usize) {
        if let Some(r) = &mut self.rate {
            if !self.conns[i].idle {
                self.conns[i].idle = true;
                r.idle.push(i);
            }
        }
    }

    /// `-R`: sends every request that is due on idle connections, then arms the timer.
    pub(super) fn dispatch(&mut self, now: u64) {
        loop {
            let Some(r) = &mut self.rate else { return };
            let due = r.next_due();
            if due > now {
                r.timer.arm(due);
                return;
            }
            if self.issued >= self.quota || self.stopping || self.paused {
                return;
            }
            let Some(i) = r.idle.pop() else { return };
            r.k += 1;
            self.conns[i].idle = false;
            if self.conns[i].state != State::Ready || !self.conns[i].inflight.is_empty() {
                r.k -= 1;
                continue;
            }
            self.issue(i, due, now);
            self.stats.sent(now, now - due > LATE_NS);
            self.flush(i, now);
        }
    }
}
