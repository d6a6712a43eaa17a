//! Reading `/proc`: the one place that parses `/proc/<pid>/stat`, a task's `status`, the
//! socket tables and a process's socket descriptors, and the machine facts `env.json` records
//! (CPU model, memory). Used by the sampler (every 100 ms, on the server's whole process tree),
//! by process groups (who is still alive, who listens on a port) and by run/env.
//!
//! Hand-written rather than the `procfs` crate, which measured no faster and, for task
//! `status`, slower: reading `stat` of all ~120 processes took 3.0 ms both ways, and the context
//! switches of 9 tasks 0.29 ms here against 0.52 ms with procfs 0.18 (which parses every field
//! of `status`); release build, best of three rounds of 300 and 2,000 calls, on the 2-CPU dev
//! machine. The parsers stay small: only the fields serverbench reads.

use nix::unistd::{sysconf, SysconfVar};
use std::collections::HashSet;

/// TCP state `LISTEN` in the socket tables.
const LISTEN: &str = "0A";

/// One process as read from `/proc/<pid>/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// `R`, `S`, `D`, `Z` (zombie), `X` (dead)...
    pub state: char,
    /// Parent pid.
    pub ppid: i32,
    /// Process group.
    pub pgrp: i32,
    /// User + system CPU time, in clock ticks ([`ticks_per_second`]).
    pub cpu_ticks: u64,
    /// Threads.
    pub threads: u32,
    /// Resident set size, in pages ([`page_size`]).
    pub rss_pages: u64,
}

impl Stat {
    /// Neither a zombie nor dead.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X')
    }
}

/// Parses `/proc/<pid>/stat` (the command name may contain spaces and parentheses).
pub fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(0) ppid(1) pgrp(2) ... utime(11) stime(12) ... num_threads(17)
    // ... rss(21)
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    Some(Stat {
        state: f.first()?.chars().next()?,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        cpu_ticks: n(11)? + n(12)?,
        threads: n(17)? as u32,
        rss_pages: n(21)?,
    })
}

/// `/proc/<pid>/stat`, if the process exists.
pub fn stat(pid: i32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// True while `pid` exists and is neither a zombie nor dead.
pub fn is_running(pid: u32) -> bool {
    stat(pid as i32).is_some_and(|st| st.is_live())
}

/// The command name of `pid` (`/proc/<pid>/comm`), empty when it is gone.
pub fn comm(pid: u32) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    text.trim().to_string()
}

/// Every pid in /proc now.
pub fn pids() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// Inodes of the sockets listening on `port` (any address, IPv4 and IPv6), from the kernel's
/// socket tables `/proc/net/tcp` and `/proc/net/tcp6`.
pub fn listening_inodes(port: u16) -> HashSet<u64> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| parse_listeners(&text, port))
        .collect()
}

/// The listening inodes on `port` in one socket table's text.
fn parse_listeners(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let local_port = cols.get(1)?.rsplit(':').next()?;
            let listening = *cols.get(3)? == LISTEN;
            let ours = u16::from_str_radix(local_port, 16).ok()? == port;
            (listening && ours).then(|| cols.get(9)?.parse().ok())?
        })
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
pub fn ctx_switches(pid: i32) -> (u64, u64) {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return (0, 0);
    };
    let mut sum = (0, 0);
    for task in tasks.flatten() {
        let Ok(text) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        let (voluntary, involuntary) = parse_ctx_switches(&text);
        sum.0 += voluntary;
        sum.1 += involuntary;
    }
    sum
}

/// `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` of a task's `status`.
fn parse_ctx_switches(status: &str) -> (u64, u64) {
    let mut found = (0, 0);
    for line in status.lines() {
        let value = |l: &str| {
            l.split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        if line.starts_with("voluntary_ctxt_switches") {
            found.0 = value(line);
        } else if line.starts_with("nonvoluntary_ctxt_switches") {
            found.1 = value(line);
        }
    }
    found
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

/// Bytes per page (what `rss_pages` counts).
pub fn page_size() -> u64 {
    sysconf_or_1(SysconfVar::PAGE_SIZE)
}

/// Clock ticks per second (what `cpu_ticks` counts).
pub fn ticks_per_second() -> u64 {
    sysconf_or_1(SysconfVar::CLK_TCK)
}

fn sysconf_or_1(var: SysconfVar) -> u64 {
    sysconf(var).ok().flatten().map_or(1, |v| v.max(1) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_spaces_in_the_name_parse() {
        let line = "42 (my (weird) srv) S 7 42 42 0 -1 4194304 100 0 0 0 150 50 0 0 20 0 3 0 \
                    1000 123456 789 18446744073709551615";
        let st = parse_stat(line).unwrap();
        assert_eq!(
            st,
            Stat {
                state: 'S',
                ppid: 7,
                pgrp: 42,
                cpu_ticks: 200,
                threads: 3,
                rss_pages: 789
            }
        );
        assert!(st.is_live());
        assert!(parse_stat("42 (srv)").is_none());
    }

    #[test]
    fn this_process_reads_as_live_with_a_thread_and_memory() {
        let me = stat(std::process::id() as i32).unwrap();
        assert!(
            me.is_live() && me.threads >= 1 && me.rss_pages > 0,
            "{me:?}"
        );
        assert!(pids().contains(&(std::process::id() as i32)));
        assert!(is_running(std::process::id()));
        assert!(!comm(std::process::id()).is_empty());
        assert!(page_size() >= 4096 && ticks_per_second() >= 1);
    }

    #[test]
    fn the_socket_table_parser_keeps_listeners_on_the_port_only() {
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1
   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 4343 1
   2: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1";
        assert_eq!(parse_listeners(text, 8080), vec![4242]);
    }

    #[test]
    fn task_status_gives_both_context_switch_counts() {
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(parse_ctx_switches(status), (12, 3));
    }
}
