//! serverbench-hosts owns running serverbench on several machines:
//!
//! - [`inventory`]: `hosts.toml` (spec/hosts.md), named hosts with their ssh destination, the
//!   address the others reach them at, their checkout and CPUs.
//! - [`ssh`]: the system's OpenSSH client as the only transport (BatchMode, one ControlMaster
//!   socket per host), remote commands that die with their session ([`wrap`]).
//! - [`check`]: whether each host is usable and how far its clock is from ours.
//! - [`files`]: files handed to a host (a run's certificate) in a folder that lives as long
//!   as a session.
//! - [`distributed`]: `serverbench load` on several client hosts, released together by a
//!   barrier over the ssh sessions.
//! - [`merge`]: client hosts' results merged exactly (histograms summed, never percentiles
//!   averaged).
//!
//! It must not print, open a port of its own or speak any protocol but ssh's: outcomes are
//! values and [`HostError`]s, each naming its host. It knows nothing of suites or laps; the
//! harness and the CLI decide what runs where.

pub mod check;
pub mod distributed;
pub mod files;
pub mod inventory;
pub mod merge;
pub mod ssh;
pub mod wrap;

pub use files::RemoteDir;
pub use inventory::{Host, Inventory, InventoryError, Local};
pub use ssh::{Session, SessionLine, Transport};

use std::time::Duration;

/// Something went wrong on one host; every message starts with the host's name.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// ssh itself failed: unreachable, key refused, connection dropped.
    #[error("{host}: ssh: {message}")]
    Ssh {
        /// The host.
        host: String,
        /// ssh's last error line, or what was going on.
        message: String,
    },
    /// The local ssh client could not be started.
    #[error("{host}: cannot run ssh: {source}")]
    Spawn {
        /// The host.
        host: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The checkout or the serverbench binary is missing there.
    #[error("{host}: {message}")]
    Missing {
        /// The host.
        host: String,
        /// What is missing, with its path.
        message: String,
    },
    /// Another serverbench version is installed there.
    #[error("{host}: found `{found}`, expected `{expected}`: build the same version there")]
    Version {
        /// The host.
        host: String,
        /// What it printed.
        found: String,
        /// What this build prints.
        expected: String,
    },
    /// The remote command ended when it should not have.
    #[error(
        "{host}: the remote command exited {during} ({status}){}",
        stderr_suffix(stderr)
    )]
    Exited {
        /// The host.
        host: String,
        /// What was going on, e.g. "before it was ready".
        during: String,
        /// Its exit status.
        status: String,
        /// Its last stderr line.
        stderr: String,
    },
    /// Something did not happen in time.
    #[error("{host}: {what} did not complete within {after:?}")]
    Timeout {
        /// The host.
        host: String,
        /// What was awaited.
        what: String,
        /// How long we waited.
        after: Duration,
    },
    /// The remote side printed something unexpected.
    #[error("{host}: {message}")]
    Protocol {
        /// The host.
        host: String,
        /// What was wrong.
        message: String,
    },
    /// Talking to the session failed.
    #[error("{host}: {source}")]
    Io {
        /// The host.
        host: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl HostError {
    /// The host the error is about.
    pub fn host(&self) -> &str {
        match self {
            HostError::Ssh { host, .. }
            | HostError::Spawn { host, .. }
            | HostError::Missing { host, .. }
            | HostError::Version { host, .. }
            | HostError::Exited { host, .. }
            | HostError::Timeout { host, .. }
            | HostError::Protocol { host, .. }
            | HostError::Io { host, .. } => host,
        }
    }
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    }
}

/// What `serverbench serve --ready-line` prints once its server is ready, after
/// [`SERVE_READY_PREFIX`], as one JSON line: how a controller learns, over ssh, where the
/// server listens and which process tree to sample.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServeReady {
    /// The server's pid (the leader of its process group) on that host.
    pub pid: u32,
    /// Its HTTP port.
    pub port: u16,
    /// Its TCP echo port, when it serves one.
    pub echo_port: Option<u16>,
    /// Its HTTPS port (`TLS_PORT`), when it serves TLS.
    #[serde(default)]
    pub tls_port: Option<u16>,
    /// Its HTTP/3 port (`H3_PORT`, UDP), when it serves HTTP/3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h3_port: Option<u16>,
}

/// The start of `serve --ready-line`'s announcement.
pub const SERVE_READY_PREFIX: &str = "serverbench-serve-ready ";

/// `serverbench load`'s exit when nothing succeeded, a server that answered nothing included.
/// Its result is printed all the same: one that answered nothing is a result about the server
/// (judged with the lap), not a fault of the host or of the tool.
pub const LOAD_NO_SUCCESS_EXIT: i32 = 6;

/// Whether a load that exited with `code` printed a result to keep: it succeeded, or its
/// server answered nothing (`requests` 0, see [`LOAD_NO_SUCCESS_EXIT`]).
pub fn load_result_stands(code: Option<i32>, requests: Option<u64>) -> bool {
    code == Some(0) || (code == Some(LOAD_NO_SUCCESS_EXIT) && requests == Some(0))
}

/// What `serverbench db run` prints once its cluster accepts connections, after
/// [`DB_READY_PREFIX`], as one JSON line: how a controller learns, over ssh, where a database
/// host's cluster listens, how to log in (the URL the server is given) and which process tree
/// to sample. Then each [`DB_SNAPSHOT`] line on its stdin is answered with one line,
/// [`DB_SNAPSHOT_PREFIX`] and the statements so far as JSON (or [`DB_SNAPSHOT_FAILED`] and
/// why); it stops the cluster when its stdin closes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DbReady {
    /// The postmaster's pid on that host.
    pub pid: u32,
    /// The URL servers connect with (password included: it travels inside the ssh channel).
    pub url: String,
}

/// The start of `db run`'s announcement.
pub const DB_READY_PREFIX: &str = "serverbench-db-ready ";
/// Asks `db run` for the statements so far.
pub const DB_SNAPSHOT: &str = "snapshot";
/// The start of `db run`'s answer to [`DB_SNAPSHOT`].
pub const DB_SNAPSHOT_PREFIX: &str = "snapshot ";
/// The start of `db run`'s answer when the statements cannot be read.
pub const DB_SNAPSHOT_FAILED: &str = "snapshot-failed ";

/// `serverbench hosts sample`'s protocol on its stdin and stdout: it prints [`SAMPLER_ARMED`],
/// starts sampling at a [`SAMPLER_START`] line and prints [`SAMPLER_SAMPLING`], and at a
/// `stop [REQUESTS]` line prints the figures as one JSON line and exits.
pub const SAMPLER_ARMED: &str = "armed";
/// See [`SAMPLER_ARMED`].
pub const SAMPLER_START: &str = "start";
/// See [`SAMPLER_ARMED`].
pub const SAMPLER_SAMPLING: &str = "sampling";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_that_nothing_answered_still_stands_and_one_that_failed_otherwise_does_not() {
        assert!(load_result_stands(Some(0), Some(100)));
        assert!(load_result_stands(Some(LOAD_NO_SUCCESS_EXIT), Some(0)));
        assert!(!load_result_stands(Some(LOAD_NO_SUCCESS_EXIT), Some(100)));
        assert!(!load_result_stands(Some(1), Some(0)));
        assert!(!load_result_stands(None, Some(0)));
    }

    #[test]
    fn a_ready_line_carries_the_h3_port_and_one_written_before_it_still_reads() {
        let ready = ServeReady {
            pid: 7,
            port: 8080,
            echo_port: None,
            tls_port: Some(8443),
            h3_port: Some(4433),
        };
        let line = serde_json::to_string(&ready).unwrap();
        assert!(line.contains(r#""h3_port":4433"#), "{line}");
        assert_eq!(serde_json::from_str::<ServeReady>(&line).unwrap(), ready);
        let before = r#"{"pid":7,"port":8080,"echo_port":null,"tls_port":8443}"#;
        let old: ServeReady = serde_json::from_str(before).unwrap();
        assert_eq!(old.h3_port, None);
    }
}
