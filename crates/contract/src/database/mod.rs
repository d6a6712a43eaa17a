//! The database workloads of spec/contract.md (`db`, `queries`, `fortunes`, `updates`), checked
//! like a referee: verify reads the tables itself ([`Referee`]) and compares every row a server
//! returns with them ([`rows`], [`fortunes`]), then counts the statements PostgreSQL ran for a
//! known number of requests ([`audit`]): one `SELECT` per row read, the updates written, no
//! multi-row reads of `world`, one fortune `SELECT` per page.
//!
//! Verify must be the database's only client while it runs these checks: the values are compared
//! with the table as read before the requests, and the audit counts every statement of the
//! database.

pub mod audit;
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

/// Statements PostgreSQL ran, by kind, between two snapshots of `pg_stat_statements` (or since
/// its reset): what the audit compares with the requests sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Statements {
    /// Executions of a `SELECT` of one `world` row by id.
    pub world_single_reads: u64,
    /// Executions of a `SELECT` of `world` that can return several rows (`IN (…)`, `ANY(…)`,
    /// a range, the whole table).
    pub world_multi_reads: u64,
    /// Executions of an `UPDATE` of `world`.
    pub world_updates: u64,
    /// Rows those `UPDATE`s changed.
    pub world_rows_updated: u64,
    /// Executions of a `SELECT` of `fortune`.
    pub fortune_reads: u64,
    /// Any other statement (a pool's `SELECT 1`, `BEGIN`, verify's own snapshot).
    pub other: u64,
}

/// What verify needs of the database: the tables as they are, and the statement counters. The
/// real one is PostgreSQL through serverbench-database; the tests also use in-memory ones.
pub trait Referee {
    /// The whole `world` table, read now.
    fn world(&mut self) -> Result<World, String>;
    /// Every row of `fortune` (id, message), read now.
    fn fortunes(&mut self) -> Result<Vec<(i32, String)>, String>;
    /// Starts a window of the audit (a snapshot of `pg_stat_statements`, or its reset).
    fn mark(&mut self) -> Result<(), String>;
    /// The statements run since the last [`Referee::mark`].
    fn since_mark(&mut self) -> Result<Statements, String>;
}

/// Every check of the declared database features against the server at `addr`, values first,
/// then the query audit. Nothing when no database feature is declared.
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
    if declared.contains(&Feature::Db) {
        out.push(rows::check_db(addr, &world));
    }
    if declared.contains(&Feature::Queries) {
        out.extend(rows::check_queries(addr, &world));
    }
    if declared.contains(&Feature::Fortunes) {
        out.push(match referee.fortunes() {
            Ok(table) => fortunes::check(addr, &table),
            Err(e) => referee_failed("fortune", &e),
        });
    }
    if declared.contains(&Feature::Updates) {
        out.extend(rows::check_updates(addr, referee));
    }
    for f in declared {
        out.push(audit::check(addr, f, referee));
    }
    out
}

/// The check of a table verify could not read.
fn referee_failed(table: &str, e: &str) -> Check {
    Check::new(
        format!("read the {table} table"),
        vec![Diff::new("database", format!("the {table} table"), e)],
    )
}

/// The N a `queries` value means: missing, empty or not a number: 1; clamped to 1–500.
pub fn clamp_queries(value: Option<&str>) -> usize {
    match value.map(str::trim).and_then(|v| v.parse::<i64>().ok()) {
        Some(n) => n.clamp(1, MAX_QUERIES as i64) as usize,
        None => 1,
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
        let checks = check_all(addr, &ALL, &mut referee);
        assert_eq!(checks.len(), 17);
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
        assert_eq!(failed, ["query audit: 50 × GET /db"]);
    }

    #[test]
    fn no_database_feature_means_no_database_check() {
        let (addr, mut referee) = fake::serve(false);
        assert!(check_all(addr, &[Feature::Hello], &mut referee).is_empty());
    }
}
