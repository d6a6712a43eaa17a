//! `serverbench doctor`: is this machine set up for benchmarking servers? Each check says ok,
//! warn or "cannot tell", what it found, and the command that would fix it — the idea of
//! `pyperf system show`, for a benchmark in which a server, its database and a load generator
//! share the machine. Nothing is changed unless asked ([`apply`]); what was changed is saved so
//! that [`revert`] restores it.

mod apply;
mod checks;
mod record;
mod setting;

pub use apply::{apply, revert, Applied, ApplyError, ApplyFailure};
pub use record::{state_folder, RECORD_NAME};
pub use setting::Setting;

use crate::disturbance::MachineSample;
use crate::Source;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Warn,
    /// The machine does not expose what the check reads (a VM without cpufreq, say).
    Unknown,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Unknown => "cannot tell",
        })
    }
}

/// Which check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    Virtualization,
    Governor,
    Turbo,
    Smt,
    IsolatedCpus,
    OtherProcesses,
    Steal,
    LoadAverage,
    OpenFiles,
    EphemeralPorts,
    TcpTwReuse,
    Somaxconn,
    IoUring,
}

impl CheckKind {
    /// The short name shown in the table.
    pub fn label(self) -> &'static str {
        match self {
            CheckKind::Virtualization => "virtualization",
            CheckKind::Governor => "CPU governor",
            CheckKind::Turbo => "turbo/boost",
            CheckKind::Smt => "SMT siblings",
            CheckKind::IsolatedCpus => "isolated CPUs",
            CheckKind::OtherProcesses => "other processes",
            CheckKind::Steal => "steal",
            CheckKind::LoadAverage => "load average",
            CheckKind::OpenFiles => "open files limit",
            CheckKind::EphemeralPorts => "ephemeral ports",
            CheckKind::TcpTwReuse => "tcp_tw_reuse",
            CheckKind::Somaxconn => "somaxconn",
            CheckKind::IoUring => "io_uring",
        }
    }
}

/// A value `doctor --apply` may write (a sysctl or sysfs file of [`Setting`]) to fix a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Write {
    #[serde(rename = "path")]
    pub setting: Setting,
    pub value: String,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub kind: CheckKind,
    pub status: Status,
    /// What was found, in a few words.
    pub found: String,
    /// The command that would fix it (for warnings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// What `--apply` would write to fix it, when a file write can.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<Write>,
}

/// What the checks look at.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The CPUs a run would pin the server (and its database) to.
    pub server_cpus: Vec<usize>,
    /// The CPUs a run would pin the client to.
    pub client_cpus: Vec<usize>,
}

/// The machine over a short probe: two samples some time apart, and the busiest processes
/// that are not the doctor itself, with their CPU seconds over the probe.
#[derive(Debug, Clone, Default)]
pub struct Probe {
    pub before: MachineSample,
    pub after: MachineSample,
    pub seconds: f64,
    /// (pid, name, CPU seconds during the probe), busiest first.
    pub busiest: Vec<(u32, String, f64)>,
}

/// Runs every check against `src` and the probe.
pub fn diagnose(src: &dyn Source, probe: &Probe, opts: &Options) -> Vec<Check> {
    let mut out = vec![
        checks::virtualization(src),
        checks::governor(src),
        checks::turbo(src),
        checks::smt(src, opts),
        checks::isolated(src, opts),
        checks::other_processes(probe, opts),
        checks::steal(probe),
        checks::load_average(src),
        checks::open_files(),
    ];
    out.extend(checks::network(src));
    out.push(checks::io_uring(src));
    out
}

/// Takes the probe on the live machine: samples, waits `seconds`, samples again.
pub fn probe_live(seconds: f64) -> Probe {
    checks::probe_live(seconds)
}

/// `warn` checks in one line for a run's header: `3 warnings: CPU governor, steal, somaxconn`.
pub fn one_line(checks: &[Check]) -> Option<String> {
    let warned: Vec<&str> = checks
        .iter()
        .filter(|c| c.status == Status::Warn)
        .map(|c| c.kind.label())
        .collect();
    match warned.len() {
        0 => None,
        1 => Some(format!("1 warning: {}", warned[0])),
        n => Some(format!("{n} warnings: {}", warned.join(", "))),
    }
}
