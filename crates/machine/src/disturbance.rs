//! What disturbed a lap: two samples of the machine (at the lap's start and end) and the
//! arithmetic that turns them into a [`Disturbance`] with its causes.
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
use std::collections::BTreeMap;
use std::fmt;

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

/// When a measure makes a lap "disturbed".
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Steal, in percent of the pinned CPUs' time.
    pub steal_pct: f64,
    /// Other processes, in percent of the pinned CPUs' capacity.
    pub other_processes_pct: f64,
    /// Memory pressure (PSI some), in percent of the lap's wall time.
    pub memory_pressure_pct: f64,
    /// CPU pressure (PSI some), in percent of the lap's wall time...
    #[serde(default = "default_cpu_pressure")]
    pub cpu_pressure_pct: f64,
    /// ...when other processes used at least this share of the pinned CPUs.
    #[serde(default = "default_cpu_pressure_others")]
    pub cpu_pressure_others_pct: f64,
}

fn default_cpu_pressure() -> f64 {
    Thresholds::default().cpu_pressure_pct
}

fn default_cpu_pressure_others() -> f64 {
    Thresholds::default().cpu_pressure_others_pct
}

impl Default for Thresholds {
    /// 2% steal, 5% of the pinned CPUs to others, 5% of the lap stalled on memory: each well
    /// above what a quiet 2-core VM shows here between laps (0–0.5% steal, 0–2% others); 25%
    /// of the lap waiting for a CPU with others on the pinned CPUs above that quiet 2%.
    fn default() -> Self {
        Thresholds {
            steal_pct: 2.0,
            other_processes_pct: 5.0,
            memory_pressure_pct: 5.0,
            cpu_pressure_pct: 25.0,
            cpu_pressure_others_pct: 2.0,
        }
    }
}

/// Why a lap counts as disturbed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Cause {
    /// The hypervisor took this share of the pinned CPUs' time.
    Steal { pct: f64 },
    /// Processes other than ours used this share of the pinned CPUs.
    OtherProcesses { pct: f64 },
    /// Tasks stalled on memory for this share of the lap.
    MemoryPressure { pct: f64 },
    /// Tasks waited for a CPU this share of the lap, with other processes on the pinned CPUs.
    CpuPressure { pct: f64 },
    /// The pinned CPUs were throttled this many times.
    Throttling { events: u64 },
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Steal { pct } => write!(f, "steal {pct:.1}%"),
            Cause::OtherProcesses { pct } => write!(f, "other processes {pct:.0}% of the CPUs"),
            Cause::MemoryPressure { pct } => write!(f, "memory pressure {pct:.1}%"),
            Cause::CpuPressure { pct } => write!(f, "CPU pressure {pct:.0}%"),
            Cause::Throttling { events } => write!(f, "{events} throttling events"),
        }
    }
}

/// What the machine did during one lap.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    /// Steal on the pinned CPUs, percent of their time.
    pub steal_pct: f64,
    /// Other processes on the pinned CPUs, percent of their capacity.
    pub other_processes_pct: f64,
    /// PSI cpu `some` over the lap, percent of wall time (a cause only with others present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_pct: Option<f64>,
    /// PSI memory `some` over the lap, percent of wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_pressure_pct: Option<f64>,
    /// Load average (1 min) at the end of the lap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadavg: Option<f64>,
    /// Thermal throttle events on the pinned CPUs.
    #[serde(default)]
    pub throttle_events: u64,
    /// Lowest frequency seen on a pinned CPU, MHz (where cpufreq exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freq_min_mhz: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_involuntary_cs: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_involuntary_cs: Option<u64>,
    /// Why the lap is disturbed; empty: it is not.
    #[serde(default)]
    pub causes: Vec<Cause>,
}

impl Disturbance {
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
            other_processes_pct: (100.0 * (task_s - lap.ours_cpu_s).max(0.0) / capacity_s)
                .min(100.0),
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

    /// The causes these measures give under thresholds `t`.
    pub fn causes_under(&self, t: &Thresholds) -> Vec<Cause> {
        let mut causes = Vec::new();
        if self.steal_pct > t.steal_pct {
            causes.push(Cause::Steal {
                pct: self.steal_pct,
            });
        }
        if self.other_processes_pct > t.other_processes_pct {
            causes.push(Cause::OtherProcesses {
                pct: self.other_processes_pct,
            });
        }
        if let Some(pct) = self
            .memory_pressure_pct
            .filter(|p| *p > t.memory_pressure_pct)
        {
            causes.push(Cause::MemoryPressure { pct });
        }
        let others_present = self.other_processes_pct >= t.cpu_pressure_others_pct;
        if let Some(pct) = self
            .cpu_pressure_pct
            .filter(|p| *p > t.cpu_pressure_pct && others_present)
        {
            causes.push(Cause::CpuPressure { pct });
        }
        if self.throttle_events > 0 {
            causes.push(Cause::Throttling {
                events: self.throttle_events,
            });
        }
        causes
    }

    /// True when something disturbed the lap.
    pub fn is_disturbed(&self) -> bool {
        !self.causes.is_empty()
    }

    /// The causes in one line (`steal 3.1%, other processes 40% of the CPUs`); empty when none.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self.causes.iter().map(|c| c.to_string()).collect();
        parts.join(", ")
    }
}

#[cfg(test)]
#[path = "disturbance_tests.rs"]
mod tests;
