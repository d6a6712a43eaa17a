//! The open-loop (`-R`) schedule: requests are due at fixed intervals from the start and go out
//! on whichever connection is idle (HTTP/2: has a stream slot free); latency counts from the
//! intended send time.

use super::{Backend, Worker, LATE_NS, TIMER};
use crate::proto::Driver;
use crate::sys::TimerFd;
use crate::uring::Op;
use mio::unix::SourceFd;
use mio::Interest;
use std::collections::VecDeque;

/// `-R`: the arrival schedule and the connections free to take the next send.
pub(super) struct RateState {
    pub(super) interval: f64,
    pub(super) start: u64,
    pub(super) k: u64,
    /// Taken from the back; an HTTP/2 connection with slots left goes back in at the front,
    /// so that streams spread over the connections.
    pub(super) idle: VecDeque<usize>,
    pub(super) timer: TimerFd,
}

impl RateState {
    /// The schedule's timer, watched by the worker's backend.
    pub(super) fn new(interval: f64, io: &mut Backend) -> std::io::Result<RateState> {
        let timer = TimerFd::new()?;
        let fd = timer.raw_fd();
        match io {
            Backend::Epoll(poll) => {
                poll.registry()
                    .register(&mut SourceFd(&fd), TIMER, Interest::READABLE)?;
            }
            Backend::Uring(u) => {
                let events = libc::POLLIN as u32;
                u.ring.poll(fd, events, true, Op::Timer.pack(0, 0));
            }
        }
        Ok(RateState {
            interval,
            start: 0,
            k: 0,
            idle: VecDeque::new(),
            timer,
        })
    }

    fn next_due(&self) -> u64 {
        self.start + (self.k as f64 * self.interval) as u64
    }
}

impl<D: Driver> Worker<'_, D> {
    pub(crate) fn make_idle(&mut self, i: usize) {
        if let Some(r) = &mut self.rate {
            if !self.conns[i].idle {
                self.conns[i].idle = true;
                r.idle.push_back(i);
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
            let Some(i) = r.idle.pop_back() else { return };
            self.conns[i].idle = false;
            if !self.has_room(i) {
                continue;
            }
            if let Some(r) = &mut self.rate {
                r.k += 1;
            }
            self.issue(i, due, now);
            self.stats.sent(now, now - due > LATE_NS);
            if self.flush(i, now) && D::MULTIPLEXED && self.has_room(i) {
                if let Some(r) = &mut self.rate {
                    self.conns[i].idle = true;
                    r.idle.push_front(i);
                }
            }
        }
    }
}
