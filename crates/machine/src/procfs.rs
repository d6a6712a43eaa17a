//! Parsers of the few `/proc` and `/sys` files serverbench reads, about the machine and its
//! processes: the one place that parses `/proc/stat`, `/proc/PID/stat`, a task's `status` and
//! the socket tables. Each takes the file's text, so tests feed them recorded files; the formats
//! are those of proc(5) and the kernel's Documentation/accounting/psi.rst. The small parsers
//! read only the fields serverbench uses; [`crate::process`] reads the live files.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One CPU's (or all CPUs') time from `/proc/stat`, in clock ticks (`USER_HZ`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    /// Time a hypervisor ran something else while this virtual CPU wanted to run.
    pub steal: u64,
}

impl CpuTimes {
    /// Time spent running anything (guest time is already inside user and nice).
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }

    /// Every tick, steal included: the wall time the CPU existed for.
    pub fn total(&self) -> u64 {
        self.busy() + self.idle + self.iowait + self.steal
    }

    /// `self - earlier`, field by field (0 where a counter went backwards, as after a CPU
    /// went offline and came back).
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// `/proc/stat`: all CPUs and each CPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    pub all: CpuTimes,
    pub cpus: BTreeMap<usize, CpuTimes>,
}

/// Parses `/proc/stat`; lines other than `cpu`/`cpuN` are ignored, missing fields read 0.
pub fn parse_stat(text: &str) -> Stat {
    let mut stat = Stat::default();
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        let Some(name) = fields.next() else { continue };
        let Some(rest) = name.strip_prefix("cpu") else {
            continue;
        };
        let v: Vec<u64> = fields.map(|f| f.parse().unwrap_or(0)).collect();
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        let times = CpuTimes {
            user: at(0),
            nice: at(1),
            system: at(2),
            idle: at(3),
            iowait: at(4),
            irq: at(5),
            softirq: at(6),
            steal: at(7),
        };
        if rest.is_empty() {
            stat.all = times;
        } else if let Ok(cpu) = rest.parse() {
            stat.cpus.insert(cpu, times);
        }
    }
    stat
}

/// `/proc/loadavg`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadAvg {
    pub one: f64,
    pub five: f64,
    pub fifteen: f64,
}

/// Parses `/proc/loadavg` (`0.52 0.58 0.59 2/345 12345`).
pub fn parse_loadavg(text: &str) -> Option<LoadAvg> {
    let mut f = text.split_ascii_whitespace().map(|x| x.parse::<f64>().ok());
    Some(LoadAvg {
        one: f.next()??,
        five: f.next()??,
        fifteen: f.next()??,
    })
}

/// One resource's pressure (PSI: `/proc/pressure/cpu`, `memory`, `io`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    /// Share of the last 10 s in which some task waited for the resource, in percent.
    pub some_avg10: f64,
    /// Total time some task waited, in microseconds (a counter: subtract two samples).
    pub some_total_us: u64,
    /// Total time all non-idle tasks waited at once, in microseconds (absent for CPU on old
    /// kernels: 0).
    pub full_total_us: u64,
}

/// Parses a PSI file: `some avg10=1.23 avg60=… avg300=… total=123` and a `full` line.
pub fn parse_pressure(text: &str) -> Option<Pressure> {
    let mut p = Pressure::default();
    let mut seen = false;
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        let kind = fields.next();
        for kv in fields {
            let Some((k, v)) = kv.split_once('=') else {
                continue;
            };
            match (kind, k) {
                (Some("some"), "avg10") => p.some_avg10 = v.parse().ok()?,
                (Some("some"), "total") => p.some_total_us = v.parse().ok()?,
                (Some("full"), "total") => p.full_total_us = v.parse().ok()?,
                _ => continue,
            }
            seen = true;
        }
    }
    seen.then_some(p)
}

/// Context switches of one task from `/proc/PID/status`: (voluntary, involuntary).
pub fn parse_ctxt_switches(status: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
    };
    Some((
        field("voluntary_ctxt_switches:")?,
        field("nonvoluntary_ctxt_switches:")?,
    ))
}

/// What `/proc/PID/stat` says of a process: the one parser of that file in the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidStat {
    pub pid: u32,
    /// The command name (`comm`, at most 15 bytes; it may hold spaces and parentheses).
    pub comm: String,
    /// `R`, `S`, `D`, `Z` (zombie), `X` (dead)...
    pub state: char,
    /// Parent pid.
    pub ppid: u32,
    /// Process group.
    pub pgrp: u32,
    /// User + system time, in clock ticks ([`ticks_per_second`]).
    pub cpu_ticks: u64,
    /// Threads.
    pub threads: u32,
    /// Resident set size, in pages (`crate::process::page_size`).
    pub rss_pages: u64,
}

impl PidStat {
    /// Neither a zombie nor dead.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X')
    }
}

/// Parses `/proc/PID/stat` (the name is in parentheses and may hold spaces and parentheses).
/// A pure function of the text, so a file read elsewhere (a remote host) parses the same way.
pub fn parse_pid_stat(text: &str) -> Option<PidStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text[open + 1..close].to_owned();
    // Fields after the name, numbered from 3 (state) as in proc(5).
    let rest: Vec<&str> = text[close + 1..].split_ascii_whitespace().collect();
    let field = |n: usize| rest.get(n - 3)?.parse::<u64>().ok();
    Some(PidStat {
        pid,
        comm,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        pgrp: rest.get(2)?.parse().ok()?,
        cpu_ticks: field(14)? + field(15)?,
        threads: field(20)? as u32,
        rss_pages: field(24)?,
    })
}

/// TCP state `LISTEN` in the socket tables.
const LISTEN: &str = "0A";

/// The listening inodes on `port` in one socket table's text (`/proc/net/tcp`, `tcp6`).
pub fn parse_listeners(text: &str, port: u16) -> Vec<u64> {
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

/// The inodes of the unconnected UDP sockets bound to `port` in one socket table's text
/// (`/proc/net/udp`, `udp6`): a QUIC server's listening socket (no remote address).
pub fn parse_udp_bound(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let local_port = cols.get(1)?.rsplit(':').next()?;
            let unconnected = cols.get(2)?.ends_with(":0000");
            let ours = u16::from_str_radix(local_port, 16).ok()? == port;
            (unconnected && ours).then(|| cols.get(9)?.parse().ok())?
        })
        .collect()
}

/// A kernel CPU list file such as `/sys/devices/system/cpu/isolated` (`0-3,8`), read with the
/// model's one CPU-list grammar; an empty file is an empty list.
pub fn parse_cpu_list_file(text: &str) -> Option<Vec<usize>> {
    if text.trim().is_empty() {
        return Some(Vec::new());
    }
    serverbench_model::cpus::parse_cpu_list(text.trim()).ok()
}

/// Clock ticks per second (`USER_HZ`) for `/proc/stat` and `/proc/PID/stat` times.
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions; it returns -1 for an unknown name.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_all_cpus_and_each_cpu_with_steal() {
        let s = parse_stat(
            "cpu  79822 0 7944 17210 289 0 48 59 0 0\ncpu0 38015 0 3719 10862 46 0 6 24 0 0\n\
             cpu1 41807 0 4225 6348 242 0 42 35 0 0\nintr 1 2 3\nctxt 99\n",
        );
        assert_eq!(s.cpus.len(), 2);
        assert_eq!(s.all.steal, 59);
        assert_eq!(s.cpus[&1].busy(), 41807 + 4225 + 42);
        assert_eq!(s.cpus[&0].total(), 38015 + 3719 + 10862 + 46 + 6 + 24);
    }

    #[test]
    fn a_counter_that_went_backwards_counts_as_zero() {
        let a = CpuTimes {
            idle: 10,
            ..Default::default()
        };
        assert_eq!(CpuTimes::default().since(&a).idle, 0);
    }

    #[test]
    fn pressure_reads_some_and_full() {
        let p = parse_pressure(
            "some avg10=67.41 avg60=75.62 avg300=37.97 total=156896645\n\
             full avg10=0.00 avg60=0.00 avg300=0.00 total=12\n",
        )
        .unwrap();
        assert_eq!(p.some_avg10, 67.41);
        assert_eq!(p.some_total_us, 156896645);
        assert_eq!(p.full_total_us, 12);
        assert_eq!(parse_pressure(""), None);
    }

    #[test]
    fn a_process_name_with_spaces_and_parentheses_is_read_whole() {
        let line = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 1 0 0 0 150 25 0 0 20 0 3 0 \
                    100 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let p = parse_pid_stat(line).unwrap();
        assert_eq!(
            p,
            PidStat {
                pid: 4242,
                comm: "my (odd) name".into(),
                state: 'S',
                ppid: 1,
                pgrp: 4242,
                cpu_ticks: 175,
                threads: 3,
                rss_pages: 10,
            }
        );
        assert!(p.is_live());
        assert!(parse_pid_stat("42 (srv)").is_none());
    }

    #[test]
    fn a_zombie_is_not_live() {
        let line = "7 (gone) Z 1 7 7 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 100 0 0";
        assert!(!parse_pid_stat(line).unwrap().is_live());
    }

    #[test]
    fn cpu_list_files_read_ranges_and_an_empty_file_as_no_cpu() {
        assert_eq!(parse_cpu_list_file("0-2,5\n"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_cpu_list_file("\n"), Some(vec![]));
        assert_eq!(parse_cpu_list_file("x"), None);
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
    fn the_udp_table_parser_keeps_unconnected_sockets_on_the_port_only() {
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  1: 0100007F:1F90 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 5151 2 0 0
  2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 5252 2 0 0
  3: 0100007F:1F91 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 5353 2 0 0";
        assert_eq!(parse_udp_bound(text, 8080), vec![5151]);
    }

    #[test]
    fn context_switches_come_from_the_status_file() {
        let s = "Name:\tnginx\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n";
        assert_eq!(parse_ctxt_switches(s), Some((120, 7)));
    }

    #[test]
    fn loadavg_reads_three_averages() {
        let l = parse_loadavg("4.04 2.50 1.13 3/410 9999\n").unwrap();
        assert_eq!((l.one, l.five, l.fifteen), (4.04, 2.50, 1.13));
    }
}
