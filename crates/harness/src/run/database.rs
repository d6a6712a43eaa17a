//! The database of a run (`run` does `db up`/`down` by itself): the private PostgreSQL cluster
//! (serverbench-database) prepared once and started before the first server that needs it,
//! pinned to the server's CPUs unless `--db-cpus` says otherwise, its process tree sampled as
//! the `database` role, `pg_stat_statements` read before and after each measured load. It is
//! stopped when the run ends, returns on Ctrl-C or fails (dropping [`RunDatabase`] stops it);
//! when it dies during a lap, that lap fails with the cause and the next server gets a fresh one.
//! With `run --hosts` it runs on the database host instead ([`super::hosts::db`]).

use super::errors::DatabaseError;
use super::hosts::db::{RemoteDb, RemoteDbSpec};
use super::hosts::HostsRun;
use super::placement::Pid;
use serverbench_database::{self as db, Cluster, Config, DbError, RunningDb, Snapshot};
use serverbench_model::failure::FailureKind;
use serverbench_model::failure::LapFailure;
use serverbench_results::database::DatabaseLap;
use std::path::Path;
use std::sync::Arc;

/// A database is settled when its statements did not grow for this long...
const SETTLE_QUIET: std::time::Duration = std::time::Duration::from_millis(200);
/// ...or after this long.
const SETTLE_LIMIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The differences between the statements of `delta` and what `answered` requests of `path`
/// imply, `in_flight` of them still in flight when the load stopped (the query audit of verify;
/// nothing for a path that is not a database workload).
pub(super) fn judge(
    path: &str,
    (answered, in_flight): (u64, u64),
    delta: &db::StatementDelta,
) -> Vec<String> {
    use serverbench_contract::database::{audit, pg};
    let plan = audit::for_lap(path, answered, in_flight);
    let Some(plan) = plan.filter(|_| answered > 0) else {
        return Vec::new();
    };
    let ran = pg::statements(delta);
    audit::judge(&plan, &ran)
        .iter()
        .map(|d| d.render())
        .collect()
}

/// How `run` places its database (the cluster lives in the cache folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbOptions {
    /// Its TCP port (`--db-port`).
    pub port: u16,
    /// Its CPUs (`--db-cpus`); `None`: the server's.
    pub cpus: Option<Vec<usize>>,
    /// Install PostgreSQL when missing.
    pub install: bool,
}

impl Default for DbOptions {
    /// Port 5433, the server's CPUs, installed when missing.
    fn default() -> DbOptions {
        DbOptions {
            port: db::DEFAULT_PORT,
            cpus: None,
            install: true,
        }
    }
}

/// The database during a run.
pub(super) struct RunDatabase {
    config: Config,
    cluster: Option<Cluster>,
    running: Option<RunningDb>,
    /// `run --hosts`: the machines, and the cluster running on the database host.
    on_host: Option<(Arc<HostsRun>, Option<RemoteDb>)>,
}

impl RunDatabase {
    /// A database in `cache` for a run whose servers run on `server_cpus` and whose largest
    /// pool is `max_pool`; nothing is started yet.
    pub(super) fn new(
        opts: &DbOptions,
        cache: &Path,
        server_cpus: &[usize],
        max_pool: u32,
    ) -> RunDatabase {
        let mut config = Config::new(cache).size_for_pool(max_pool);
        config.port = opts.port;
        config.install = opts.install;
        config.cpus = opts.cpus.clone().unwrap_or_else(|| server_cpus.to_vec());
        RunDatabase {
            config,
            cluster: None,
            running: None,
            on_host: None,
        }
    }

    /// With `run --hosts`, the database runs on the database host: pinned to its inventory CPUs
    /// unless `--db-cpus` says otherwise (the servers' when it is the server host).
    pub(super) fn on_hosts(mut self, run: Option<&Arc<HostsRun>>, opts: &DbOptions) -> Self {
        if let Some(run) = run {
            if opts.cpus.is_none() && run.database.name != run.server.name {
                self.config.cpus = run.database.cpus.clone();
            }
            self.on_host = Some((Arc::clone(run), None));
        }
        self
    }

    /// The environment of a server with a pool of `pool`: the database started (and first
    /// prepared) when it is not running.
    pub(super) fn env(&mut self, pool: u32) -> Result<Vec<(String, String)>, DatabaseError> {
        let Some((run, running)) = &mut self.on_host else {
            return Ok(self.up()?.env(pool));
        };
        if running.is_none() {
            let spec = RemoteDbSpec {
                port: self.config.port,
                cpus: self.config.cpus.clone(),
                max_connections: self.config.max_connections,
            };
            *running = Some(RemoteDb::start(run, &spec)?);
        }
        let url = &running.as_ref().expect("started").url;
        Ok(db::env_for(url, pool))
    }

    /// Where its process tree is sampled, when it runs.
    pub(super) fn sampled(&self) -> Option<Pid> {
        match &self.on_host {
            Some((_, running)) => Some(Pid::DatabaseHost(running.as_ref()?.ready.pid)),
            None => self.pid().map(Pid::Here),
        }
    }

    /// Where it runs, as the report's `db on` column says it.
    fn host_name(&self) -> String {
        match &self.on_host {
            Some((run, _)) => run.database.name.clone(),
            None => "local".into(),
        }
    }

    /// The running database, started (and first prepared) when it is not running.
    pub(super) fn up(&mut self) -> Result<&RunningDb, DbError> {
        if self.running.is_none() {
            if self.cluster.is_none() {
                self.cluster = Some(Cluster::prepare(&self.config)?);
            }
            let cluster = self.cluster.as_ref().expect("prepared");
            let running = cluster.start()?;
            // Its own process group: stopped with the servers' on a second Ctrl-C too.
            crate::process::register(running.pid);
            self.running = Some(running);
        }
        Ok(self.running.as_ref().expect("started"))
    }

    /// The postmaster's PID, when it runs.
    pub(super) fn pid(&self) -> Option<u32> {
        if let Some((_, running)) = &self.on_host {
            return running.as_ref().map(|r| r.ready.pid);
        }
        self.running.as_ref().map(|r| r.pid)
    }

    /// How it ended, if it has: its postmaster is gone.
    pub(super) fn exited(&mut self) -> Option<LapFailure> {
        if let Some((run, running)) = &mut self.on_host {
            let why = running.as_mut()?.exited()?;
            // Gone: the next server starts a fresh one.
            *running = None;
            let what = format!(
                "the database on {} exited during the lap",
                run.database.name
            );
            return Some(LapFailure::new(
                FailureKind::Database,
                format!("{what}: {why}"),
            ));
        }
        let pid = self.pid()?;
        if serverbench_machine::process::is_running(pid) {
            return None;
        }
        let log = self.cluster.as_ref().map(|c| c.layout().log_file());
        let tail = log
            .map(|l| serverbench_catalog::logs::log_tail(&l, 5))
            .unwrap_or_default();
        // Gone: forget it so that the next server starts a fresh one.
        if let Some(r) = self.running.take() {
            crate::process::unregister(r.pid);
            let _ = r.stop();
        }
        Some(
            LapFailure::new(
                FailureKind::Database,
                format!("the database (postgres, pid {pid}) exited during the lap"),
            )
            .with_log_tail(tail),
        )
    }

    /// The statements so far, once they stop growing (`None` when they cannot be read): taken
    /// before a measured load, the warm-up's last requests are in; after it, the measured
    /// load's. On a database host, the host's `db run` reads them.
    pub(super) fn snapshot(&mut self) -> Option<Snapshot> {
        if let Some((_, running)) = &mut self.on_host {
            return running.as_mut()?.snapshot();
        }
        // As the referee's role: its own statements are not in the snapshot.
        let url = self.running.as_ref()?.referee_url();
        let mut client = db::connect(&url).ok()?;
        Snapshot::take_settled(&mut client, SETTLE_QUIET, SETTLE_LIMIT).ok()
    }

    /// What ran between `before` and now, per request of a load of `requests` measured over
    /// `seconds`, judged by the contract's statement rules when the lap asked one `path` of
    /// the database workloads (the requests that got a 2xx, in flight included, and those in
    /// flight).
    pub(super) fn lap(
        &mut self,
        before: Option<Snapshot>,
        requests: Option<u64>,
        seconds: f64,
        judged: Option<(&str, (u64, u64))>,
    ) -> Option<DatabaseLap> {
        let delta = before?.delta(&self.snapshot()?);
        let mut lap = DatabaseLap::measured(
            self.host_name(),
            self.config.cpus.clone(),
            (delta.statements(), delta.rows()),
            requests,
            seconds,
        );
        lap.off_contract = judged
            .map(|(path, answered)| judge(path, answered, &delta))
            .unwrap_or_default();
        Some(lap)
    }

    /// Where it listens and its CPUs, started when it is not running (for its floor).
    pub(super) fn for_floor(&mut self) -> Result<(db::DbUrl, Vec<usize>), DbError> {
        let url = self.up()?.url();
        Ok((url, self.config.cpus.clone()))
    }

    /// Stops it if it runs.
    pub(super) fn down(&mut self) -> Result<(), DbError> {
        if let Some((_, running)) = &mut self.on_host {
            if let Some(mut r) = running.take() {
                r.stop();
            }
            return Ok(());
        }
        match self.running.take() {
            Some(r) => {
                crate::process::unregister(r.pid);
                r.stop()
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_database::{StatementDelta, StatementRow};

    fn delta(calls: u64) -> StatementDelta {
        StatementDelta {
            rows: vec![StatementRow {
                userid: 10,
                queryid: 1,
                toplevel: true,
                query: "SELECT id, randomnumber FROM world WHERE id = $1".into(),
                calls,
                rows: calls,
            }],
        }
    }

    #[test]
    fn a_lap_is_judged_at_the_n_it_ran_and_a_cache_is_named() {
        assert!(judge("/queries?queries=20", (100, 0), &delta(2000)).is_empty());
        let off = judge("/queries?queries=20", (100, 0), &delta(100));
        assert_eq!(off.len(), 1, "{off:?}");
        assert!(
            off[0].ends_with("got PostgreSQL ran 100 (a cache?)"),
            "{off:?}"
        );
        assert!(
            judge("/hello", (100, 0), &delta(0)).is_empty(),
            "not a database path"
        );
        assert!(
            judge("/db", (0, 0), &delta(0)).is_empty(),
            "nothing answered"
        );
        assert!(
            judge("/db", (100, 10), &delta(92)).is_empty(),
            "a server that cancels the requests in flight at the end"
        );
    }
}
