//! A server's database during its laps (database scenarios): its `DATABASE_*` variables at
//! start, the database's process tree sampled as the `database` role, `pg_stat_statements`
//! read around the measured load, and a database that died failing the lap.

use super::context::Context;
use crate::catalog::Server;
use crate::results::record::{LapRecord, LapStatus};
use crate::run::database::RunDatabase;
use crate::run::errors::DatabaseError;
use crate::run::placement::Pid;
use serverbench_database::Snapshot;
use serverbench_results::Role;

/// The run's database, when one of its laps needs it, and whether it died in the lap just
/// measured.
pub(super) struct LapDatabase {
    db: Option<RunDatabase>,
    lost: bool,
}

impl LapDatabase {
    /// Prepares the run's database when one of its laps needs it (started later, by the first
    /// server that needs it).
    pub(super) fn new(ctx: &Context) -> LapDatabase {
        let pools = ctx.plan.jobs.iter().filter_map(|j| ctx.pool(j));
        let db = pools.max().map(|max| {
            let opts = &ctx.opts.database;
            let cpus = &ctx.opts.pinning.server_cpus;
            let db = RunDatabase::new(opts, &ctx.paths.cache, cpus, max);
            db.on_hosts(ctx.opts.hosts.as_ref(), opts)
        });
        LapDatabase { db, lost: false }
    }

    /// Stops the database (at the end of the run, and on Ctrl-C: the run returns).
    pub(super) fn stop(&mut self) {
        if let Some(db) = &mut self.db {
            let _ = db.down();
        }
    }

    /// A turn with a pool of `pool` starts the database first (it does not run yet, or died).
    pub(super) fn starts_with(&self, pool: Option<u32>) -> bool {
        pool.is_some() && self.db.as_ref().is_some_and(|d| d.pid().is_none())
    }

    /// The environment of a server whose laps need the database with a pool of `pool`: the
    /// database started when it does not run (the first server, or after one died).
    pub(super) fn env(
        &mut self,
        server: &Server,
        pool: Option<u32>,
    ) -> Result<Vec<(String, String)>, DatabaseError> {
        let (Some(pool), Some(db)) = (pool, &mut self.db) else {
            return Ok(Vec::new());
        };
        if server.is_attached() {
            return Ok(Vec::new());
        }
        db.env(pool)
    }

    /// The database's process tree, sampled in a lap that uses it.
    pub(super) fn role(&self, uses: bool) -> Option<(Role, Pid)> {
        let pid = self.db.as_ref()?.sampled().filter(|_| uses)?;
        Some((Role::Database, pid))
    }

    /// What it has executed so far, in a lap that uses it.
    pub(super) fn snapshot(&mut self, uses: bool) -> Option<Snapshot> {
        self.db.as_mut().filter(|_| uses)?.snapshot()
    }

    /// After the measured load: what the database executed, and a lap failed by a database
    /// that died (the rest of this server's laps are not run; the next server gets a fresh
    /// database).
    pub(super) fn after(&mut self, record: &mut LapRecord, before: Option<Snapshot>) {
        let Some(db) = &mut self.db else { return };
        if record.params.pool.is_none() {
            return;
        }
        if let Some(why) = db.exited() {
            record.status = LapStatus::Failed;
            record.failure = Some(why);
            self.lost = true;
            return;
        }
        if record.params.find_max.is_some() {
            // A capacity search's statements span every step and every step's warm-up, whose
            // requests the record does not count: totals only, neither per request nor judged
            // (verify audits the server; `run` judges its laps at a fixed load).
            record.database = db.lap(before, None, record.wall_s, None);
            return;
        }
        // The requests in flight when the load stopped ran their statements too.
        let in_flight = record.params.in_flight_at_end();
        let requests = record.load.as_ref().and_then(|m| m.requests);
        let requests = requests.map(|n| n + in_flight.unwrap_or(0));
        let seconds = record.load.as_ref().and_then(|m| m.duration_s);
        let non_2xx = record.load.as_ref().and_then(|m| m.non_2xx).unwrap_or(0);
        let path = match record.params.work.paths.as_slice() {
            [one] => Some(one.as_str()),
            _ => None,
        };
        let answered = requests.map(|n| (n.saturating_sub(non_2xx), in_flight.unwrap_or(0)));
        let judged = path.zip(answered);
        record.database = db.lap(before, requests, seconds.unwrap_or(record.wall_s), judged);
        if let Some(d) = &mut record.database {
            d.in_flight_at_end = in_flight;
        }
    }

    /// Whether the database died in the lap just measured (and forgets it).
    pub(super) fn take_lost(&mut self) -> bool {
        std::mem::take(&mut self.lost)
    }

    /// The running database, for the floor measured after a round.
    pub(super) fn running(&mut self) -> Option<&mut RunDatabase> {
        self.db.as_mut().filter(|d| d.pid().is_some())
    }
}
