//! A server during its share of a lap: one the harness started (a process group it owns and
//! stops), or one that was already running (`run --url`), which is measured by load alone and
//! sampled only when its PID is known.

use crate::process::ServerProcess;

/// A server that was running before serverbench and keeps running after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    /// The name it is reported under.
    pub name: String,
    /// Where the load goes.
    pub target: crate::tools::Target,
    /// Its process (its process tree is sampled), when given with `--pid`.
    pub pid: Option<u32>,
}

/// The server being measured.
pub(super) enum Running {
    /// Started by the harness.
    Started(ServerProcess),
    /// Already running.
    Attached { pid: Option<u32> },
}

impl Running {
    /// The process whose tree is sampled.
    pub(super) fn pid(&self) -> Option<u32> {
        match self {
            Running::Started(p) => Some(p.pid()),
            Running::Attached { pid } => *pid,
        }
    }

    /// How it ended, if it has: the exit status of a started server, or the PID of an attached
    /// one no longer existing.
    pub(super) fn exited(&mut self) -> Option<String> {
        match self {
            Running::Started(p) => p.try_exit().map(|s| s.to_string()),
            Running::Attached { pid: Some(pid) } => {
                let gone = !std::path::Path::new(&format!("/proc/{pid}")).exists();
                gone.then(|| format!("process {pid} is gone"))
            }
            Running::Attached { pid: None } => None,
        }
    }

    /// The last lines of its log.
    pub(super) fn log_tail(&self, lines: usize) -> String {
        match self {
            Running::Started(p) => p.log_tail(lines),
            Running::Attached { .. } => "(no log: the server was already running)".to_owned(),
        }
    }

    /// Stops a started server; leaves an attached one alone.
    pub(super) fn stop(&mut self) {
        if let Running::Started(p) = self {
            p.stop();
        }
    }
}
