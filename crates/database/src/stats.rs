//! `pg_stat_statements` read as typed rows: a [`Snapshot`] before and after some requests, the
//! delta per statement, and each statement classified by what it does to the contract's tables
//! (one world row by id, several world rows, an update of world, a read of fortune, other).
//! serverbench's own statements are left out by role: a snapshot is taken as the referee's role
//! ([`REFEREE_USER`](crate::REFEREE_USER)) and leaves out that role's rows, whatever their text.

use crate::{DbError, Result};
use postgres::Client;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::{Duration, Instant};

/// What a statement does, for the query audit and statements per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StatementKind {
    /// `SELECT … FROM world WHERE id = $1`: one row by id.
    WorldById,
    /// A read of several world rows in one statement (`IN (…)`, `ANY(…)`, no `WHERE id =`).
    WorldMany,
    /// An `UPDATE` of world (one row, or a batch: `rows` counts the rows written).
    WorldUpdate,
    /// A read of fortune.
    Fortune,
    /// Anything else (`BEGIN`, `SET`, catalog reads of drivers…).
    Other,
}

impl StatementKind {
    /// Every kind, in order.
    pub const ALL: [StatementKind; 5] = [
        StatementKind::WorldById,
        StatementKind::WorldMany,
        StatementKind::WorldUpdate,
        StatementKind::Fortune,
        StatementKind::Other,
    ];

    /// A short name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            StatementKind::WorldById => "world by id",
            StatementKind::WorldMany => "world, several rows",
            StatementKind::WorldUpdate => "world update",
            StatementKind::Fortune => "fortune",
            StatementKind::Other => "other",
        }
    }
}

impl fmt::Display for StatementKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of a statement from its (normalised) text as `pg_stat_statements` shows it.
pub fn classify(query: &str) -> StatementKind {
    let q = normalise(query);
    let tokens: Vec<&str> = q.split(' ').collect();
    let first = tokens.first().copied().unwrap_or("");
    if first == "update" && tokens.get(1).is_some_and(|t| is_table(t, "world")) {
        return StatementKind::WorldUpdate;
    }
    if first != "select" && first != "with" {
        return StatementKind::Other;
    }
    let from = |table: &str| {
        tokens
            .windows(2)
            .any(|w| (w[0] == "from" || w[0] == "join") && is_table(w[1], table))
    };
    if from("world") {
        let many = [
            " in (", " in(", "any(", "any (", "unnest", "between", " or ",
        ]
        .iter()
        .any(|m| q.contains(m));
        let by_id = q.contains(" where ")
            && ["id = $", "id=$", "id = ?", "id=?"]
                .iter()
                .any(|m| q.contains(m));
        return if by_id && !many {
            StatementKind::WorldById
        } else {
            StatementKind::WorldMany
        };
    }
    if from("fortune") {
        return StatementKind::Fortune;
    }
    StatementKind::Other
}

/// Lower case, comments and double quotes dropped, runs of white space as one space, trimmed
/// (a comment in front of a statement does not hide what it does).
fn normalise(q: &str) -> String {
    let lower = strip_comments(&q.to_lowercase()).replace('"', "");
    lower.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `q` with its `/* … */` and `-- …` comments as spaces (quotes are not looked into: the
/// normalised text has `$n` for its constants).
fn strip_comments(q: &str) -> String {
    let mut out = String::with_capacity(q.len());
    let mut rest = q;
    loop {
        let block = rest.find("/*");
        let line = rest.find("--");
        let (at, end) = match (block, line) {
            (Some(b), Some(l)) if l < b => (l, "\n"),
            (Some(b), _) => (b, "*/"),
            (None, Some(l)) => (l, "\n"),
            (None, None) => break,
        };
        out.push_str(&rest[..at]);
        out.push(' ');
        rest = match rest[at + 2..].find(end) {
            Some(e) => &rest[at + 2 + e + end.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

fn is_table(token: &str, table: &str) -> bool {
    let t = token.trim_end_matches([',', ';', ')']);
    t == table || t.strip_prefix("public.") == Some(table)
}

/// One row of `pg_stat_statements` (or of a delta).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StatementRow {
    /// The role that ran it.
    pub userid: u32,
    /// The statement's id.
    pub queryid: i64,
    /// Run at top level (not inside a function).
    pub toplevel: bool,
    /// Its normalised text.
    pub query: String,
    /// Times run.
    pub calls: u64,
    /// Rows returned or written.
    pub rows: u64,
}

impl StatementRow {
    /// Its kind.
    pub fn kind(&self) -> StatementKind {
        classify(&self.query)
    }
}

/// Calls and rows of one kind: sent by a client (top level, a round trip each), or run inside
/// a function or `DO` block (nested).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatementStats {
    /// Statements run at top level.
    pub calls: u64,
    /// Rows they returned or wrote.
    pub rows: u64,
    /// Statements run inside a function or `DO` block.
    pub nested_calls: u64,
    /// Rows those returned or wrote.
    pub nested_rows: u64,
}

/// The statements of the current database at one moment (as JSON between a database host and
/// the controller of `run --hosts`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    /// Its rows.
    pub rows: Vec<StatementRow>,
}

impl Snapshot {
    /// Reads `pg_stat_statements` for the connection's database: every role's statements but
    /// the connection's own (connect as [`REFEREE_USER`](crate::REFEREE_USER), never as the
    /// servers' role, or their statements are left out too).
    pub fn take(client: &mut Client) -> Result<Snapshot> {
        let rows = client
            .query(
                "SELECT s.userid::oid::int8, s.queryid, s.toplevel, s.query, \
                 s.calls, s.rows FROM pg_stat_statements AS s JOIN pg_database AS d \
                 ON d.oid = s.dbid WHERE d.datname = current_database() AND s.queryid IS NOT NULL \
                 AND s.userid <> (SELECT oid FROM pg_roles WHERE rolname = current_user)",
                &[],
            )
            .map_err(|source| DbError::Query {
                url: "pg_stat_statements".into(),
                source,
            })?;
        Ok(Snapshot {
            rows: rows
                .iter()
                .map(|r| StatementRow {
                    userid: r.get::<_, i64>(0) as u32,
                    queryid: r.get(1),
                    toplevel: r.get(2),
                    query: r.get(3),
                    calls: r.get::<_, i64>(4).max(0) as u64,
                    rows: r.get::<_, i64>(5).max(0) as u64,
                })
                .collect(),
        })
    }

    /// Reads `pg_stat_statements` once the statements stop growing: two reads `quiet` apart
    /// with the same count of statements, or the last read after
    /// `limit`. After a load, the requests still queued in the server reach the database and
    /// are counted in this snapshot, not in the next lap's.
    pub fn take_settled(client: &mut Client, quiet: Duration, limit: Duration) -> Result<Snapshot> {
        let start = Instant::now();
        let mut last = Snapshot::take(client)?;
        loop {
            std::thread::sleep(quiet);
            let now = Snapshot::take(client)?;
            if now.statements() == last.statements() || start.elapsed() >= limit {
                return Ok(now);
            }
            last = now;
        }
    }

    /// Calls of every statement (serverbench's own are not in a snapshot).
    pub fn statements(&self) -> u64 {
        self.rows.iter().map(|r| r.calls).sum()
    }

    /// What ran between `self` and `after`: every statement whose calls grew (a statement
    /// evicted or reset in between counts from zero).
    pub fn delta(&self, after: &Snapshot) -> StatementDelta {
        let before: HashMap<(u32, i64, bool), &StatementRow> = self
            .rows
            .iter()
            .map(|r| ((r.userid, r.queryid, r.toplevel), r))
            .collect();
        let rows = after
            .rows
            .iter()
            .filter_map(|a| {
                let (calls, rows) = match before.get(&(a.userid, a.queryid, a.toplevel)) {
                    Some(b) if b.calls <= a.calls => {
                        (a.calls - b.calls, a.rows.saturating_sub(b.rows))
                    }
                    _ => (a.calls, a.rows),
                };
                (calls > 0).then(|| StatementRow {
                    calls,
                    rows,
                    ..a.clone()
                })
            })
            .collect();
        StatementDelta { rows }
    }
}

/// The statements run between two snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatementDelta {
    /// One row per statement that ran, with the calls and rows of the interval.
    pub rows: Vec<StatementRow>,
}

impl StatementDelta {
    /// Calls and rows per kind (every kind present, zero when none ran).
    pub fn by_kind(&self) -> BTreeMap<StatementKind, StatementStats> {
        let mut m: BTreeMap<_, _> = StatementKind::ALL
            .iter()
            .map(|k| (*k, StatementStats::default()))
            .collect();
        for r in &self.rows {
            let s = m.entry(r.kind()).or_default();
            if r.toplevel {
                s.calls += r.calls;
                s.rows += r.rows;
            } else {
                s.nested_calls += r.calls;
                s.nested_rows += r.rows;
            }
        }
        m
    }

    /// Calls and rows of one kind.
    pub fn get(&self, kind: StatementKind) -> StatementStats {
        self.by_kind().get(&kind).copied().unwrap_or_default()
    }

    /// Statements sent by clients (top level: round trips; the statements a function or `DO`
    /// block runs are not), for statements per request.
    pub fn statements(&self) -> u64 {
        self.rows
            .iter()
            .filter(|r| r.toplevel)
            .map(|r| r.calls)
            .sum()
    }

    /// Rows those statements returned or wrote.
    pub fn rows(&self) -> u64 {
        self.rows
            .iter()
            .filter(|r| r.toplevel)
            .map(|r| r.rows)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use StatementKind::*;

    #[test]
    fn statements_are_classified_by_what_they_do_to_the_tables() {
        for (q, k) in [
            ("SELECT id, randomnumber FROM world WHERE id = $1", WorldById),
            ("select id,randomNumber from World where id=$1", WorldById),
            ("SELECT \"id\", \"randomnumber\" FROM \"public\".\"world\" WHERE \"id\" = $1", WorldById),
            ("SELECT id, randomnumber FROM world WHERE id IN ($1, $2, $3)", WorldMany),
            ("SELECT id, randomnumber FROM world WHERE id = ANY($1)", WorldMany),
            ("SELECT * FROM world", WorldMany),
            ("SELECT id FROM world WHERE id = $1 OR id = $2", WorldMany),
            ("UPDATE world SET randomnumber = $1 WHERE id = $2", WorldUpdate),
            ("UPDATE world AS w SET randomnumber = v.r FROM (VALUES ($1, $2)) AS v(id, r) WHERE w.id = v.id", WorldUpdate),
            ("update public.world set randomnumber = CASE id WHEN $1 THEN $2 END", WorldUpdate),
            ("SELECT id, message FROM fortune", Fortune),
            ("select * from Fortune", Fortune),
            ("BEGIN", Other),
            ("SELECT $1", Other),
            ("SELECT oid, typname FROM pg_type", Other),
            ("UPDATE fortune SET message = $1", Other),
            ("/* serverbench */ SELECT id, randomnumber FROM world WHERE id = $1", WorldById),
            ("/* serverbench */ SELECT id, randomnumber FROM world WHERE id = ANY($1)", WorldMany),
            ("-- a note\nSELECT id, message FROM fortune", Fortune),
            ("/* a */ UPDATE /* b */ world SET randomnumber = $1 WHERE id = $2", WorldUpdate),
        ] {
            assert_eq!(classify(q), k, "{q}");
        }
    }

    fn row(queryid: i64, query: &str, calls: u64, rows: u64) -> StatementRow {
        StatementRow {
            userid: 10,
            queryid,
            toplevel: true,
            query: query.into(),
            calls,
            rows,
        }
    }

    #[test]
    fn a_delta_counts_calls_and_rows_per_kind_between_snapshots() {
        let by_id = "SELECT id, randomnumber FROM world WHERE id = $1";
        let upd = "UPDATE world SET randomnumber = $1 WHERE id = $2";
        let before = Snapshot {
            rows: vec![row(1, by_id, 100, 100), row(3, "BEGIN", 7, 0)],
        };
        let after = Snapshot {
            rows: vec![
                row(1, by_id, 300, 300),
                row(2, upd, 20, 200),
                row(3, "BEGIN", 7, 0),
                StatementRow {
                    toplevel: false,
                    ..row(4, by_id, 400, 400)
                },
            ],
        };
        let d = before.delta(&after);
        assert_eq!(d.rows.len(), 3, "BEGIN did not run in between");
        let stats = |calls, rows, nested_calls, nested_rows| StatementStats {
            calls,
            rows,
            nested_calls,
            nested_rows,
        };
        assert_eq!(d.get(WorldById), stats(200, 200, 400, 400), "nested apart");
        assert_eq!(d.get(WorldUpdate), stats(20, 200, 0, 0));
        assert_eq!(d.get(Fortune), StatementStats::default());
        assert_eq!(d.statements(), 220);
    }

    #[test]
    fn a_statement_reset_in_between_counts_from_zero() {
        let by_id = "SELECT id, randomnumber FROM world WHERE id = $1";
        let before = Snapshot {
            rows: vec![row(1, by_id, 500, 500)],
        };
        let after = Snapshot {
            rows: vec![row(1, by_id, 40, 40)],
        };
        assert_eq!(before.delta(&after).get(WorldById).calls, 40);
    }
}
