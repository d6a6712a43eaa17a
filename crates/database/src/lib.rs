//! serverbench's own PostgreSQL for the database workloads (spec/contract.md, "Database
//! workloads"): Debian's `postgresql-15` installed when missing (no service started), a private
//! cluster under `$SERVERBENCH_CACHE/postgres/<schema version>` with its own port, socket folder,
//! PID file, role and password, the contract's schema and data, started and stopped by PID; and a
//! typed reader of `pg_stat_statements` for the query audit and statements per request.
//!
//! Nothing here prints.

mod cluster;
mod config;
mod fortunes;
mod init;
mod layout;
mod pgbench;
mod process;
mod query;
mod referee;
mod statlog;
mod stats;
mod url;

pub use cluster::{env_for, Cluster, ClusterStatus, Prepared, RunningDb};
pub use config::{Config, DEFAULT_PORT, LOG_PREFIX};
pub use fortunes::read_fortunes;
pub use layout::Layout;
pub use pgbench::{measure_floor, FloorMode, FloorResult, FloorSpec, PIPELINE_DEPTH, WORLD_BY_ID};
pub use process::PostmasterPid;
pub use query::{connect, read_worlds, reset_statements, World};
pub use statlog::{count_statements, LoggedStatement, StatementLog};
pub use stats::{classify, Snapshot, StatementDelta, StatementKind, StatementRow, StatementStats};
pub use url::{DbUrl, UrlError};

use std::path::PathBuf;

/// The version of the schema and data in `spec/database.sql`: bump it when that file changes, so
/// a cluster made from an older version is rebuilt, never reused.
pub const SCHEMA_VERSION: u32 = 1;

/// The schema and data, as the contract gives them.
pub const SCHEMA_SQL: &str = include_str!("../../../spec/database.sql");

/// The rows of `fortune` in the schema (every read of the whole table returns them).
pub const FORTUNE_ROWS: u64 = 12;

/// The database the servers use.
pub const DB_NAME: &str = "hello_world";

/// The cluster's role (its owner, and the role servers log in as).
pub const DB_USER: &str = "serverbench";

/// The referee's role: serverbench's own reads, snapshots and changes of the tables run as this
/// role, so `pg_stat_statements` tells them from a server's by `userid` (never by their text).
pub const REFEREE_USER: &str = "serverbench_referee";

/// The Debian packages: the server and `pg_stat_statements`.
pub const PACKAGES: [&str; 2] = ["postgresql-15", "postgresql-contrib"];

/// Where Debian puts PostgreSQL 15's programs.
pub const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

/// What went wrong with the database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// PostgreSQL is not installed and could not be installed.
    #[error(
        "PostgreSQL 15 is not installed and could not be installed (package {package}): {source}"
    )]
    NotInstallable {
        /// The package that was missing.
        package: String,
        /// Why the install failed.
        source: serverbench_provision::ProvisionError,
    },
    /// A program of PostgreSQL is missing after the install.
    #[error("{0} is missing (package postgresql-15)")]
    MissingProgram(PathBuf),
    /// The port is in use by something else.
    #[error("port {port} on {host} is taken by another process (choose another with --db-port)")]
    PortTaken {
        /// The address.
        host: String,
        /// The port.
        port: u16,
    },
    /// The cluster is already running.
    #[error("the database is already running (PID {pid}, port {port})")]
    AlreadyRunning {
        /// The postmaster's PID.
        pid: u32,
        /// Its port.
        port: u16,
    },
    /// The cluster is not prepared (no `db up` yet).
    #[error("no database cluster in {0} (run `serverbench db up`)")]
    NotPrepared(PathBuf),
    /// A file or folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A PostgreSQL program failed (initdb, the schema).
    #[error("{step} failed: {detail}")]
    Step {
        /// What was being done.
        step: String,
        /// Its output's tail or the cause.
        detail: String,
    },
    /// The postmaster exited or did not accept connections in time.
    #[error("the database did not start: {detail} (log: {log})")]
    StartFailed {
        /// What happened.
        detail: String,
        /// The server log.
        log: PathBuf,
    },
    /// The postmaster did not stop.
    #[error("the database (PID {pid}) did not stop: {detail}")]
    StopFailed {
        /// Its PID.
        pid: u32,
        /// What happened.
        detail: String,
    },
    /// A query failed.
    #[error("query on {url}: {source}")]
    Query {
        /// Where (password redacted).
        url: String,
        /// The client's error.
        source: postgres::Error,
    },
    /// A CPU list that cannot be used.
    #[error("--db-cpus: {0}")]
    Cpus(String),
}

impl DbError {
    fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> DbError {
        let path = path.into();
        move |source| DbError::Io { path, source }
    }
}

/// Stops the postmaster `pid` (one found in a [`ClusterStatus`]): a fast shutdown, escalating to
/// SIGQUIT then SIGKILL of its process group; returns once it is gone.
pub fn stop_pid(pid: u32) -> Result<()> {
    process::stop(pid, None)
}

/// True while `pid` is a live postgres process.
pub fn is_running(pid: u32) -> bool {
    process::is_postgres(pid)
}

/// A result with [`DbError`].
pub type Result<T> = std::result::Result<T, DbError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgresql_not_installable_names_the_package_in_one_line() {
        let e = DbError::NotInstallable {
            package: "postgresql-15 postgresql-contrib".into(),
            source: serverbench_provision::ProvisionError::NotRoot {
                packages: "postgresql-15 postgresql-contrib".into(),
            },
        };
        let text = e.to_string();
        assert!(!text.contains('\n'));
        assert!(
            text.contains("(package postgresql-15 postgresql-contrib)"),
            "{text}"
        );
        assert!(
            text.contains("sudo apt-get install postgresql-15 postgresql-contrib"),
            "{text}"
        );
    }

    #[test]
    fn the_schema_has_the_twelve_fortunes_the_audit_expects_per_read() {
        let values = SCHEMA_SQL.split("INSERT INTO fortune").nth(1).unwrap();
        let rows = values.split("\n\n").next().unwrap();
        assert_eq!(rows.matches("\n  (").count() as u64, FORTUNE_ROWS);
    }

    #[test]
    fn the_schema_is_the_contracts_file() {
        assert!(SCHEMA_SQL.contains("CREATE TABLE world"));
        assert!(SCHEMA_SQL.contains("CREATE TABLE fortune"));
    }
}
