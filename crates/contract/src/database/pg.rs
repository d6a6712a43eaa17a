//! The [`Referee`] on a real PostgreSQL, through serverbench-database: the tables read with
//! verify's own statements (marked `/* serverbench */`, so the audit leaves them out), and the
//! audit's windows as deltas of `pg_stat_statements` snapshots (no reset, so any role that may
//! read the view's rows will do).

use super::{Referee, Statements, World, WORLD_IDS};
use serverbench_database::{
    connect, read_fortunes, read_worlds, DbUrl, Snapshot, StatementDelta, StatementKind,
};

/// verify's connection to the database a server uses.
pub struct PgReferee {
    client: postgres::Client,
    url: DbUrl,
    mark: Option<(Snapshot, i64)>,
}

impl std::fmt::Debug for PgReferee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgReferee({})", self.url)
    }
}

impl PgReferee {
    /// Connects to `url` (the role must be able to read `world`, `fortune` and the rows of
    /// `pg_stat_statements` of the server's role: the same role, or one granted
    /// `pg_read_all_stats`).
    pub fn connect(url: &DbUrl) -> Result<PgReferee, serverbench_database::DbError> {
        Ok(PgReferee {
            client: connect(url)?,
            url: url.clone(),
            mark: None,
        })
    }

    /// A snapshot, and the calls of this database's statements the role may not see (their
    /// text and id are hidden; their calls are not).
    fn snapshot(&mut self) -> Result<(Snapshot, i64), String> {
        let hidden: i64 = self
            .client
            .query_one(
                "/* serverbench */ SELECT coalesce(sum(s.calls), 0)::int8 FROM pg_stat_statements \
                 AS s JOIN pg_database AS d ON d.oid = s.dbid \
                 WHERE d.datname = current_database() AND s.queryid IS NULL",
                &[],
            )
            .map_err(|e| format!("pg_stat_statements on {}: {e}", self.url))?
            .get(0);
        let snapshot = Snapshot::take(&mut self.client).map_err(|e| e.to_string())?;
        Ok((snapshot, hidden))
    }
}
/// The audit's counts from a delta of `pg_stat_statements`.
pub fn statements(delta: &StatementDelta) -> Statements {
    let by = delta.by_kind();
    let get = |k: StatementKind| by.get(&k).copied().unwrap_or_default();
    Statements {
        world_single_reads: get(StatementKind::WorldById).calls,
        world_multi_reads: get(StatementKind::WorldMany).calls,
        world_updates: get(StatementKind::WorldUpdate).calls,
        world_rows_updated: get(StatementKind::WorldUpdate).rows,
        fortune_reads: get(StatementKind::Fortune).calls,
        other: get(StatementKind::Other).calls,
    }
}

impl Referee for PgReferee {
    fn world(&mut self) -> Result<World, String> {
        let ids: Vec<i32> = WORLD_IDS.collect();
        let rows = read_worlds(&mut self.client, &ids).map_err(|e| e.to_string())?;
        Ok(rows.into_iter().map(|w| (w.id, w.random_number)).collect())
    }

    fn fortunes(&mut self) -> Result<Vec<(i32, String)>, String> {
        read_fortunes(&mut self.client).map_err(|e| e.to_string())
    }

    fn mark(&mut self) -> Result<(), String> {
        self.mark = Some(self.snapshot()?);
        Ok(())
    }

    fn since_mark(&mut self) -> Result<Statements, String> {
        let (before, hidden_before) = self.mark.take().ok_or("no mark taken before")?;
        let (after, hidden_after) = self.snapshot()?;
        if hidden_after > hidden_before {
            return Err(format!(
                "{} statements hidden from role {} (use the server's role, or grant it \
                 pg_read_all_stats)",
                hidden_after - hidden_before,
                self.url.user
            ));
        }
        Ok(statements(&before.delta(&after)))
    }
}
