//! The database's floor (issue 22), measured in a run that has `/db` laps after each round of
//! laps (every server's lap N), the servers gone, so the floors interleave with the laps they
//! are read against: the run's own database answers `/db`'s select alone (pgbench,
//! serverbench-database's [`measure_floor`]) with the database on its lap CPUs and pgbench on the
//! client CPUs. Once per number of sessions the `/db` laps could use: a lap's connections, at
//! most its pool (a server never holds more database connections than `DATABASE_POOL`), for
//! the longest of those laps' durations (at most 10 s; `--quick` has shortened them already).
//! The floors go to `env.json`, one per round and sessions count; the report reads each `/db`
//! row's median req/s as a share of the median floor.

use super::context::Context;
use super::database::RunDatabase;
use super::plan::{self, Plan};
use super::Event;
use crate::results::{self, database::DatabaseFloor, env::Env};
use serverbench_database::{measure_floor, DbError, FloorMode, FloorSpec};
use serverbench_model::Feature;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The longest a floor measurement runs.
const MAX_SECONDS: f64 = 10.0;
/// A lap given by a request count: the floor runs this long.
const DEFAULT_SECONDS: f64 = 3.0;

/// The floors to measure: (sessions, duration), one per sessions count of the plan's `/db`
/// laps, ascending.
pub(super) fn points(plan: &Plan, suite: &crate::suite::Suite) -> Vec<(u32, Duration)> {
    let mut points: Vec<(u32, f64)> = Vec::new();
    for j in plan.jobs.iter().filter(|j| j.lap == 1) {
        let scenario = &suite.scenarios[j.scenario];
        if !scenario.requires.contains(&Feature::Db) {
            continue;
        }
        let params = plan::load_params(suite, j);
        let Some(pool) = params.pool else { continue };
        let sessions = params.connections.min(pool).max(1);
        let secs = params
            .duration_s
            .unwrap_or(DEFAULT_SECONDS)
            .min(MAX_SECONDS);
        match points.iter_mut().find(|p| p.0 == sessions) {
            Some(p) => p.1 = p.1.max(secs),
            None => points.push((sessions, secs)),
        }
    }
    points.sort_by_key(|p| p.0);
    let to_duration = |(n, s): (u32, f64)| (n, Duration::from_secs_f64(s.max(1.0)));
    points.into_iter().map(to_duration).collect()
}

/// Measures the floors of round `round` of a run that has `/db` laps, on its own database (not
/// over hosts, not when interrupted, not when the database does not run) and records them in
/// `env.json` (replacing the round's, if `--resume` measures it again); a floor that cannot be
/// measured is reported and left out.
pub(super) fn measure(
    ctx: &Context,
    db: Option<&mut RunDatabase>,
    round: u32,
    on_event: &mut dyn FnMut(Event),
) {
    let Some(db) = db else {
        return;
    };
    if ctx.opts.hosts.is_some() || ctx.cancelled() {
        return;
    }
    let (dir, client_cpus) = (&ctx.dir, &ctx.opts.pinning.client_cpus);
    let points = points(ctx.plan, &ctx.opts.suite);
    if points.is_empty() {
        return;
    }
    let mut floors = Vec::new();
    for (clients, duration) in points {
        let floor = one(db, client_cpus, clients, duration, dir)
            .map(|f| DatabaseFloor { round, ..f })
            .map_err(Arc::new);
        on_event(Event::DatabaseFloor {
            round,
            clients,
            outcome: floor.as_ref().map(|f| f.selects_per_s).map_err(Arc::clone),
        });
        floors.extend(floor.ok());
    }
    let env_path = dir.join(results::ENV_FILE);
    if let Ok(Some(mut env)) = Env::read(&env_path) {
        env.database_floor.retain(|f| f.round != round);
        env.database_floor.extend(floors);
        let _ = env.write(&env_path);
    }
}

fn one(
    db: &mut RunDatabase,
    client_cpus: &[usize],
    clients: u32,
    duration: Duration,
    dir: &Path,
) -> Result<DatabaseFloor, DbError> {
    let (url, db_cpus) = db.for_floor()?;
    let client_cpus = client_cpus.to_vec();
    let spec = FloorSpec {
        clients,
        cpus: client_cpus.clone(),
        duration,
        mode: FloorMode::Plain,
    };
    let r = measure_floor(&url, &spec, &dir.join("scripts"))?;
    // The same sessions in pipeline mode: a reference a pipelining driver is read against.
    let pipelined = FloorSpec {
        mode: FloorMode::Pipeline,
        ..spec
    };
    let p = measure_floor(&url, &pipelined, &dir.join("scripts")).ok();
    Ok(DatabaseFloor {
        clients: r.clients,
        threads: r.threads,
        round: 0,
        selects_per_s: r.selects_per_s,
        transactions: r.transactions,
        pipelined_selects_per_s: p.map(|p| p.selects_per_s),
        duration_s: r.duration_s,
        db_cpus,
        client_cpus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::plan::Job;

    /// suites/database.toml's shape: `db` at 4, 16 and 256 connections (256 for 30 s),
    /// `fortunes` beside it, pool 16.
    const SUITE: &str = r#"
name = "floor"
description = "d"
reproduces = "none"
servers = "all"
laps = 2
pool = 16
[[scenario]]
name = "db"
paths = ["/db"]
requires = "db"
[[scenario]]
name = "fortunes"
paths = ["/fortunes"]
requires = "fortunes"
[[profile]]
name = "c4"
connections = 4
duration = "2s"
[[profile]]
name = "c16"
connections = 16
duration = "3s"
[[profile]]
name = "c256"
connections = 256
duration = "30s"
"#;

    fn plan(suite: &crate::suite::Suite) -> Plan {
        let mut jobs = Vec::new();
        for lap in 1..=suite.laps {
            for scenario in 0..suite.scenarios.len() {
                for profile in 0..suite.profiles.len() {
                    jobs.push(Job {
                        server: 0,
                        scenario,
                        profile,
                        lap,
                    });
                }
            }
        }
        Plan {
            servers: Vec::new(),
            skipped: Vec::new(),
            scenario_skips: Vec::new(),
            jobs,
        }
    }

    #[test]
    fn one_floor_per_sessions_count_of_the_db_laps_at_most_the_pool_and_ten_seconds() {
        let suite = crate::suite::Suite::parse(SUITE, Path::new("floor.toml")).unwrap();
        let points = points(&plan(&suite), &suite);
        assert_eq!(
            points,
            [(4, Duration::from_secs(2)), (16, Duration::from_secs(10))]
        );
    }

    #[test]
    fn a_suite_without_db_laps_has_no_floor() {
        let text = SUITE.replace("requires = \"db\"", "requires = \"queries\"");
        let suite = crate::suite::Suite::parse(&text, Path::new("floor.toml")).unwrap();
        assert!(points(&plan(&suite), &suite).is_empty());
    }
}
