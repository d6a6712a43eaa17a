//! Database laps (`db`, `queries-N`, `fortunes`, `updates-N`), one row per server x scenario x
//! profile: req/s and p99 latency, rows per second, the server's and the database's CPU per
//! request, the statements `pg_stat_statements` counted per request, and the pool size; the
//! medians over the successful laps. And the queries-per-request curve: req/s against N, per
//! server and profile.

use crate::stats::median;
use serde::Serialize;
use serverbench_results::database::DatabaseFloor;
use serverbench_results::record::{LapRecord, LapStatus};
use serverbench_results::Role;

/// One server x scenario x profile of database laps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatabaseRow {
    pub server: String,
    pub scenario: String,
    pub profile: String,
    pub connections: u32,
    /// N of `queries-N`/`updates-N` (the `queries` parameter of the path), absent otherwise.
    pub queries: Option<u32>,
    /// `DATABASE_POOL` the server was given.
    pub pool: Option<u32>,
    /// Where the database ran (`local` or a host's name).
    pub db_host: Option<String>,
    /// Medians over the successful laps.
    pub rps: Option<f64>,
    pub p99_us: Option<f64>,
    pub rows_per_s: Option<f64>,
    pub server_cpu_us_per_request: Option<f64>,
    pub database_cpu_us_per_request: Option<f64>,
    pub statements_per_request: Option<f64>,
    /// The database's share of the server-side CPU: its CPU / (the server's + its own), the
    /// median over the laps.
    pub db_cpu_share: Option<f64>,
    /// `/db` rows: the database's floor (selects/s pgbench got from it alone, at the sessions
    /// this row's laps could use: connections, at most the pool), the median over the rounds
    /// the run measured it in.
    pub floor_selects_per_s: Option<f64>,
    /// `/db` rows: the floor's sessions, rounds, and its lowest and highest round.
    pub floor_sessions: Option<u32>,
    pub floor_rounds: usize,
    pub floor_range: Option<(f64, f64)>,
    /// `/db` rows: the same floor in pipeline mode (20 selects sent before their answers are
    /// read), the median over the rounds that measured it.
    pub floor_pipelined_selects_per_s: Option<f64>,
    /// `/db` rows: req/s as a share of that floor ("share of the database's rate"): the median
    /// of each lap's req/s over the floor of its own round, else the medians' ratio.
    pub of_floor: Option<f64>,
    /// Successful laps.
    pub laps: usize,
}

/// N of a path `/queries?queries=N` or `/updates?queries=N`.
pub fn queries_of(path: &str) -> Option<u32> {
    let (_, query) = path.split_once('?')?;
    let n = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("queries="))?;
    n.parse().ok()
}

/// Every database lap's row, in the order the laps first appear.
pub fn database_rows(records: &[LapRecord]) -> Vec<DatabaseRow> {
    let mut rows: Vec<(DatabaseRow, Vec<&LapRecord>)> = Vec::new();
    for r in records.iter().filter(|r| r.params.pool.is_some()) {
        let same = |row: &DatabaseRow| {
            (&row.server, &row.scenario, &row.profile) == (&r.server, &r.scenario, &r.profile)
        };
        match rows.iter_mut().find(|(row, _)| same(row)) {
            Some((_, laps)) => laps.push(r),
            None => rows.push((empty_row(r), vec![r])),
        }
    }
    rows.into_iter()
        .map(|(row, laps)| fill(row, &laps))
        .collect()
}

fn empty_row(r: &LapRecord) -> DatabaseRow {
    DatabaseRow {
        server: r.server.clone(),
        scenario: r.scenario.clone(),
        profile: r.profile.clone(),
        connections: r.params.connections,
        queries: r.params.work.paths.first().and_then(|p| queries_of(p)),
        pool: r.params.pool,
        db_host: r.database.as_ref().map(|d| d.host.clone()),
        rps: None,
        p99_us: None,
        rows_per_s: None,
        server_cpu_us_per_request: None,
        database_cpu_us_per_request: None,
        statements_per_request: None,
        db_cpu_share: None,
        floor_selects_per_s: None,
        floor_pipelined_selects_per_s: None,
        floor_sessions: None,
        floor_rounds: 0,
        floor_range: None,
        of_floor: None,
        laps: 0,
    }
}

fn fill(mut row: DatabaseRow, laps: &[&LapRecord]) -> DatabaseRow {
    let ok: Vec<&LapRecord> = laps
        .iter()
        .copied()
        .filter(|r| r.status == LapStatus::Ok)
        .collect();
    let med = |f: &dyn Fn(&LapRecord) -> Option<f64>| {
        let v: Vec<f64> = ok.iter().filter_map(|r| f(r)).collect();
        median(&v)
    };
    row.rps = med(&|r| r.load.as_ref()?.rps);
    row.p99_us = med(&|r| r.load.as_ref()?.latency_us.p99);
    row.rows_per_s = med(&|r| r.database.as_ref()?.rows_per_s);
    row.statements_per_request = med(&|r| r.database.as_ref()?.statements_per_request);
    row.server_cpu_us_per_request = med(&|r| r.stats(Role::Server)?.cpu_us_per_request);
    row.database_cpu_us_per_request = med(&|r| r.stats(Role::Database)?.cpu_us_per_request);
    row.db_cpu_share = med(&|r| {
        let db = r.stats(Role::Database)?.cpu_s;
        let server = r.stats(Role::Server)?.cpu_s;
        (db + server > 0.0).then(|| db / (db + server))
    });
    row.laps = ok.len();
    row
}

/// Whether a row is `/db`'s: one random row per request, the load the floor measures.
fn is_db(row: &DatabaseRow, paths: &[String]) -> bool {
    row.queries.is_none() && paths.iter().all(|p| p == "/db")
}

/// Each `/db` row's floor and its req/s as a share of it, from the floors the run measured
/// (`env.json`'s `database_floor`, one per round of laps): the median of the rounds at the
/// sessions the row's laps could use.
pub fn with_floor(rows: &mut [DatabaseRow], records: &[LapRecord], floors: &[DatabaseFloor]) {
    for row in rows.iter_mut() {
        let laps: Vec<&LapRecord> = records
            .iter()
            .filter(|r| {
                (&r.server, &r.scenario, &r.profile) == (&row.server, &row.scenario, &row.profile)
            })
            .collect();
        if !laps
            .first()
            .is_some_and(|r| is_db(row, &r.params.work.paths))
        {
            continue;
        }
        let Some(sessions) = DatabaseFloor::sessions_for_lap(floors, row.connections, row.pool)
        else {
            continue;
        };
        let rates: Vec<f64> = floors
            .iter()
            .filter(|f| f.clients == sessions && f.selects_per_s > 0.0)
            .map(|f| f.selects_per_s)
            .collect();
        let Some(floor) = median(&rates) else {
            continue;
        };
        let low = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let high = rates.iter().copied().fold(0.0, f64::max);
        row.floor_selects_per_s = Some(floor);
        row.floor_sessions = Some(sessions);
        row.floor_rounds = rates.len();
        row.floor_range = Some((low, high));
        let pipelined: Vec<f64> = floors
            .iter()
            .filter(|f| f.clients == sessions)
            .filter_map(|f| f.pipelined_selects_per_s)
            .filter(|r| *r > 0.0)
            .collect();
        row.floor_pipelined_selects_per_s = median(&pipelined);
        let paired = paired_shares(&laps, floors, sessions);
        row.of_floor = median(&paired).or_else(|| row.rps.map(|rps| rps / floor));
    }
}

/// Each successful lap's req/s over the floor measured right after its round (lap N, round N):
/// on a machine whose load drifts, a lap and the floor beside it share their conditions.
fn paired_shares(laps: &[&LapRecord], floors: &[DatabaseFloor], sessions: u32) -> Vec<f64> {
    let ok = laps.iter().filter(|r| r.status == LapStatus::Ok);
    ok.filter_map(|r| {
        let rps = r.load.as_ref()?.rps?;
        let f = floors
            .iter()
            .find(|f| f.round == r.lap && f.clients == sessions && f.selects_per_s > 0.0)?;
        Some(rps / f.selects_per_s)
    })
    .collect()
}

/// A queries-per-request curve: one server's req/s against N at one profile, for one kind
/// (`queries` or `updates`).
#[derive(Debug, Clone, PartialEq)]
pub struct QueriesCurve {
    /// `queries` or `updates`.
    pub kind: String,
    pub profile: String,
    pub server: String,
    /// (N, median req/s), N ascending.
    pub points: Vec<(u32, f64)>,
}

/// The curves of the rows with N queries per request (two points at least).
pub fn queries_curves(rows: &[DatabaseRow]) -> Vec<QueriesCurve> {
    let mut curves: Vec<QueriesCurve> = Vec::new();
    for r in rows {
        let (Some(n), Some(rps)) = (r.queries, r.rps) else {
            continue;
        };
        let kind = r.scenario.split('-').next().unwrap_or("").to_string();
        let same =
            |c: &QueriesCurve| (&c.kind, &c.profile, &c.server) == (&kind, &r.profile, &r.server);
        match curves.iter_mut().find(|c| same(c)) {
            Some(c) => c.points.push((n, rps)),
            None => curves.push(QueriesCurve {
                kind,
                profile: r.profile.clone(),
                server: r.server.clone(),
                points: vec![(n, rps)],
            }),
        }
    }
    curves.retain(|c| c.points.len() > 1);
    curves
        .iter_mut()
        .for_each(|c| c.points.sort_by_key(|p| p.0));
    curves
}

/// Why a row's laps are outside the rules: `2 of 3 laps outside the statement rules:
/// single-row SELECTs on world (top level): expected …`; `None` when none is.
pub fn off_contract(laps: &[&LapRecord]) -> Option<String> {
    let ok: Vec<&&LapRecord> = laps.iter().filter(|r| r.status == LapStatus::Ok).collect();
    let off: Vec<&Vec<String>> = ok
        .iter()
        .filter_map(|r| r.database.as_ref().map(|d| &d.off_contract))
        .filter(|d| !d.is_empty())
        .collect();
    let first = off.first()?;
    let noun = if ok.len() == 1 { "lap" } else { "laps" };
    Some(format!(
        "{} of {} {noun} outside the statement rules: {}",
        off.len(),
        ok.len(),
        first.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;
    use serverbench_results::database::DatabaseLap;
    use serverbench_results::record::{Measurement, ServerStats};

    fn db_lap(server: &str, n: u32, rps: f64, lap: u32) -> LapRecord {
        let mut r = fixture::lap();
        r.server = server.into();
        r.scenario = format!("queries-{n}");
        r.lap = lap;
        r.params.work.paths = vec![format!("/queries?queries={n}")];
        r.params.pool = Some(16);
        r.load = Some(Measurement {
            rps: Some(rps),
            requests: Some(1000),
            ..Measurement::default()
        });
        r.database = Some(DatabaseLap::measured(
            "local".into(),
            vec![0],
            (1000 * u64::from(n), 1000 * u64::from(n)),
            Some(1000),
            1.0,
        ));
        let cpu = ServerStats {
            cpu_us_per_request: Some(50.0),
            ..ServerStats::default()
        };
        r.set_stats(Role::Database, cpu);
        r
    }

    #[test]
    fn a_database_row_has_the_medians_of_its_laps_and_the_pool() {
        let laps = [
            db_lap("a", 5, 100.0, 1),
            db_lap("a", 5, 300.0, 2),
            db_lap("a", 5, 200.0, 3),
        ];
        let rows = database_rows(&laps);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(
            (r.rps, r.queries, r.pool, r.laps),
            (Some(200.0), Some(5), Some(16), 3)
        );
        assert_eq!(r.statements_per_request, Some(5.0));
        assert_eq!(r.database_cpu_us_per_request, Some(50.0));
    }

    #[test]
    fn a_db_row_reads_as_a_share_of_the_floor_at_its_pools_sessions_and_others_do_not() {
        let mut one = db_lap("a", 1, 9_000.0, 1);
        one.scenario = "db".into();
        one.params.work.paths = vec!["/db".into()];
        one.params.connections = 256;
        let mut server = ServerStats {
            cpu_s: 3.0,
            ..ServerStats::default()
        };
        one.set_stats(Role::Server, server.clone());
        server.cpu_s = 1.0;
        one.set_stats(Role::Database, server);
        let laps = [one, db_lap("a", 5, 400.0, 1)];
        let floor = |clients, rate| DatabaseFloor {
            clients,
            selects_per_s: rate,
            ..DatabaseFloor::default()
        };
        let mut rows = database_rows(&laps);
        with_floor(
            &mut rows,
            &laps,
            &[floor(16, 18_000.0), floor(64, 20_000.0)],
        );
        assert_eq!(
            rows[0].floor_selects_per_s,
            Some(18_000.0),
            "pool 16: 16 sessions"
        );
        assert_eq!(rows[0].of_floor, Some(0.5));
        assert_eq!(rows[0].db_cpu_share, Some(0.25));
        assert_eq!(
            (rows[1].floor_selects_per_s, rows[1].of_floor),
            (None, None)
        );
    }

    #[test]
    fn a_lap_without_a_pool_is_no_database_lap() {
        assert!(database_rows(&[fixture::lap()]).is_empty());
    }

    #[test]
    fn the_queries_curve_runs_from_few_to_many_queries_per_request() {
        let laps = [
            db_lap("a", 20, 50.0, 1),
            db_lap("a", 1, 900.0, 1),
            db_lap("a", 5, 400.0, 1),
        ];
        let curves = queries_curves(&database_rows(&laps));
        assert_eq!(curves.len(), 1);
        assert_eq!(curves[0].points, [(1, 900.0), (5, 400.0), (20, 50.0)]);
        assert_eq!(curves[0].kind, "queries");
    }
}
