//! `serverbench doctor`'s findings as `env.json` records them: plain data, so results read
//! them without the crate that probes the machine (serverbench-machine's `doctor`).

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
    UdpBuffers,
    UdpOffload,
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
            CheckKind::UdpBuffers => "UDP buffers",
            CheckKind::UdpOffload => "UDP GSO/GRO",
            CheckKind::IoUring => "io_uring",
        }
    }
}

mod setting;

pub use setting::Setting;

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
