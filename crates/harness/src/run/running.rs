//! A server during its share of a lap: one the harness started (a process group it owns and
//! stops), one started on the server host over ssh (`run --hosts`), or one that was already
//! running (`run --url`), which is measured by load alone and sampled only when its PID is known.

use super::hosts::RemoteServer;
use super::placement::Pid;
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
    /// Started on the server host over ssh (`run --hosts`); sampled there.
    Remote(RemoteServer),
}

impl Running {
    /// The process whose tree is sampled, and where it runs.
    pub(super) fn sampled_pid(&self) -> Option<Pid> {
        match self {
            Running::Started(p) => Some(Pid::Here(p.pid())),
            Running::Attached { pid } => pid.map(Pid::Here),
            Running::Remote(r) => Some(Pid::ServerHost(r.ready.pid)),
        }
    }

    /// How it ended, if it has: the exit status of a started server, or the PID of an attached
    /// one no longer existing.
    pub(super) fn exited(&mut self) -> Option<String> {
        match self {
            Running::Started(p) => p.try_exit().map(|s| s.to_string()),
            Running::Attached { pid: Some(pid) } => {
                let gone = !serverbench_machine::process::is_running(*pid);
                gone.then(|| format!("process {pid} is gone"))
            }
            Running::Attached { pid: None } => None,
            Running::Remote(r) => r.exited(),
        }
    }

    /// The last lines of its log.
    pub(super) fn log_tail(&self, lines: usize) -> String {
        match self {
            Running::Started(p) => p.log_tail(lines),
            Running::Attached { .. } => "(no log: the server was already running)".to_owned(),
            Running::Remote(r) => r.log_tail(lines),
        }
    }

    /// Stops a started server; leaves an attached one alone.
    pub(super) fn stop(&mut self) {
        match self {
            Running::Started(p) => {
                p.stop();
            }
            Running::Remote(r) => r.stop(),
            Running::Attached { .. } => {}
        }
    }
}
