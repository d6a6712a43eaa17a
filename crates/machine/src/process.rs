//! This machine's processes, read live from `/proc`: who exists, their `stat`, their context
//! switches, the sockets they hold and who listens on a port; and the facts `env.json` records
//! (CPU model, memory). Used by the harness's sampler (every 100 ms, on the server's whole
//! process tree), its process groups (who is still alive, who listens on a port) and by the
//! database's postmaster checks. The parsing is in [`crate::procfs`].
//!
//! Hand-written rather than the `procfs` crate, which measured no faster and, for task
//! `status`, slower: reading `stat` of all ~120 processes took 3.0 ms both ways, and the context
//! switches of 9 tasks 0.29 ms here against 0.52 ms with procfs 0.18 (which parses every field
//! of `status`); release build, best of three rounds of 300 and 2,000 calls, on the 2-CPU dev
//! machine.

use crate::procfs::{self, PidStat};
use std::collections::HashSet;

/// `/proc/<pid>/stat`, if the process exists.
pub fn stat(pid: u32) -> Option<PidStat> {
    procfs::parse_pid_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// True while `pid` exists and is neither a zombie nor dead.
pub fn is_running(pid: u32) -> bool {
    stat(pid).is_some_and(|st| st.is_live())
}

/// The command name of `pid` (`/proc/<pid>/comm`), empty when it is gone.
pub fn comm(pid: u32) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    text.trim().to_string()
}

/// The resident memory of every process in the group `pgid`, in bytes (0 when none is found).
pub fn group_rss_bytes(pgid: u32) -> u64 {
    let page = page_size();
    pids()
        .into_iter()
        .filter_map(stat)
        .filter(|st| st.pgrp == pgid)
        .map(|st| st.rss_pages * page)
        .sum()
}

/// Every pid in /proc now.
pub fn pids() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .collect()
}

/// Inodes of the sockets listening on `port` (any address, IPv4 and IPv6), from the kernel's
/// socket tables `/proc/net/tcp` and `/proc/net/tcp6`.
pub fn listening_inodes(port: u16) -> HashSet<u64> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| procfs::parse_listeners(&text, port))
        .collect()
}

/// Inodes of the unconnected UDP sockets bound to `port` (IPv4 and IPv6), from
/// `/proc/net/udp` and `/proc/net/udp6`: where a QUIC server receives.
pub fn udp_bound_inodes(port: u16) -> HashSet<u64> {
    ["/proc/net/udp", "/proc/net/udp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| procfs::parse_udp_bound(&text, port))
        .collect()
}

/// Socket inodes held open by `pid` (its `/proc/<pid>/fd` links `socket:[inode]`).
pub fn socket_inodes(pid: u32) -> HashSet<u64> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return HashSet::new();
    };
    dir.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|link| {
            let s = link.to_str()?;
            s.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect()
}

/// Voluntary and involuntary context switches summed over every thread of `pid`.
pub fn ctx_switches(pid: u32) -> (u64, u64) {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return (0, 0);
    };
    let mut sum = (0, 0);
    for task in tasks.flatten() {
        let Ok(text) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        let (voluntary, involuntary) = procfs::parse_ctxt_switches(&text).unwrap_or((0, 0));
        sum.0 += voluntary;
        sum.1 += involuntary;
    }
    sum
}

/// The first line of a file, trimmed; `None` when it is missing or empty.
fn first_line(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().next().unwrap_or("").trim();
    (!line.is_empty()).then(|| line.to_string())
}

/// Nanoseconds the calling thread has spent runnable but waiting for a CPU (the second figure
/// of `/proc/thread-self/schedstat`); `None` where the kernel does not keep it.
pub fn thread_run_wait_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// The running kernel's release (`/proc/sys/kernel/osrelease`).
pub fn kernel_release() -> Option<String> {
    first_line("/proc/sys/kernel/osrelease")
}

/// CPU 0's frequency governor (`scaling_governor`), when cpufreq is there.
pub fn cpu_governor() -> Option<String> {
    first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
}

/// The Debian release (`/etc/debian_version`), as `Debian 12.8`.
pub fn debian_release() -> Option<String> {
    first_line("/etc/debian_version").map(|v| format!("Debian {v}"))
}

/// `model name` of /proc/cpuinfo.
pub fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// `MemTotal` of /proc/meminfo, in kB.
pub fn memory_kb() -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    m.lines().next()?.split_whitespace().nth(1)?.parse().ok()
}

/// Bytes per page (what [`PidStat::rss_pages`] counts).
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions; it returns -1 for an unknown name.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as u64
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resident_memory_of_our_own_group_holds_our_own() {
        let me = stat(std::process::id()).unwrap();
        let own = me.rss_pages * page_size();
        assert!(own > 1 << 20, "{own}");
        assert!(group_rss_bytes(me.pgrp) >= own);
        assert_eq!(group_rss_bytes(u32::MAX), 0, "no such group");
    }

    #[test]
    fn this_process_reads_as_live_with_a_thread_and_memory() {
        let me = stat(std::process::id()).unwrap();
        assert!(
            me.is_live() && me.threads >= 1 && me.rss_pages > 0,
            "{me:?}"
        );
        assert!(pids().contains(&std::process::id()));
        assert!(is_running(std::process::id()));
        assert!(!comm(std::process::id()).is_empty());
        assert!(page_size() >= 4096 && procfs::ticks_per_second() >= 1.0);
    }

    #[test]
    fn the_kernel_release_is_read_and_a_missing_file_is_none() {
        assert!(kernel_release().is_some_and(|k| k.chars().next().unwrap().is_ascii_digit()));
        assert_eq!(first_line("/nonexistent/serverbench"), None);
    }

    #[test]
    fn a_process_that_does_not_exist_is_not_running() {
        assert!(!is_running(u32::MAX));
        assert_eq!(ctx_switches(u32::MAX), (0, 0));
    }
}
