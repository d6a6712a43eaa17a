//! The query audit: a known number of requests between two marks of `pg_stat_statements`, at
//! each N the shipped suites use ([`NS`]), then the statements PostgreSQL ran for the server
//! compared with what the contract implies: one top-level single-row `SELECT` on `world` per row
//! read, each returning its row; at least one row written per row updated; one top-level
//! `SELECT` on `fortune` per page, returning the table; no multi-row read of `world` at all. Where
//! verify runs the database it also reads the statement log: no query string may hold several
//! statements, and no two reads of `world` may share a transaction (one Sync per query). While
//! the requests run, the server's connections in `pg_stat_activity` are sampled: never more than
//! `DATABASE_POOL`. A server that caches rows, batches reads (`IN (…)`, `ANY(…)`, a `DO` block),
//! sends decoys that return nothing, or skips its updates fails here with the expected and
//! measured counts.
//!
//! The margin is ±5% of the expected count (at least 1), for a statement recorded a moment
//! after its answer; multi-row reads of `world` have none. The requests go on
//! [`CONNECTIONS`] keep-alive connections at once, so merging queries across requests shows.

use super::{Referee, Statements};
use crate::diff::Diff;
use crate::http::{get_request, Conn};
use crate::Check;
use serverbench_model::Feature;
use std::net::SocketAddr;
use std::time::Duration;

/// Connections the audit's requests share.
pub const CONNECTIONS: usize = 4;
/// The margin on each count, in percent of the expected count.
pub const MARGIN_PERCENT: u64 = 5;
/// The N of `queries` and `updates` the shipped suites use (a test reads `suites/*.toml`).
pub const NS: [u64; 4] = [1, 5, 10, 20];
/// Requests of each `queries`/`updates`/`fortunes` window.
const REQUESTS: u64 = 20;
/// How long PostgreSQL is given to record the last statements before the second mark.
const SETTLE: Duration = Duration::from_millis(200);
/// How often the server's connections are counted while the requests run.
const SAMPLE_EVERY: Duration = Duration::from_millis(5);

/// The requests of one window of the audit and the statements they must cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The path requested.
    pub path: String,
    /// How many times.
    pub requests: u64,
    /// Single-row `SELECT`s on `world` they must cause.
    pub world_reads: u64,
    /// Rows of `world` they must update (at least).
    pub rows_updated: u64,
    /// `SELECT`s on `fortune` they must cause.
    pub fortune_reads: u64,
    /// Rows each `SELECT` on `fortune` must return (the table's).
    pub fortune_table: u64,
    /// The reads must each be a transaction of their own (not so for updates: a batched
    /// update may share a transaction with its reads).
    pub own_transactions: bool,
    /// Of `requests`, those in flight when a run's load stopped: the server may have run their
    /// statements or cancelled them, so each lower bound allows for them (0 in verify).
    pub unsure: u64,
}

impl Plan {
    /// The lowest and highest count of a statement of which the requests cause `expected`:
    /// ±5% (at least 1), and below that the share of the requests in flight at the end.
    pub fn bounds(&self, expected: u64) -> (u64, u64) {
        let per = expected.checked_div(self.requests).unwrap_or(0);
        let low = expected.saturating_sub(margin(expected) + self.unsure * per);
        (low, expected + margin(expected))
    }

    /// `400 (±20)`, or `400 (±20; 64 requests in flight at the end)`.
    fn expected(&self, n: u64) -> String {
        match self.unsure {
            0 => format!("{n} (±{})", margin(n)),
            u => format!("{n} (±{}; {u} requests in flight at the end)", margin(n)),
        }
    }
}

/// The audit's plans for a database feature: 50 × `/db`; 20 × `/queries?queries=N` and
/// 20 × `/updates?queries=N` for each N of [`NS`]; 20 × `/fortunes` (the table has
/// `fortune_table` rows).
pub fn plans(f: Feature, fortune_table: u64) -> Vec<Plan> {
    let p = |path: String, requests, world_reads, rows_updated, fortune_reads| Plan {
        path,
        requests,
        world_reads,
        rows_updated,
        fortune_reads,
        fortune_table,
        own_transactions: rows_updated == 0,
        unsure: 0,
    };
    match f {
        Feature::Db => vec![p("/db".into(), 50, 50, 0, 0)],
        Feature::Queries => NS
            .iter()
            .map(|n| {
                p(
                    format!("/queries?queries={n}"),
                    REQUESTS,
                    REQUESTS * n,
                    0,
                    0,
                )
            })
            .collect(),
        Feature::Fortunes => vec![p("/fortunes".into(), REQUESTS, 0, 0, REQUESTS)],
        Feature::Updates => NS
            .iter()
            .map(|n| {
                let rows = REQUESTS * n;
                p(format!("/updates?queries={n}"), REQUESTS, rows, rows, 0)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The fortunes of the contract's table (spec/database.sql).
pub const FORTUNE_TABLE: u64 = serverbench_database::FORTUNE_ROWS;

/// The plan of a run's lap: `requests` answered on `path` (`/db`, `/queries?queries=N`,
/// `/fortunes`, `/updates?queries=N`, N as the contract clamps it), `unsure` of them in flight
/// when the load stopped, must have caused what the audit asks of that many requests; `None`
/// for any other path.
pub fn for_lap(path: &str, requests: u64, unsure: u64) -> Option<Plan> {
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    let n = super::clamp_queries(query.split('&').find_map(|kv| kv.strip_prefix("queries=")));
    let rows = requests * n as u64;
    let p = |world_reads, rows_updated, fortune_reads| Plan {
        path: path.to_owned(),
        requests,
        world_reads,
        rows_updated,
        fortune_reads,
        fortune_table: FORTUNE_TABLE,
        own_transactions: rows_updated == 0,
        unsure: unsure.min(requests),
    };
    match route {
        "/db" => Some(p(requests, 0, 0)),
        "/queries" => Some(p(rows, 0, 0)),
        "/fortunes" => Some(p(0, 0, requests)),
        "/updates" => Some(p(rows, rows, 0)),
        _ => None,
    }
}

/// The plan of `f` at `path` (for the unit tests).
pub fn plan(f: Feature, path: &str) -> Option<Plan> {
    plans(f, 12).into_iter().find(|p| p.path == path)
}

/// The margin on an expected count: ±5%, at least 1.
pub fn margin(expected: u64) -> u64 {
    (expected * MARGIN_PERCENT / 100).max(1)
}

/// Runs the audit window of `plan` against the server at `addr`.
pub fn check(addr: SocketAddr, plan: &Plan, referee: &mut dyn Referee) -> Check {
    let name = format!("query audit: {} × GET {}", plan.requests, plan.path);
    if let Err(e) = referee.mark() {
        let d = Diff::new(
            "pg_stat_statements",
            "a snapshot (a role allowed to read it)",
            e.to_string(),
        );
        return Check::new(name, vec![d]);
    }
    let most = match send(addr, plan, referee) {
        Ok(most) => most,
        Err(d) => return Check::new(name, vec![d]),
    };
    std::thread::sleep(SETTLE);
    match referee.since_mark() {
        Ok(ran) => {
            let mut diffs = judge(plan, &ran);
            diffs.extend(pool_diff(most, referee.pool()));
            Check::new(name, diffs).with_note(describe(plan, &ran, most))
        }
        Err(e) => Check::new(
            name,
            vec![Diff::new("pg_stat_statements", "a snapshot", e.to_string())],
        ),
    }
}

/// More connections than the pool, as a difference.
pub fn pool_diff(most: Option<u32>, pool: Option<u32>) -> Option<Diff> {
    let (most, pool) = (most?, pool?);
    (most > pool).then(|| {
        Diff::new(
            "connections to the database (pg_stat_activity)",
            format!("at most DATABASE_POOL = {pool}"),
            format!("{most} at once (a connection per request, or a pool too large?)"),
        )
    })
}

/// What PostgreSQL ran, for the record: the counts the plan is judged on (short enough for a
/// line of `verify`), the other statements when there were any, and the most connections seen.
pub fn describe(plan: &Plan, s: &Statements, connections: Option<u32>) -> String {
    let mut parts = Vec::new();
    if plan.world_reads > 0 {
        parts.push(format!("{} single-row SELECTs", s.world_single_reads));
    }
    if plan.rows_updated > 0 {
        parts.push(format!(
            "{} UPDATEs ({} rows)",
            s.world_updates, s.world_rows_updated
        ));
    }
    let mut text = format!("PostgreSQL ran {}", parts.join(", "));
    if !parts.is_empty() {
        text.push_str(" on world");
    }
    if plan.fortune_reads > 0 {
        text.push_str(&format!("{} SELECTs on fortune", s.fortune_reads));
    }
    if s.other > 0 {
        text.push_str(&format!("; {} other", s.other));
    }
    if let Some(n) = connections {
        text.push_str(&format!("; at most {n} connections"));
    }
    text
}

/// The differences between what a plan implies and what PostgreSQL ran.
pub fn judge(plan: &Plan, ran: &Statements) -> Vec<Diff> {
    let mut diffs = Vec::new();
    let within = |expected: u64, got: u64| {
        let (low, high) = plan.bounds(expected);
        (low..=high).contains(&got)
    };
    let expected = |n: u64| plan.expected(n);
    if plan.world_reads > 0 && !within(plan.world_reads, ran.world_single_reads) {
        let hint = if ran.world_single_reads > plan.world_reads {
            "more than one SELECT per row?"
        } else if ran.world_multi_reads > 0 {
            "reads batched?"
        } else if ran.nested_reads > 0 {
            "reads run inside a function or DO block: not round trips"
        } else {
            "a cache?"
        };
        diffs.push(Diff::new(
            "single-row SELECTs on world (top level)",
            expected(plan.world_reads),
            format!("PostgreSQL ran {} ({hint})", ran.world_single_reads),
        ));
    }
    let short = ran
        .world_single_reads
        .saturating_sub(margin(ran.world_single_reads));
    if plan.world_reads > 0 && ran.world_single_rows < short {
        diffs.push(Diff::new(
            "rows returned by the single-row SELECTs on world",
            format!(
                "one per SELECT: {} (±{})",
                ran.world_single_reads,
                margin(ran.world_single_reads)
            ),
            format!(
                "{} (decoy SELECTs that return nothing?)",
                ran.world_single_rows
            ),
        ));
    }
    if ran.world_multi_reads > 0 {
        diffs.push(Diff::new(
            "multi-row SELECTs on world",
            "0 (one SELECT per row)",
            format!(
                "PostgreSQL ran {} (IN (…) or ANY(…) batches?)",
                ran.world_multi_reads
            ),
        ));
    }
    let (low, _) = plan.bounds(plan.rows_updated);
    if plan.rows_updated > 0 && ran.world_rows_updated < low {
        diffs.push(Diff::new(
            "rows updated in world",
            format!(
                "at least {low} ({} rows returned, -{}%{})",
                plan.rows_updated,
                MARGIN_PERCENT,
                match plan.unsure {
                    0 => String::new(),
                    u => format!(", {u} requests in flight at the end"),
                }
            ),
            format!(
                "PostgreSQL updated {} in {} UPDATEs (updates skipped?)",
                ran.world_rows_updated, ran.world_updates
            ),
        ));
    }
    if plan.fortune_reads > 0 {
        diffs.extend(judge_fortunes(plan, ran));
    }
    if let Some(log) = &ran.log {
        diffs.extend(judge_log(plan, log));
    }
    diffs
}

fn judge_fortunes(plan: &Plan, ran: &Statements) -> Vec<Diff> {
    let mut diffs = Vec::new();
    let (low, high) = plan.bounds(plan.fortune_reads);
    if !(low..=high).contains(&ran.fortune_reads) {
        let hint = if ran.fortune_reads < plan.fortune_reads {
            "a cache?"
        } else {
            "more than one per page?"
        };
        diffs.push(Diff::new(
            "SELECTs on fortune (top level)",
            plan.expected(plan.fortune_reads),
            format!("PostgreSQL ran {} ({hint})", ran.fortune_reads),
        ));
    }
    let rows = ran.fortune_reads * plan.fortune_table;
    if ran.fortune_rows < rows.saturating_sub(margin(rows)) {
        diffs.push(Diff::new(
            "rows returned by the SELECTs on fortune",
            format!(
                "the table's {} per SELECT: {} (±{})",
                plan.fortune_table,
                rows,
                margin(rows)
            ),
            format!("{} (a decoy read of part of the table?)", ran.fortune_rows),
        ));
    }
    diffs
}

fn judge_log(plan: &Plan, log: &super::LogFindings) -> Vec<Diff> {
    let mut diffs = Vec::new();
    if log.several_in_one > 0 {
        let example = log.example.as_deref().unwrap_or("");
        diffs.push(Diff::new(
            "query strings (the statement log)",
            "one statement each",
            format!("{} held several, e.g. {example}", log.several_in_one),
        ));
    }
    if plan.own_transactions && log.shared_transaction > 0 {
        diffs.push(Diff::new(
            "transactions of the reads of world (the statement log)",
            "one per read (one Sync per query)",
            format!(
                "{} reads shared a transaction with another (pipelined under one Sync, or an \
                 explicit transaction?)",
                log.shared_transaction
            ),
        ));
    }
    diffs
}

/// The plan's requests, shared by [`CONNECTIONS`] keep-alive connections at once, the server's
/// database connections counted meanwhile; the most seen (`None` when they cannot be counted),
/// or the first failed request as the difference.
fn send(addr: SocketAddr, plan: &Plan, referee: &mut dyn Referee) -> Result<Option<u32>, Diff> {
    let per = |c: u64| {
        plan.requests / CONNECTIONS as u64 + u64::from(c < plan.requests % CONNECTIONS as u64)
    };
    let req = get_request(&plan.path, &addr.to_string(), false);
    let mut most: Option<u32> = None;
    let results: Vec<Result<(), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CONNECTIONS as u64)
            .map(|c| {
                let req = &req;
                s.spawn(move || one_connection(addr, req, per(c)))
            })
            .collect();
        while !handles.iter().all(|h| h.is_finished()) {
            if let Ok(n) = referee.server_connections() {
                most = Some(most.unwrap_or(0).max(n));
            }
            std::thread::sleep(SAMPLE_EVERY);
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a client thread panicked".into()))
            })
            .collect()
    });
    if let Ok(n) = referee.server_connections() {
        most = Some(most.unwrap_or(0).max(n));
    }
    match results.into_iter().find_map(Result::err) {
        None => Ok(most),
        Some(e) => Err(Diff::new(
            "responses",
            format!("{} × 200 to GET {}", plan.requests, plan.path),
            e,
        )),
    }
}

fn one_connection(addr: SocketAddr, req: &[u8], n: u64) -> Result<(), String> {
    if n == 0 {
        return Ok(());
    }
    let mut conn = Conn::connect(addr).map_err(|e| format!("connect: {e}"))?;
    for _ in 0..n {
        let r = conn
            .send(req)
            .and_then(|()| conn.read_response())
            .map_err(|e| format!("error: {e}"))?;
        if r.status != 200 {
            return Err(format!("status {}", r.status));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
