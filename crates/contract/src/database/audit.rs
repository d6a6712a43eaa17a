//! The query audit: a known number of requests per feature between two marks of
//! `pg_stat_statements`, then the statements PostgreSQL ran compared with what the contract
//! implies: one single-row `SELECT` on `world` per row read, at least one row written per row
//! updated, one `SELECT` on `fortune` per page, and no multi-row read of `world` at all. A server
//! that caches rows, batches reads (`IN (…)`, `ANY(…)`) or skips its updates fails here with the
//! expected and measured counts.
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
/// How long PostgreSQL is given to record the last statements before the second mark.
const SETTLE: Duration = Duration::from_millis(200);

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
}

/// The audit's plan for a database feature: 50 × `/db`, 20 × `/queries?queries=20`,
/// 20 × `/fortunes`, 20 × `/updates?queries=20`.
pub fn plan(f: Feature) -> Option<Plan> {
    let p = |path: &str, requests, world_reads, rows_updated, fortune_reads| Plan {
        path: path.into(),
        requests,
        world_reads,
        rows_updated,
        fortune_reads,
    };
    match f {
        Feature::Db => Some(p("/db", 50, 50, 0, 0)),
        Feature::Queries => Some(p("/queries?queries=20", 20, 400, 0, 0)),
        Feature::Fortunes => Some(p("/fortunes", 20, 0, 0, 20)),
        Feature::Updates => Some(p("/updates?queries=20", 20, 400, 400, 0)),
        _ => None,
    }
}

/// The margin on an expected count: ±5%, at least 1.
pub fn margin(expected: u64) -> u64 {
    (expected * MARGIN_PERCENT / 100).max(1)
}

/// Runs the audit window of `f` against the server at `addr`.
pub fn check(addr: SocketAddr, f: Feature, referee: &mut dyn Referee) -> Check {
    let Some(plan) = plan(f) else {
        return Check::pass(format!("query audit of {f}"));
    };
    let name = format!("query audit: {} × GET {}", plan.requests, plan.path);
    if let Err(e) = referee.mark() {
        let d = Diff::new(
            "pg_stat_statements",
            "a snapshot (a role allowed to read it)",
            e,
        );
        return Check::new(name, vec![d]);
    }
    if let Err(d) = send(addr, &plan) {
        return Check::new(name, vec![d]);
    }
    std::thread::sleep(SETTLE);
    match referee.since_mark() {
        Ok(ran) => Check::new(name, judge(&plan, &ran)).with_note(describe(&plan, &ran)),
        Err(e) => Check::new(name, vec![Diff::new("pg_stat_statements", "a snapshot", e)]),
    }
}

/// What PostgreSQL ran, for the record: the counts the plan is judged on (short enough for a
/// line of `verify`), and the other statements when there were any.
pub fn describe(plan: &Plan, s: &Statements) -> String {
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
    text
}

/// The differences between what a plan implies and what PostgreSQL ran.
pub fn judge(plan: &Plan, ran: &Statements) -> Vec<Diff> {
    let mut diffs = Vec::new();
    let within = |expected: u64, got: u64| expected.abs_diff(got) <= margin(expected);
    let expected = |n: u64| format!("{n} (±{})", margin(n));
    if plan.world_reads > 0 && !within(plan.world_reads, ran.world_single_reads) {
        let hint = if ran.world_single_reads > plan.world_reads {
            "more than one SELECT per row?"
        } else if ran.world_multi_reads > 0 {
            "reads batched?"
        } else {
            "a cache?"
        };
        diffs.push(Diff::new(
            "single-row SELECTs on world",
            expected(plan.world_reads),
            format!("PostgreSQL ran {} ({hint})", ran.world_single_reads),
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
    let low = plan.rows_updated.saturating_sub(margin(plan.rows_updated));
    if plan.rows_updated > 0 && ran.world_rows_updated < low {
        diffs.push(Diff::new(
            "rows updated in world",
            format!(
                "at least {low} ({} rows returned, -{}%)",
                plan.rows_updated, MARGIN_PERCENT
            ),
            format!(
                "PostgreSQL updated {} in {} UPDATEs (updates skipped?)",
                ran.world_rows_updated, ran.world_updates
            ),
        ));
    }
    if plan.fortune_reads > 0 && !within(plan.fortune_reads, ran.fortune_reads) {
        let hint = if ran.fortune_reads < plan.fortune_reads {
            "a cache?"
        } else {
            "more than one per page?"
        };
        diffs.push(Diff::new(
            "SELECTs on fortune",
            expected(plan.fortune_reads),
            format!("PostgreSQL ran {} ({hint})", ran.fortune_reads),
        ));
    }
    diffs
}

/// The plan's requests, shared by [`CONNECTIONS`] keep-alive connections at once; the first
/// failed request is the difference.
fn send(addr: SocketAddr, plan: &Plan) -> Result<(), Diff> {
    let per = |c: u64| {
        plan.requests / CONNECTIONS as u64 + u64::from(c < plan.requests % CONNECTIONS as u64)
    };
    let req = get_request(&plan.path, &addr.to_string(), false);
    let results: Vec<Result<(), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CONNECTIONS as u64)
            .map(|c| {
                let req = &req;
                s.spawn(move || one_connection(addr, req, per(c)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a client thread panicked".into()))
            })
            .collect()
    });
    match results.into_iter().find_map(Result::err) {
        None => Ok(()),
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
mod tests {
    use super::*;

    fn ran(single: u64, multi: u64, updates: u64, rows: u64, fortunes: u64) -> Statements {
        Statements {
            world_single_reads: single,
            world_multi_reads: multi,
            world_updates: updates,
            world_rows_updated: rows,
            fortune_reads: fortunes,
            other: 0,
        }
    }

    #[test]
    fn the_margin_is_five_percent_and_at_least_one() {
        assert_eq!(
            (margin(400), margin(50), margin(20), margin(0)),
            (20, 2, 1, 1)
        );
    }

    #[test]
    fn one_select_per_row_passes_within_the_margin() {
        let p = plan(Feature::Queries).unwrap();
        assert!(judge(&p, &ran(400, 0, 0, 0, 0)).is_empty());
        assert!(judge(&p, &ran(381, 0, 0, 0, 0)).is_empty());
        assert_eq!(judge(&p, &ran(379, 0, 0, 0, 0)).len(), 1);
    }

    #[test]
    fn a_cache_fails_with_the_expected_and_measured_counts() {
        let d = judge(&plan(Feature::Queries).unwrap(), &ran(20, 0, 0, 0, 0));
        assert_eq!(
            d[0].render(),
            "single-row SELECTs on world: expected 400 (±20), got PostgreSQL ran 20 (a cache?)"
        );
    }

    #[test]
    fn batched_reads_fail_twice_with_the_batches_named() {
        let d = judge(&plan(Feature::Queries).unwrap(), &ran(0, 20, 0, 0, 0));
        assert!(d[0].got.ends_with("(reads batched?)"), "{d:?}");
        assert_eq!(d[1].what, "multi-row SELECTs on world");
    }

    #[test]
    fn a_batched_update_passes_and_skipped_updates_fail() {
        let p = plan(Feature::Updates).unwrap();
        assert!(judge(&p, &ran(400, 0, 20, 400, 0)).is_empty());
        assert!(judge(&p, &ran(400, 0, 400, 400, 0)).is_empty());
        let d = judge(&p, &ran(400, 0, 0, 0, 0));
        assert!(d[0].got.contains("updates skipped?"), "{d:?}");
    }

    #[test]
    fn the_note_names_the_counts_the_plan_is_judged_on() {
        let u = describe(&plan(Feature::Updates).unwrap(), &ran(400, 0, 20, 400, 0));
        assert_eq!(
            u,
            "PostgreSQL ran 400 single-row SELECTs, 20 UPDATEs (400 rows) on world"
        );
        let mut s = ran(0, 0, 0, 0, 20);
        s.other = 3;
        let f = describe(&plan(Feature::Fortunes).unwrap(), &s);
        assert_eq!(f, "PostgreSQL ran 20 SELECTs on fortune; 3 other");
    }

    #[test]
    fn a_cached_fortune_page_fails() {
        let d = judge(&plan(Feature::Fortunes).unwrap(), &ran(0, 0, 0, 0, 1));
        assert_eq!(d[0].what, "SELECTs on fortune");
    }
}
