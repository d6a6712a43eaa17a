//! The run's typed errors below [`super::RunError`]: starting a server (here or on the server
//! host), the hosts of `run --hosts`, and the quick contract check. Each message names the
//! server, host or file it is about.

use serverbench_hosts::HostError;
use std::path::PathBuf;
use std::time::Duration;

/// Something failed on the hosts of `run --hosts`.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    /// ssh or the remote command failed (the message names the host).
    #[error(transparent)]
    Host(#[from] HostError),
    /// `serverbench setup` on the server host took too long.
    #[error("{host}: `serverbench setup` did not finish within {after:?}")]
    SetupTimeout {
        /// The server host.
        host: String,
        /// How long it was given.
        after: Duration,
    },
    /// The run's certificate could not be read here.
    #[error("cannot read the run's {}: {source}", path.display())]
    ReadCert {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The run's certificate could not be copied to a host.
    #[error("cannot copy the run's TLS certificate: {0}")]
    CopyCert(HostError),
    /// A remote server's log could not be created here.
    #[error("cannot create the log {}: {source}", path.display())]
    Log {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The remote serve ended before its server was ready.
    #[error("{source}; its output:\n{output}")]
    StartFailed {
        /// How it ended.
        source: HostError,
        /// The last lines of its output.
        output: String,
    },
    /// The remote server was not ready in time.
    #[error("{host}: {server} not ready after {after:?}; its output:\n{output}")]
    NotReady {
        /// The server host.
        host: String,
        /// The server.
        server: String,
        /// How long it was given.
        after: Duration,
        /// The last lines of its output.
        output: String,
    },
    /// The remote sampler did not answer in time.
    #[error("{host}: the sampler did not answer within {after:?}")]
    SamplerTimeout {
        /// The host.
        host: String,
        /// How long it was given.
        after: Duration,
    },
    /// The remote sampler printed something else than expected.
    #[error("{host}: the sampler printed `{line}` instead of {want}")]
    SamplerSaid {
        /// The host.
        host: String,
        /// What it printed.
        line: String,
        /// What was expected.
        want: String,
    },
    /// A lap over TLS on a client host that has no copy of the certificate.
    #[error("{host}: the lap is over TLS and the run's certificate was not copied there")]
    NoCertificate {
        /// The client host.
        host: String,
    },
    /// A host's inventory address is not an IP address and does not resolve.
    #[error("{host}: address `{address}`: {why}")]
    Address {
        /// The host.
        host: String,
        /// Its inventory address.
        address: String,
        /// Why.
        why: String,
    },
    /// `serverbench db run` on the database host was not ready in time.
    #[error("{host}: the database was not ready within {after:?}")]
    DbNotReady {
        /// The database host.
        host: String,
        /// How long it was given.
        after: Duration,
    },
    /// `serverbench db run` printed something unexpected.
    #[error("{host}: `serverbench db run` printed an unreadable {what}")]
    DbSaid {
        /// The database host.
        host: String,
        /// What it was (its ready line, the URL in it).
        what: String,
    },
    /// The load cannot be expressed for a client host.
    #[error("{host}: {source}")]
    Load {
        /// The client host.
        host: String,
        /// Why.
        source: crate::tools::ToolError,
    },
}

/// A server could not be started (or found, `run --url`).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// `run --url` without a URL for this server.
    #[error("{server}: no URL given for it")]
    NoUrl {
        /// The server.
        server: String,
    },
    /// No port was free.
    #[error("no free port on {host}: {source}")]
    NoPort {
        /// The address.
        host: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The local process failed to start or to get ready.
    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),
    /// The server host failed to start it.
    #[error(transparent)]
    Hosts(#[from] HostsError),
}

/// The quick contract check before a server's first lap failed.
#[derive(Debug, thiserror::Error)]
pub enum QuickCheckError {
    /// The server's address does not resolve.
    #[error("{host}: {source}")]
    Address {
        /// The address.
        host: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Requests failed the contract.
    #[error("{}", .0.join("; "))]
    Failed(Vec<String>),
}

/// A server excluded from the run by its quick contract check.
#[derive(Debug, thiserror::Error)]
#[error("failed the quick contract check: {0}")]
pub struct QuickCheckFailed(pub QuickCheckError);

/// The database a server's laps need could not be had.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// It could not be installed, prepared or started.
    #[error("the database: {0}")]
    Db(#[from] serverbench_database::DbError),
    /// It could not be started on its host (`run --hosts`).
    #[error("the database: {0}")]
    OnHost(#[from] HostsError),
}
