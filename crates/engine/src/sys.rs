//! Thin wrappers over the few Linux calls the engine needs: the monotonic clock, CPU affinity,
//! rusage, timerfd and timer slack.
//!
//! CPU affinity lives here for the whole workspace (the harness pins servers, load tools and its
//! sampler with it): the mask, pinning a thread, and `taskset -c` style CPU lists, through nix.

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;
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

/// The CPUs in the calling thread's affinity mask (inherited by the threads and processes it
/// starts), in ascending order; `[0]` if the kernel will not say.
pub fn affinity_cpus() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => vec![0],
    }
}

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    pin_current_thread_to(&[cpu])
}

/// Pins the calling thread, and so the threads and processes it starts afterwards, to `cpus`;
/// empty: no-op.
pub fn pin_current_thread_to(cpus: &[usize]) -> io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c)?;
    }
    Ok(sched_setaffinity(Pid::from_raw(0), &set)?)
}

pub use serverbench_model::cpus::{parse_cpu_list, BadCpuList};

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

    /// `Cpus_allowed_list` of this thread, as the kernel reports it in /proc.
    fn allowed_by_proc() -> Vec<usize> {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap();
        parse_cpu_list(line).unwrap()
    }

    #[test]
    fn affinity_mask_lists_at_least_one_cpu() {
        let mask = affinity_cpus();
        assert!(!mask.is_empty());
        assert_eq!(mask, allowed_by_proc());
    }

    #[test]
    fn a_pinned_thread_reports_only_its_cpu() {
        let last = *affinity_cpus().last().unwrap();
        let seen = std::thread::spawn(move || {
            pin_current_thread(last).unwrap();
            (affinity_cpus(), allowed_by_proc())
        })
        .join()
        .unwrap();
        assert_eq!(seen, (vec![last], vec![last]));
        assert!(pin_current_thread(CpuSet::count()).is_err());
    }
}
