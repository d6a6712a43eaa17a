//! What disturbed a lap, as the results record it: the measures, the thresholds that make a
//! lap "disturbed" and the causes. Plain data: serverbench-machine samples `/proc` and computes
//! a [`Disturbance`] (`serverbench_machine::disturbance::between`); results and analysis read it.

use serde::{Deserialize, Serialize};
use std::fmt;

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
