//! The database of `serverbench verify` for a server that implements `db`, `queries`,
//! `fortunes` or `updates`: serverbench's private cluster (serverbench-database) started for the
//! verify and stopped after it, the server given `DATABASE_URL`, its parts and `DATABASE_POOL`,
//! and the contract's database checks ([`serverbench_contract::database`]) run against it.
//! verify must be the database's only client: a cluster already running (`serverbench db up`)
//! is not shared.

use crate::catalog::Server;
use crate::paths::Paths;
use serverbench_contract::database::{self, pg::PgReferee};
use serverbench_contract::{Check, Diff};
use serverbench_database::{Cluster, Config, DbError, RunningDb};
use serverbench_model::Feature;
use std::net::SocketAddr;

/// `DATABASE_POOL` during verify: room for the audit's concurrent requests.
pub const VERIFY_POOL: u32 = 8;

/// True when the server implements a database feature.
pub fn needs_database(server: &Server) -> bool {
    server.manifest.implements.iter().any(|f| f.is_database())
}

/// Prepares and starts the private cluster in the cache folder, on a free port of its own (the
/// data are the same on any port); a failure is the failed `database` check.
pub fn start(paths: &Paths) -> Result<RunningDb, Check> {
    let failed = |e: &dyn std::fmt::Display| {
        let d = Diff::new(
            "PostgreSQL",
            "serverbench's private cluster running",
            e.to_string(),
        );
        Check::new("database", vec![d])
    };
    let mut config = Config::new(&paths.cache).size_for_pool(VERIFY_POOL);
    // verify reads the log: several statements in one string, reads sharing a transaction.
    config.log_statements = true;
    config.port = crate::process::free_port("127.0.0.1").map_err(|e| failed(&e))?;
    let cluster = Cluster::prepare(&config).map_err(|e| failed(&e))?;
    cluster.start().map_err(|e| match e {
        DbError::AlreadyRunning { pid, port } => {
            let d = Diff::new(
                "PostgreSQL",
                "verify alone on its database",
                format!(
                    "already running (pid {pid}, port {port}): stop it (`serverbench db down`)"
                ),
            );
            Check::new("database", vec![d])
        }
        e => failed(&e),
    })
}

/// The database checks of `features` against the server at `addr`, with `db` as referee: on
/// the referee's own role, reading the statement log, holding the server to
/// [`VERIFY_POOL`] connections.
pub fn check(addr: Option<SocketAddr>, features: &[Feature], db: &RunningDb) -> Vec<Check> {
    let Some(addr) = addr else {
        return Vec::new();
    };
    match PgReferee::connect(&db.referee_url()) {
        Ok(referee) => {
            let mut referee = referee.with_log(db.log_file()).with_pool(VERIFY_POOL);
            database::check_all(addr, features, &mut referee)
        }
        Err(e) => vec![Check::new(
            "database",
            vec![Diff::new(
                "connection",
                format!("verify connected to {}", db.referee_url()),
                e.to_string(),
            )],
        )],
    }
}
