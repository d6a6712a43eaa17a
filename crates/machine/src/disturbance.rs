//! What disturbed a lap: two samples of the machine (at the lap's start and end) and the
//! arithmetic that turns them into a `Disturbance` (the model's plain record) with its causes.
//!
//! The samples are cheap (a handful of small files, no process scan), so the harness takes them
//! around every lap. The measures, and why each is trusted:
//! - **steal**: `/proc/stat`'s steal column on the pinned CPUs, the time a hypervisor ran
//!   someone else while our virtual CPU wanted to run (proc(5));
//! - **other processes**: the pinned CPUs' user + nice + system time minus the CPU time of our
//!   own process trees (server, database, client). irq and softirq time are left out on both
//!   sides: on loopback most of it is the benchmark's own packets, and kernels without
//!   `CONFIG_IRQ_TIME_ACCOUNTING` charge it to whichever task was interrupted;
//! - **memory pressure**: PSI's `some` total over the lap (the share of wall time in which a
//!   task waited for memory; Documentation/accounting/psi.rst);
//! - **CPU pressure**: PSI's cpu `some` total over the lap (the share of wall time in which a
//!   task waited for a CPU). The benchmark makes some of it itself (a server with more threads
//!   than its CPUs, a database's backends beside it: a quiet saturated lap can read 80%), so it
//!   is a cause only when someone else was on the pinned CPUs too (at least
//!   [`Thresholds::cpu_pressure_others_pct`], a share too small to be a cause of its own): a
//!   task that keeps the server waiting for its CPU though its own CPU time is small;
//! - **throttling**: thermal throttle events on the pinned CPUs, and the frequency where the
//!   kernel exposes cpufreq (VMs usually do not);
//! - involuntary context switches of the server and the client, and the load average, are
//!   recorded for the reader.

use crate::procfs::{self, CpuTimes, LoadAvg, Pressure, Stat};
use crate::Source;
use serde::{Deserialize, Serialize};
use serverbench_model::disturbance::{Disturbance, Thresholds};
use std::collections::BTreeMap;

/// One sample of the machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineSample {
    pub stat: Stat,
    pub loadavg: Option<LoadAvg>,
    pub psi_cpu: Option<Pressure>,
    pub psi_memory: Option<Pressure>,
    /// Thermal throttle events per CPU (where the kernel counts them).
    pub throttle: BTreeMap<usize, u64>,
    /// Current frequency per CPU in kHz (where cpufreq exists).
    pub freq_khz: BTreeMap<usize, u64>,
}

/// Reads one sample from `src` (the live machine: [`crate::Live`]).
pub fn sample(src: &dyn Source) -> MachineSample {
    let stat = src
        .read("/proc/stat")
        .map(|t| procfs::parse_stat(&t))
        .unwrap_or_default();
    let per_cpu = |file: &str| -> BTreeMap<usize, u64> {
        stat.cpus
            .keys()
            .filter_map(|&c| {
                let text = src.read(&format!("/sys/devices/system/cpu/cpu{c}/{file}"))?;
                Some((c, text.trim().parse().ok()?))
            })
            .collect()
    };
    MachineSample {
        loadavg: src
            .read("/proc/loadavg")
            .and_then(|t| procfs::parse_loadavg(&t)),
        psi_cpu: src
            .read("/proc/pressure/cpu")
            .and_then(|t| procfs::parse_pressure(&t)),
        psi_memory: src
            .read("/proc/pressure/memory")
            .and_then(|t| procfs::parse_pressure(&t)),
        throttle: per_cpu("thermal_throttle/core_throttle_count"),
        freq_khz: per_cpu("cpufreq/scaling_cur_freq"),
        stat,
    }
}

/// What the harness knows of the lap itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LapWindow {
    /// Wall time between the two samples, in seconds.
    pub wall_s: f64,
    /// The CPUs the benchmark's processes were pinned to (server, database and client); empty:
    /// every CPU.
    pub pinned: Vec<usize>,
    /// CPU seconds our own process trees (server, database, client) used in the lap.
    pub ours_cpu_s: f64,
    /// Involuntary context switches of the server's tree and of the client, when known.
    pub server_involuntary: Option<u64>,
    pub client_involuntary: Option<u64>,
    /// Clock ticks per second of `/proc/stat` ([`procfs::ticks_per_second`]).
    pub ticks_per_s: f64,
}

/// The measures between two samples and the causes `t` makes of them.
pub fn between(
    start: &MachineSample,
    end: &MachineSample,
    lap: &LapWindow,
    t: &Thresholds,
) -> Disturbance {
    let cpus: Vec<usize> = if lap.pinned.is_empty() {
        end.stat.cpus.keys().copied().collect()
    } else {
        lap.pinned.clone()
    };
    let delta = cpus.iter().fold(CpuTimes::default(), |acc, c| {
        let (Some(a), Some(b)) = (start.stat.cpus.get(c), end.stat.cpus.get(c)) else {
            return acc;
        };
        let d = b.since(a);
        CpuTimes {
            user: acc.user + d.user,
            nice: acc.nice + d.nice,
            system: acc.system + d.system,
            idle: acc.idle + d.idle,
            iowait: acc.iowait + d.iowait,
            irq: acc.irq + d.irq,
            softirq: acc.softirq + d.softirq,
            steal: acc.steal + d.steal,
        }
    });
    let hz = if lap.ticks_per_s > 0.0 {
        lap.ticks_per_s
    } else {
        100.0
    };
    let total = delta.total().max(1) as f64;
    let capacity_s = (lap.wall_s * cpus.len() as f64).max(f64::MIN_POSITIVE);
    let task_s = (delta.user + delta.nice + delta.system) as f64 / hz;
    let pressure = |a: Option<Pressure>, b: Option<Pressure>| {
        let (a, b) = (a?, b?);
        let us = b.some_total_us.saturating_sub(a.some_total_us) as f64;
        Some(100.0 * us / 1e6 / lap.wall_s.max(f64::MIN_POSITIVE))
    };
    let throttle_events = cpus
        .iter()
        .map(|c| {
            let (a, b) = (start.throttle.get(c), end.throttle.get(c));
            b.unwrap_or(&0).saturating_sub(*a.unwrap_or(&0))
        })
        .sum();
    let freq_min_mhz = cpus
        .iter()
        .flat_map(|c| [start.freq_khz.get(c), end.freq_khz.get(c)])
        .flatten()
        .min()
        .map(|khz| *khz as f64 / 1000.0);
    let mut d = Disturbance {
        steal_pct: 100.0 * delta.steal as f64 / total,
        other_processes_pct: (100.0 * (task_s - lap.ours_cpu_s).max(0.0) / capacity_s).min(100.0),
        cpu_pressure_pct: pressure(start.psi_cpu, end.psi_cpu),
        memory_pressure_pct: pressure(start.psi_memory, end.psi_memory),
        loadavg: end.loadavg.map(|l| l.one),
        throttle_events,
        freq_min_mhz,
        server_involuntary_cs: lap.server_involuntary,
        client_involuntary_cs: lap.client_involuntary,
        causes: Vec::new(),
    };
    d.causes = d.causes_under(t);
    d
}

#[cfg(test)]
#[path = "disturbance_tests.rs"]
mod tests;
