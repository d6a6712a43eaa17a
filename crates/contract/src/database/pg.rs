//! The [`Referee`] on a real PostgreSQL, through serverbench-database. verify connects as a
//! role of its own (serverbench's cluster has one, `serverbench_referee`; with `--database-url`
//! the user names one), so its reads, snapshots and changes are told from the server's by
//! `userid` in `pg_stat_statements` and by role in the statement log, never by their text. The
//! audit's windows are deltas of `pg_stat_statements` snapshots (no reset).

use super::{LogFindings, Referee, RefereeError, Statements, World, WORLD_IDS};
use serverbench_database::{
    classify, connect, read_fortunes, read_worlds, DbUrl, LoggedStatement, Snapshot,
    StatementDelta, StatementKind, StatementLog,
};
use std::collections::HashMap;
use std::path::Path;

/// verify's connection to the database a server uses.
pub struct PgReferee {
    client: postgres::Client,
    url: DbUrl,
    mark: Option<(Snapshot, i64)>,
    log: Option<StatementLog>,
    pool: Option<u32>,
    world_before: Option<World>,
    fortunes_before: Option<Vec<(i32, String)>>,
}

impl std::fmt::Debug for PgReferee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgReferee({})", self.url)
    }
}

impl PgReferee {
    /// Connects to `url`: a role that is not the server's, that may read every row of
    /// `pg_stat_statements` and `pg_stat_activity` (`pg_read_all_stats`) and write `world` and
    /// `fortune`.
    pub fn connect(url: &DbUrl) -> Result<PgReferee, serverbench_database::DbError> {
        Ok(PgReferee {
            client: connect(url)?,
            url: url.clone(),
            mark: None,
            log: None,
            pool: None,
            world_before: None,
            fortunes_before: None,
        })
    }

    /// Also reads the server log at `path` (a cluster started with `log_statements`): several
    /// statements in one query string, reads that share a transaction.
    pub fn with_log(mut self, path: &Path) -> PgReferee {
        self.log = Some(StatementLog::at_end(path));
        self
    }

    /// The server was given `DATABASE_POOL = pool`: its connections are held to it.
    pub fn with_pool(mut self, pool: u32) -> PgReferee {
        self.pool = Some(pool);
        self
    }

    /// The error of the statement that did `what`.
    fn err(&self, what: &'static str) -> impl Fn(postgres::Error) -> RefereeError {
        statement_failed(self.url.to_string(), what)
    }

    /// A snapshot, and the calls of this database's statements the role may not see (their
    /// text and id are hidden; their calls are not).
    fn snapshot(&mut self) -> Result<(Snapshot, i64), RefereeError> {
        let hidden: i64 = self
            .client
            .query_one(
                "SELECT coalesce(sum(s.calls), 0)::int8 FROM pg_stat_statements \
                 AS s JOIN pg_database AS d ON d.oid = s.dbid \
                 WHERE d.datname = current_database() AND s.queryid IS NULL",
                &[],
            )
            .map_err(self.err("pg_stat_statements"))?
            .get(0);
        let snapshot = Snapshot::take(&mut self.client)?;
        Ok((snapshot, hidden))
    }

    /// Other sessions on verify's own role: a server that logs in as it would have its
    /// statements left out of the audit.
    fn shared_role(&mut self) -> Result<(), RefereeError> {
        let n: i64 = self
            .client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND usename = current_user AND pid <> pg_backend_pid() \
                 AND backend_type = 'client backend'",
                &[],
            )
            .map_err(self.err("pg_stat_activity"))?
            .get(0);
        if n > 0 {
            return Err(RefereeError::SharedRole {
                sessions: n,
                role: self.url.user.clone(),
            });
        }
        Ok(())
    }

    fn save_before(&mut self) -> Result<(), RefereeError> {
        if self.world_before.is_none() {
            self.world()?;
        }
        if self.fortunes_before.is_none() {
            self.fortunes()?;
        }
        Ok(())
    }
}

/// The error of the statement that did `what` on the database `db`.
fn statement_failed(db: String, what: &'static str) -> impl Fn(postgres::Error) -> RefereeError {
    move |source| RefereeError::Statement {
        what,
        db: db.clone(),
        source,
    }
}

/// The audit's counts from a delta of `pg_stat_statements`.
pub fn statements(delta: &StatementDelta) -> Statements {
    let by = delta.by_kind();
    let get = |k: StatementKind| by.get(&k).copied().unwrap_or_default();
    let (by_id, many, update, fortune) = (
        get(StatementKind::WorldById),
        get(StatementKind::WorldMany),
        get(StatementKind::WorldUpdate),
        get(StatementKind::Fortune),
    );
    Statements {
        world_single_reads: by_id.calls,
        world_single_rows: by_id.rows,
        world_multi_reads: many.calls + many.nested_calls,
        world_updates: update.calls + update.nested_calls,
        world_rows_updated: update.rows + update.nested_rows,
        fortune_reads: fortune.calls,
        fortune_rows: fortune.rows,
        nested_reads: by_id.nested_calls + fortune.nested_calls,
        other: get(StatementKind::Other).calls,
        log: None,
    }
}

/// What the log shows of the statements of roles other than `referee`. A query string of
/// several statements counts when one of them touches `world` or `fortune` (a pool's reset,
/// `SELECT pg_advisory_unlock_all(); CLOSE ALL; …`, is not a read sent with others).
pub fn log_findings(logged: &[LoggedStatement], referee: &str) -> LogFindings {
    let theirs: Vec<&LoggedStatement> = logged.iter().filter(|s| s.role != referee).collect();
    let several: Vec<&&LoggedStatement> = theirs
        .iter()
        .filter(|s| s.simple && s.statements() > 1)
        .filter(|s| {
            s.parts()
                .iter()
                .any(|p| classify(p) != StatementKind::Other)
        })
        .collect();
    let mut by_xact: HashMap<(u32, &str), u64> = HashMap::new();
    for s in &theirs {
        if !s.vxid.is_empty() && classify(&s.text) == StatementKind::WorldById {
            *by_xact.entry((s.pid, s.vxid.as_str())).or_default() += 1;
        }
    }
    LogFindings {
        several_in_one: several.len() as u64,
        example: several.first().map(|s| {
            let one_line = s.text.split_whitespace().collect::<Vec<_>>().join(" ");
            match one_line.char_indices().nth(70) {
                Some((i, _)) => format!("{}…", &one_line[..i]),
                None => one_line,
            }
        }),
        shared_transaction: by_xact.values().filter(|n| **n > 1).sum(),
    }
}

impl Referee for PgReferee {
    fn world(&mut self) -> Result<World, RefereeError> {
        let ids: Vec<i32> = WORLD_IDS.collect();
        let rows = read_worlds(&mut self.client, &ids)?;
        let world: World = rows.into_iter().map(|w| (w.id, w.random_number)).collect();
        self.world_before.get_or_insert_with(|| world.clone());
        Ok(world)
    }

    fn fortunes(&mut self) -> Result<Vec<(i32, String)>, RefereeError> {
        let table = read_fortunes(&mut self.client)?;
        self.fortunes_before.get_or_insert_with(|| table.clone());
        Ok(table)
    }

    fn change_world(&mut self) -> Result<World, RefereeError> {
        self.save_before()?;
        self.client
            .batch_execute("UPDATE world SET randomnumber = 1 + floor(random() * 10000)::int4")
            .map_err(self.err("UPDATE world"))?;
        self.world()
    }

    fn change_fortunes(&mut self) -> Result<Vec<(i32, String)>, RefereeError> {
        self.save_before()?;
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let added = format!("Added by verify <{nonce}> & not cached.");
        let changed = format!("Changed by verify: \"{nonce}\".");
        let failed = self.err("INSERT and UPDATE of fortune");
        let mut tx = self.client.transaction().map_err(&failed)?;
        let result = tx
            .execute(
                "INSERT INTO fortune (id, message) SELECT max(id) + 1, $1 FROM fortune",
                &[&added],
            )
            .and_then(|_| {
                tx.execute(
                    "UPDATE fortune SET message = $1 WHERE id = (SELECT min(id) FROM fortune)",
                    &[&changed],
                )
            })
            .and_then(|_| tx.commit());
        result.map_err(failed)?;
        self.fortunes()
    }

    fn restore(&mut self) -> Result<(), RefereeError> {
        if let Some(world) = &self.world_before {
            let (ids, numbers): (Vec<i32>, Vec<i32>) = world.iter().map(|(i, n)| (*i, *n)).unzip();
            self.client
                .execute(
                    "UPDATE world AS w SET randomnumber = v.r \
                     FROM unnest($1::int4[], $2::int4[]) AS v(id, r) \
                     WHERE w.id = v.id AND w.randomnumber <> v.r",
                    &[&ids, &numbers],
                )
                .map_err(self.err("restoring world"))?;
        }
        if let Some(table) = &self.fortunes_before {
            let (ids, messages): (Vec<i32>, Vec<String>) = table.iter().cloned().unzip();
            let failed = self.err("restoring fortune");
            let mut tx = self.client.transaction().map_err(&failed)?;
            tx.execute("DELETE FROM fortune", &[])
                .and_then(|_| {
                    tx.execute(
                        "INSERT INTO fortune (id, message) \
                         SELECT * FROM unnest($1::int4[], $2::text[])",
                        &[&ids, &messages],
                    )
                })
                .and_then(|_| tx.commit())
                .map_err(failed)?;
        }
        Ok(())
    }

    fn mark(&mut self) -> Result<(), RefereeError> {
        self.mark = Some(self.snapshot()?);
        if let Some(log) = &mut self.log {
            log.read_new()?;
        }
        Ok(())
    }

    fn since_mark(&mut self) -> Result<Statements, RefereeError> {
        let (before, hidden_before) = self.mark.take().ok_or(RefereeError::NoMark)?;
        let (after, hidden_after) = self.snapshot()?;
        if hidden_after > hidden_before {
            return Err(RefereeError::Hidden {
                statements: hidden_after - hidden_before,
                role: self.url.user.clone(),
            });
        }
        self.shared_role()?;
        let mut ran = statements(&before.delta(&after));
        if let Some(log) = &mut self.log {
            let logged = log.read_new()?;
            ran.log = Some(log_findings(&logged, &self.url.user));
        }
        Ok(ran)
    }

    fn server_connections(&mut self) -> Result<u32, RefereeError> {
        let n: i64 = self
            .client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND usename <> current_user AND backend_type = 'client backend'",
                &[],
            )
            .map_err(self.err("pg_stat_activity"))?
            .get(0);
        Ok(n as u32)
    }

    fn pool(&self) -> Option<u32> {
        self.pool
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(pid: u32, vxid: &str, role: &str, simple: bool, text: &str) -> LoggedStatement {
        LoggedStatement {
            pid,
            vxid: vxid.into(),
            role: role.into(),
            simple,
            text: text.into(),
        }
    }

    #[test]
    fn the_log_finds_several_statements_in_a_string_and_reads_sharing_a_transaction() {
        let by_id = "SELECT id, randomnumber FROM world WHERE id = $1";
        let log = [
            logged(1, "3/1", "serverbench", false, by_id),
            logged(1, "3/2", "serverbench", false, by_id),
            logged(2, "4/1", "serverbench", false, by_id),
            logged(2, "4/1", "serverbench", false, by_id),
            logged(
                3,
                "5/1",
                "serverbench",
                true,
                "SELECT id FROM world WHERE id = 1; SELECT 2",
            ),
            logged(
                4,
                "6/1",
                "serverbench",
                true,
                "SELECT pg_advisory_unlock_all(); RESET ALL",
            ),
            logged(9, "9/1", "serverbench_referee", true, "SELECT 1; SELECT 2"),
            logged(9, "9/1", "serverbench_referee", false, by_id),
            logged(9, "9/1", "serverbench_referee", false, by_id),
        ];
        let f = log_findings(&log, "serverbench_referee");
        assert_eq!(f.several_in_one, 1);
        assert_eq!(
            f.example.as_deref(),
            Some("SELECT id FROM world WHERE id = 1; SELECT 2")
        );
        assert_eq!(f.shared_transaction, 2);
    }
}
