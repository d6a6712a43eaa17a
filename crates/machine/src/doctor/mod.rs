//! `serverbench doctor`: is this machine set up for benchmarking servers? Each check says ok,
//! warn or "cannot tell", what it found, and the command that would fix it — the idea of
//! `pyperf system show`, for a benchmark in which a server, its database and a load generator
//! share the machine. Nothing is changed unless asked ([`apply`]); what was changed is saved so
//! that [`revert`] restores it.

mod apply;
mod checks;
mod record;
mod udp;

pub use apply::{apply, revert, ApplyFailure};
pub use record::{state_folder, Applied, ApplyError, RECORD_NAME};

use crate::disturbance::MachineSample;
use crate::Source;
use serverbench_model::doctor::{Check, CheckKind, Status, Write};

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
    out.push(udp::udp_buffers(src));
    out.push(udp::udp_offload());
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
