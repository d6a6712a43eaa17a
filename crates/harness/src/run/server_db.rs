//! A server's database during its laps (database scenarios): its `DATABASE_*` variables at
//! start, the database's process tree sampled as the `database` role, `pg_stat_statements`
//! read around the measured load, and a database that died failing the lap.

use super::RunState;
use crate::catalog::Server;
use crate::paths::Paths;
use crate::results::record::{LapRecord, LapStatus};
use crate::run::database::RunDatabase;
use crate::run::errors::DatabaseError;
use crate::run::placement::Pid;
use crate::run::plan::Job;
use serverbench_database::Snapshot;
use serverbench_results::Role;

impl RunState<'_> {
    /// Prepares the run's database when one of its laps needs it (started later, by the first
    /// server that needs it).
    pub(in crate::run) fn with_database(mut self, paths: &Paths) -> Self {
        let pools = self.plan.jobs.iter().filter_map(|j| self.pool(j));
        if let Some(max) = pools.max() {
            let cpus = &self.opts.pinning.server_cpus;
            let opts = &self.opts.database;
            let db = RunDatabase::new(opts, &paths.cache, cpus, max);
            self.db = Some(db.on_hosts(self.opts.hosts.as_ref(), opts));
        }
        self
    }

    /// Stops the database (at the end of the run, and on Ctrl-C: the run returns).
    pub(in crate::run) fn stop_database(&mut self) {
        if let Some(db) = &mut self.db {
            let _ = db.down();
        }
    }

    /// The pool size of a job's lap: `Some` for a database scenario.
    pub(super) fn pool(&self, j: &Job) -> Option<u32> {
        super::params(&self.opts.suite, j).pool
    }

    /// The environment of a server whose laps need the database with a pool of `pool`: the
    /// database started when it does not run (the first server, or after one died).
    pub(super) fn database_env(
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
    pub(super) fn database_role(&self, uses: bool) -> Option<(Role, Pid)> {
        let pid = self.db.as_ref()?.sampled().filter(|_| uses)?;
        Some((Role::Database, pid))
    }

    /// After the measured load: what the database executed, and a lap failed by a database
    /// that died (the rest of this server's laps are not run; the next server gets a fresh
    /// database).
    pub(super) fn database_after(&mut self, record: &mut LapRecord, before: Option<Snapshot>) {
        let Some(db) = &mut self.db else { return };
        if record.params.pool.is_none() {
            return;
        }
        if let Some(why) = db.exited() {
            record.status = LapStatus::Failed;
            record.failure = Some(why);
            self.db_lost = true;
            return;
        }
        // The requests in flight when the load stopped ran their statements too.
        let in_flight = record.params.in_flight_at_end();
        let requests = record.load.as_ref().and_then(|m| m.requests);
        let requests = requests.map(|n| n + in_flight.unwrap_or(0));
        let seconds = record.load.as_ref().and_then(|m| m.duration_s);
        record.database = db.lap(before, requests, seconds.unwrap_or(record.wall_s));
        if let Some(d) = &mut record.database {
            d.in_flight_at_end = in_flight;
        }
    }
}
