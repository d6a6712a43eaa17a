//! Cost at a fixed rate: for laps of a profile with `rate = …` (open loop), what each request
//! cost the server at that rate, one row per server × scenario × profile.
//!
//! - CPU µs per request: the server's whole process tree (the harness samples it), plus the
//!   database's where one ran (its own process tree); `total` is their sum, the figure ranked.
//!   Medians over the successful laps.
//! - Memory: the peak RSS over the laps; latency p99 and p99.9 from the summary table (the
//!   exact merge of the laps' histograms when every lap has one).
//! - A row is *valid* only when the server completed at least [`VALID_SHARE`] of the target
//!   rate (the median lap's req/s over the target) with no lap failed: a server that fell
//!   behind did less work per second than asked, and its CPU per request would not be the cost
//!   of that rate. Invalid rows are kept, marked with why, and left out of the ranks.
//! - Ranks: 1 is the cheapest valid row of its scenario × profile by total CPU per request;
//!   rows within [`TIE`] of each other share a rank.

use crate::stats::median;
use serde::Serialize;
use serverbench_results::record::{LapRecord, LapStatus};
use serverbench_results::Role;

/// A row is valid when its achieved rate is at least this share of the target.
pub const VALID_SHARE: f64 = 0.95;
/// Relative difference under which two rows share a rank (2%).
pub const TIE: f64 = 0.02;

/// One server at one fixed rate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostRow {
    pub server: String,
    pub scenario: String,
    pub profile: String,
    /// Requests/s asked for.
    pub rate_target: f64,
    /// Median req/s over the successful laps.
    pub rate_achieved: Option<f64>,
    /// Server process tree CPU µs per request (median over laps).
    pub server_cpu_us_per_request: Option<f64>,
    /// The database's CPU µs per request, when one ran.
    pub db_cpu_us_per_request: Option<f64>,
    /// Server plus database.
    pub total_cpu_us_per_request: Option<f64>,
    /// Cores the server used at that rate (median).
    pub cores_used: Option<f64>,
    pub rss_peak_mb: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    /// Errors over all requests (every successful lap).
    pub error_rate: Option<f64>,
    pub valid: bool,
    /// Why the row is not valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid_why: Option<String>,
    /// 1 = cheapest valid row of its scenario × profile.
    pub rank: Option<u32>,
    pub laps: usize,
    pub failed_laps: usize,
}

/// What the summary's merged histograms say of one row: its p99, p99.9 and error rate (better
/// than a median of the laps' own percentiles, which a row falls back to without them).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Merged {
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub error_rate: Option<f64>,
}

/// The cost rows of every fixed-rate lap, grouped by scenario × profile (in the order they
/// first appear), ranked rows first within each; `merged` gives a row's merged figures by
/// scenario, profile and server.
pub fn cost_rows(
    records: &[LapRecord],
    merged: &dyn Fn(&str, &str, &str) -> Merged,
) -> Vec<CostRow> {
    let mut groups: Vec<(CostKey, Vec<&LapRecord>)> = Vec::new();
    for r in records.iter().filter(|r| r.params.rate.is_some()) {
        let key = (r.scenario.clone(), r.profile.clone(), r.server.clone());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, laps)) => laps.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    let mut rows: Vec<CostRow> = groups.iter().map(|(_, laps)| row(laps, merged)).collect();
    rank(&mut rows);
    let order: Vec<(String, String)> = {
        let mut o: Vec<(String, String)> = Vec::new();
        for r in &rows {
            let k = (r.scenario.clone(), r.profile.clone());
            if !o.contains(&k) {
                o.push(k);
            }
        }
        o
    };
    rows.sort_by(|a, b| {
        let pos = |r: &CostRow| {
            order
                .iter()
                .position(|k| (&k.0, &k.1) == (&r.scenario, &r.profile))
        };
        pos(a).cmp(&pos(b)).then(
            a.rank
                .unwrap_or(u32::MAX)
                .cmp(&b.rank.unwrap_or(u32::MAX))
                .then(a.server.cmp(&b.server)),
        )
    });
    rows
}

type CostKey = (String, String, String);

fn row(laps: &[&LapRecord], merged: &dyn Fn(&str, &str, &str) -> Merged) -> CostRow {
    let first = laps[0];
    let target = first.params.rate.unwrap_or(0.0);
    let ok: Vec<&LapRecord> = laps
        .iter()
        .copied()
        .filter(|r| r.status == LapStatus::Ok)
        .collect();
    let med = |f: &dyn Fn(&LapRecord) -> Option<f64>| {
        median(&ok.iter().filter_map(|r| f(r)).collect::<Vec<f64>>())
    };
    let server = med(&|r| r.stats(Role::Server)?.cpu_us_per_request);
    let db = med(&|r| r.stats(Role::Database)?.cpu_us_per_request);
    let achieved = med(&|r| r.load.as_ref()?.rps);
    let m = merged(&first.scenario, &first.profile, &first.server);
    let rss = ok
        .iter()
        .filter_map(|r| r.stats(Role::Server).map(|s| s.rss_peak_mb))
        .reduce(f64::max);
    let failed = laps.len() - ok.len();
    let invalid_why = why_invalid(target, achieved, ok.len(), failed);
    CostRow {
        server: first.server.clone(),
        scenario: first.scenario.clone(),
        profile: first.profile.clone(),
        rate_target: target,
        rate_achieved: achieved,
        server_cpu_us_per_request: server,
        db_cpu_us_per_request: db,
        total_cpu_us_per_request: server.map(|s| s + db.unwrap_or(0.0)),
        cores_used: med(&|r| Some(r.stats(Role::Server)?.cores_used)),
        rss_peak_mb: rss,
        p99_us: m
            .p99_us
            .or_else(|| med(&|r| r.load.as_ref()?.latency_us.p99)),
        p999_us: m
            .p999_us
            .or_else(|| med(&|r| r.load.as_ref()?.latency_us.p999)),
        error_rate: m.error_rate,
        valid: invalid_why.is_none(),
        invalid_why,
        rank: None,
        laps: ok.len(),
        failed_laps: failed,
    }
}

/// Why a row cannot be ranked, or `None` when it can.
fn why_invalid(target: f64, achieved: Option<f64>, ok: usize, failed: usize) -> Option<String> {
    if ok == 0 {
        return Some(format!("no lap succeeded ({failed} failed)"));
    }
    if failed > 0 {
        return Some(format!("{failed} of {} laps failed", ok + failed));
    }
    let achieved = achieved?;
    (achieved < VALID_SHARE * target).then(|| {
        format!(
            "achieved {achieved:.0} of {target:.0} req/s ({:.0}%, under {:.0}%)",
            100.0 * achieved / target,
            100.0 * VALID_SHARE
        )
    })
}

/// Ranks the valid rows with a CPU figure within each scenario × profile, cheapest first.
fn rank(rows: &mut [CostRow]) {
    let mut keys: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.scenario.clone(), r.profile.clone()))
        .collect();
    keys.dedup();
    for (scenario, profile) in keys {
        let mut idx: Vec<usize> = (0..rows.len())
            .filter(|&i| {
                let r = &rows[i];
                (&r.scenario, &r.profile) == (&scenario, &profile)
                    && r.valid
                    && r.total_cpu_us_per_request.is_some()
            })
            .collect();
        let cost = |r: &CostRow| r.total_cpu_us_per_request.unwrap_or(f64::INFINITY);
        idx.sort_by(|&a, &b| cost(&rows[a]).total_cmp(&cost(&rows[b])));
        let mut prev: Option<(f64, u32)> = None;
        for (pos, i) in idx.into_iter().enumerate() {
            let c = cost(&rows[i]);
            let r = match prev {
                Some((p, r)) if c <= p * (1.0 + TIE) => r,
                _ => pos as u32 + 1,
            };
            prev = Some((c, r));
            rows[i].rank = Some(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str, _: &str, _: &str) -> Merged {
        Merged::default()
    }
    use serverbench_results::record::{Measurement, ServerStats};

    fn lap(server: &str, scenario: &str, profile: &str, n: u32, rps: f64) -> LapRecord {
        let mut r = crate::fixture::lap();
        r.server = server.into();
        r.scenario = scenario.into();
        r.profile = profile.into();
        r.lap = n;
        r.load = Some(Measurement {
            rps: Some(rps),
            ..Measurement::default()
        });
        r
    }

    fn at_rate(server: &str, n: u32, target: f64, rps: f64, cpu_us: f64) -> LapRecord {
        let mut r = lap(server, "hello", "10k", n, rps);
        r.params.rate = Some(target);
        r.server_stats = Some(ServerStats {
            cpu_us_per_request: Some(cpu_us),
            rss_peak_mb: 10.0 + f64::from(n),
            cores_used: cpu_us * rps / 1e6,
            ..ServerStats::default()
        });
        r
    }

    #[test]
    fn rows_rank_by_cpu_per_request_and_leave_out_those_that_fell_behind() {
        let records = vec![
            at_rate("go/net-http", 1, 10_000.0, 9990.0, 30.0),
            at_rate("go/net-http", 2, 10_000.0, 9995.0, 32.0),
            at_rate("rust/hyper", 1, 10_000.0, 9999.0, 12.0),
            at_rate("python/slow", 1, 10_000.0, 6000.0, 5.0),
        ];
        let rows = cost_rows(&records, &none);
        let order: Vec<(&str, Option<u32>, bool)> = rows
            .iter()
            .map(|r| (r.server.as_str(), r.rank, r.valid))
            .collect();
        assert_eq!(
            order,
            vec![
                ("rust/hyper", Some(1), true),
                ("go/net-http", Some(2), true),
                ("python/slow", None, false),
            ]
        );
        assert_eq!(rows[1].server_cpu_us_per_request, Some(31.0));
        assert_eq!(rows[1].rss_peak_mb, Some(12.0));
        let why = rows[2].invalid_why.as_deref().unwrap();
        assert!(why.contains("achieved 6000 of 10000 req/s (60%"), "{why}");
    }

    #[test]
    fn the_databases_cpu_is_added_to_the_servers() {
        let mut r = at_rate("go/pgx", 1, 1000.0, 1000.0, 40.0);
        r.roles.insert(
            Role::Database,
            ServerStats {
                cpu_us_per_request: Some(60.0),
                ..ServerStats::default()
            },
        );
        let rows = cost_rows(&[r], &none);
        assert_eq!(rows[0].db_cpu_us_per_request, Some(60.0));
        assert_eq!(rows[0].total_cpu_us_per_request, Some(100.0));
    }

    #[test]
    fn a_failed_lap_makes_the_row_invalid_and_closed_loop_laps_have_no_row() {
        let mut failed = at_rate("node/http", 2, 10_000.0, 0.0, 0.0);
        failed.status = LapStatus::Failed;
        let records = vec![
            at_rate("node/http", 1, 10_000.0, 10_000.0, 50.0),
            failed,
            lap("node/http", "hello", "c100", 1, 30_000.0),
        ];
        let rows = cost_rows(&records, &none);
        assert_eq!(rows.len(), 1);
        assert!(!rows[0].valid);
        assert_eq!(rows[0].invalid_why.as_deref(), Some("1 of 2 laps failed"));
    }

    #[test]
    fn rows_within_two_percent_share_a_rank() {
        let records = vec![
            at_rate("a", 1, 100.0, 100.0, 10.0),
            at_rate("b", 1, 100.0, 100.0, 10.1),
            at_rate("c", 1, 100.0, 100.0, 20.0),
        ];
        let ranks: Vec<Option<u32>> = cost_rows(&records, &none).iter().map(|r| r.rank).collect();
        assert_eq!(ranks, vec![Some(1), Some(1), Some(3)]);
    }

    #[test]
    fn a_fixed_rate_table_ranks_no_one_by_req_per_second_and_has_no_speed_factor() {
        let records = vec![
            at_rate("a", 1, 100.0, 100.0, 10.0),
            at_rate("b", 1, 100.0, 99.0, 20.0),
        ];
        let s = crate::summary::summarize(&records, None);
        assert_eq!(s.tables[0].baseline, None);
        assert!(s.tables[0].servers.iter().all(|r| r.rank.is_none()));
        assert_eq!(s.cost[0].rank, Some(1));
    }
}
