//! Thin wrappers over the few Linux calls the engine's hot loop needs: the monotonic clock,
//! rusage, timerfd and timer slack. CPU affinity is serverbench-machine's (`affinity`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Nanoseconds on CLOCK_MONOTONIC (the same clock `timerfd` uses with `TFD_TIMER_ABSTIME`).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sets the calling thread's timer slack (prctl(2) `PR_SET_TIMERSLACK`): how much later than
/// asked the kernel may end its sleeps (50 µs by default). Best effort.
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong) };
}

/// User + system CPU seconds used by the whole process so far.
pub fn process_cpu_s() -> f64 {
    // SAFETY: rusage is plain data filled by the kernel.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        tv(ru.ru_utime) + tv(ru.ru_stime)
    }
}

/// Nanoseconds this thread has spent runnable but waiting for a CPU (the second figure of
/// `/proc/thread-self/schedstat`); `None` where the kernel does not keep it.
pub fn thread_run_wait_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// A non-blocking CLOCK_MONOTONIC timerfd armed with absolute deadlines.
pub struct TimerFd {
    fd: OwnedFd,
    armed_at: u64,
}

impl TimerFd {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall; the returned fd is owned below.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(TimerFd { fd, armed_at: 0 })
    }

    /// Arms the timer to fire at `at_ns` (CLOCK_MONOTONIC); re-arming the same time is free.
    pub fn arm(&mut self, at_ns: u64) {
        if at_ns == self.armed_at {
            return;
        }
        self.armed_at = at_ns;
        let at_ns = at_ns.max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: valid fd and itimerspec.
        unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
    }

    /// Consumes a pending expiration (so the edge-triggered registration fires again).
    pub fn drain(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: reading at most 8 bytes into an 8-byte buffer.
        unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
        self.armed_at = 0;
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_never_goes_back() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
    }
}
