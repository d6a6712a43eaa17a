//! The database workloads of spec/contract.md (`db`, `queries`, `fortunes`, `updates`), checked
//! like a referee: verify reads the tables itself ([`Referee`]) and compares every row a server
//! returns with them ([`rows`], [`fortunes`]); it changes the tables behind the server's back
//! between requests and requires the answers to show the change ([`changed`]); then it counts
//! the statements PostgreSQL ran for a known number of requests at each N the shipped suites use
//! ([`audit`]): one top-level `SELECT` per row read, returning its row, the updates written, no
//! multi-row reads of `world`, one fortune `SELECT` per page returning the table, no several
//! statements in one query string, the reads in transactions of their own, and no more
//! connections than `DATABASE_POOL`. The tables are put back as they were at the end.
//!
//! Verify must be the database's only client besides the server while it runs these checks.
//! Its own statements run as a role of their own (never the server's): that is how the audit
//! tells them apart, never by their text.

pub mod audit;
pub mod changed;
#[cfg(test)]
mod fake;
pub mod fortunes;
pub mod pg;
pub mod rows;

use super::diff::Diff;
use super::Check;
use serverbench_model::Feature;
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// Ids of `world`: 1–10,000.
pub const WORLD_IDS: std::ops::RangeInclusive<i32> = 1..=10_000;
/// The range of `randomNumber`.
pub const NUMBERS: std::ops::RangeInclusive<i32> = 1..=10_000;
/// The largest N of `queries` and `updates`.
pub const MAX_QUERIES: usize = 500;

/// The `world` table: id to `randomNumber`.
pub type World = BTreeMap<i32, i32>;

/// Statements PostgreSQL ran for the server (verify's own role left out), by kind, between two
/// snapshots of `pg_stat_statements`: what the audit compares with the requests sent. Reads
/// count top-level statements only (a round trip each); a `SELECT` run inside a function or
/// `DO` block is counted apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Statements {
    /// Top-level executions of a `SELECT` of one `world` row by id.
    pub world_single_reads: u64,
    /// Rows they returned.
    pub world_single_rows: u64,
    /// Executions of a `SELECT` of `world` that can return several rows (`IN (…)`, `ANY(…)`,
    /// a range, the whole table), at any level.
    pub world_multi_reads: u64,
    /// Executions of an `UPDATE` of `world`, at any level.
    pub world_updates: u64,
    /// Rows those `UPDATE`s changed.
    pub world_rows_updated: u64,
    /// Top-level executions of a `SELECT` of `fortune`.
    pub fortune_reads: u64,
    /// Rows they returned.
    pub fortune_rows: u64,
    /// Reads of `world` or `fortune` run inside a function or `DO` block (not round trips).
    pub nested_reads: u64,
    /// Any other top-level statement (a pool's `SELECT 1`, `BEGIN`).
    pub other: u64,
    /// What the statement log showed, when verify reads one (it runs the database).
    pub log: Option<LogFindings>,
}

/// What the database's statement log showed of the server's statements in a window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFindings {
    /// Query strings that held several statements.
    pub several_in_one: u64,
    /// The first of them, cut short.
    pub example: Option<String>,
    /// Single-row reads of `world` that ran in the same transaction as another one (queries
    /// pipelined under one Sync, or an explicit transaction around them).
    pub shared_transaction: u64,
}

/// Why the referee could not read, change or audit the database; each names the database (its
/// URL without the password) or the role involved.
#[derive(Debug, thiserror::Error)]
pub enum RefereeError {
    /// One of the referee's statements failed.
    #[error("{what} on {db}: {source}")]
    Statement {
        /// What the statement did (`UPDATE world`, `pg_stat_activity`).
        what: &'static str,
        /// The database.
        db: String,
        /// The cause.
        source: postgres::Error,
    },
    /// Reading the tables, the statement counters or the statement log failed.
    #[error(transparent)]
    Database(#[from] serverbench_database::DbError),
    /// [`Referee::since_mark`] without a [`Referee::mark`] before it.
    #[error("no mark taken before reading the statements since it")]
    NoMark,
    /// Statements of this database that the referee's role may not see.
    #[error("{statements} statements hidden from role {role} (grant it pg_read_all_stats)")]
    Hidden {
        /// How many ran in the window.
        statements: i64,
        /// The referee's role.
        role: String,
    },
    /// Other sessions log in as the referee's role, so their statements would be left out.
    #[error(
        "{sessions} other sessions log in as verify's role {role}: verify needs a role of its \
         own (its statements are told from the server's by role)"
    )]
    SharedRole {
        /// How many.
        sessions: i64,
        /// The referee's role.
        role: String,
    },
}

/// What verify needs of the database: the tables as they are, changes behind the server's back,
/// the statement counters and the server's connections. The real one is PostgreSQL through
/// serverbench-database; the unit tests use one in memory.
pub trait Referee {
    /// The whole `world` table, read now.
    fn world(&mut self) -> Result<World, RefereeError>;
    /// Every row of `fortune` (id, message), read now.
    fn fortunes(&mut self) -> Result<Vec<(i32, String)>, RefereeError>;
    /// Gives every row of `world` a new random number; the table now.
    fn change_world(&mut self) -> Result<World, RefereeError>;
    /// Adds a fortune and changes the message of another; the table now.
    fn change_fortunes(&mut self) -> Result<Vec<(i32, String)>, RefereeError>;
    /// Puts `world` and `fortune` back as the first read found them.
    fn restore(&mut self) -> Result<(), RefereeError>;
    /// Starts a window of the audit (a snapshot of `pg_stat_statements`, the log's end).
    fn mark(&mut self) -> Result<(), RefereeError>;
    /// The statements run since the last [`Referee::mark`].
    fn since_mark(&mut self) -> Result<Statements, RefereeError>;
    /// The server's connections to the database now (client backends of roles but verify's).
    fn server_connections(&mut self) -> Result<u32, RefereeError>;
    /// The `DATABASE_POOL` the server was given, when verify knows it.
    fn pool(&self) -> Option<u32>;
}

/// Every check of the declared database features against the server at `addr`: values first,
/// then answers after verify changed the tables, then the query audits; the tables are put back
/// at the end. Nothing when no database feature is declared.
pub fn check_all(addr: SocketAddr, features: &[Feature], referee: &mut dyn Referee) -> Vec<Check> {
    let declared: Vec<Feature> = features
        .iter()
        .copied()
        .filter(|f| f.is_database())
        .collect();
    if declared.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let world = match referee.world() {
        Ok(w) => w,
        Err(e) => return vec![referee_failed("world", &e)],
    };
    let table = match referee.fortunes() {
        Ok(t) => t,
        Err(e) => return vec![referee_failed("fortune", &e)],
    };
    if declared.contains(&Feature::Db) {
        out.push(rows::check_db(addr, &world));
    }
    if declared.contains(&Feature::Queries) {
        out.extend(rows::check_queries(addr, &world));
    }
    if declared.contains(&Feature::Fortunes) {
        out.push(fortunes::check(addr, &table));
    }
    if declared.contains(&Feature::Updates) {
        out.extend(rows::check_updates(addr, referee));
    }
    out.extend(changed::check(addr, &declared, referee));
    // Back before the audit (a fortune read must return the table's rows) and after it (its
    // updates wrote new numbers): verify leaves the tables as it found them.
    let mut restored = referee.restore();
    if restored.is_ok() {
        for f in declared {
            for plan in audit::plans(f, table.len() as u64) {
                out.push(audit::check(addr, &plan, referee));
            }
        }
        restored = referee.restore();
    }
    if let Err(e) = restored {
        let d = Diff::new(
            "database",
            "world and fortune as verify found them",
            e.to_string(),
        );
        out.push(Check::new("put the world and fortune tables back", vec![d]));
    }
    out
}

/// The check of a table verify could not read or write.
fn referee_failed(table: &str, e: &RefereeError) -> Check {
    Check::new(
        format!("read the {table} table"),
        vec![Diff::new(
            "database",
            format!("the {table} table"),
            e.to_string(),
        )],
    )
}

/// The N a `queries` value means: missing, empty or not a number: 1; below 1: 1; above 500,
/// however many digits: 500.
pub fn clamp_queries(value: Option<&str>) -> usize {
    let Some(v) = value.map(str::trim) else {
        return 1;
    };
    let digits = v.strip_prefix('+').unwrap_or(v);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return match digits.parse::<u64>() {
            Ok(n) => n.clamp(1, MAX_QUERIES as u64) as usize,
            Err(_) => MAX_QUERIES,
        };
    }
    match v.parse::<i64>() {
        Ok(n) => n.clamp(1, MAX_QUERIES as i64) as usize,
        Err(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_values_clamp_as_the_contract_says() {
        for (v, n) in [
            (None, 1),
            (Some(""), 1),
            (Some("foo"), 1),
            (Some("0"), 1),
            (Some("-3"), 1),
            (Some("20"), 20),
            (Some("500"), 500),
            (Some("501"), 500),
            (Some("99999999999"), 500),
            (Some("99999999999999999999999"), 500),
            (Some("-99999999999999999999999"), 1),
        ] {
            assert_eq!(clamp_queries(v), n, "{v:?}");
        }
    }

    const ALL: [Feature; 4] = [
        Feature::Db,
        Feature::Queries,
        Feature::Fortunes,
        Feature::Updates,
    ];

    #[test]
    fn a_correct_server_on_a_memory_database_passes_every_database_check() {
        let (addr, mut referee) = fake::serve(false);
        let before = (referee.world().unwrap(), referee.fortunes().unwrap());
        let checks = check_all(addr, &ALL, &mut referee);
        assert_eq!(checks.len(), 27);
        let after = (referee.world().unwrap(), referee.fortunes().unwrap());
        assert!(before == after, "verify leaves the tables as it found them");
        let failed: Vec<&Check> = checks.iter().filter(|c| !c.passed()).collect();
        assert!(failed.is_empty(), "{failed:#?}");
    }

    #[test]
    fn a_caching_server_on_a_memory_database_fails_the_audits_of_its_reads() {
        let (addr, mut referee) = fake::serve(true);
        let checks = check_all(addr, &[Feature::Db, Feature::Fortunes], &mut referee);
        let failed: Vec<&str> = checks
            .iter()
            .filter(|c| !c.passed())
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(
            failed,
            [
                "query audit: 50 × GET /db",
                "query audit: 20 × GET /fortunes"
            ]
        );
    }

    #[test]
    fn no_database_feature_means_no_database_check() {
        let (addr, mut referee) = fake::serve(false);
        assert!(check_all(addr, &[Feature::Hello], &mut referee).is_empty());
    }
}
