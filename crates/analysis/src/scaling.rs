//! Core scaling: in a core sweep (each server run at several server CPU counts, `WORKERS`
//! following), req/s against cores per server and the scaling efficiency
//! `rps(N) / (N/m x rps(m))`, where m is the smallest count measured (1 normally), so 1.00 is
//! perfect linear scaling. The interval of the efficiency is the bootstrap interval of the ratio
//! of medians `rps(N) / rps(m)` ([`stats::bootstrap_ratio_ci`], each side's laps resampled
//! independently), divided by N/m.

use crate::stats::{self, Interval};
use serde::Serialize;
use serverbench_results::record::{LapRecord, LapStatus};

/// One server's curve in one scenario x profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scaling {
    pub scenario: String,
    /// The profile without its `/Ncpu` suffix.
    pub profile: String,
    pub server: String,
    /// One point per CPU count, ascending.
    pub points: Vec<ScalePoint>,
}

/// req/s at one CPU count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalePoint {
    pub cpus: u32,
    /// Median req/s over the successful laps.
    pub rps: f64,
    pub laps: usize,
    /// `rps(N) / (N/m x rps(m))`; 1.00 at the smallest count.
    pub efficiency: f64,
    pub efficiency_interval: Option<Interval>,
    /// The client's CPU was saturated in some lap (the figure is a lower bound).
    pub client_saturated: bool,
}

/// scenario, base profile, server, CPU count.
type PointKey = (String, String, String, u32);

/// The base profile label of a swept lap (`c100/10s/2cpu` → `c100/10s`).
fn base_profile(r: &LapRecord, cpus: u32) -> String {
    let suffix = format!("/{cpus}cpu");
    r.profile
        .strip_suffix(&suffix)
        .unwrap_or(&r.profile)
        .to_owned()
}

/// Every server's scaling curve, for the laps of a core sweep (`params.server_cpus` set); curves
/// with a single CPU count are left out.
pub fn scaling(records: &[LapRecord]) -> Vec<Scaling> {
    let mut out: Vec<Scaling> = Vec::new();
    let mut laps: Vec<(PointKey, Vec<&LapRecord>)> = Vec::new();
    for r in records.iter().filter(|r| r.status == LapStatus::Ok) {
        let Some(n) = r.params.server_cpus else {
            continue;
        };
        let key = (r.scenario.clone(), base_profile(r, n), r.server.clone(), n);
        match laps.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => laps.push((key, vec![r])),
        }
    }
    for ((scenario, profile, server, n), rs) in laps {
        let curve = match out
            .iter_mut()
            .find(|c| (&c.scenario, &c.profile, &c.server) == (&scenario, &profile, &server))
        {
            Some(c) => c,
            None => {
                out.push(Scaling {
                    scenario,
                    profile,
                    server,
                    points: Vec::new(),
                });
                out.last_mut().expect("just pushed")
            }
        };
        curve.points.push(point(n, &rs));
    }
    for c in &mut out {
        c.points.sort_by_key(|p| p.cpus);
        efficiencies(c, records);
    }
    out.retain(|c| c.points.len() > 1);
    out
}

fn lap_rps(r: &LapRecord) -> Option<f64> {
    r.load.as_ref()?.rps.filter(|x| x.is_finite())
}

fn point(cpus: u32, laps: &[&LapRecord]) -> ScalePoint {
    let rps: Vec<f64> = laps.iter().filter_map(|r| lap_rps(r)).collect();
    ScalePoint {
        cpus,
        rps: stats::median(&rps).unwrap_or(f64::NAN),
        laps: rps.len(),
        efficiency: f64::NAN,
        efficiency_interval: None,
        client_saturated: laps
            .iter()
            .any(|r| r.load.as_ref().and_then(|m| m.client_saturated) == Some(true)),
    }
}

/// The laps' req/s of one point of a curve.
fn point_laps(c: &Scaling, cpus: u32, records: &[LapRecord]) -> Vec<f64> {
    records
        .iter()
        .filter(|r| r.status == LapStatus::Ok && r.server == c.server && r.scenario == c.scenario)
        .filter(|r| r.params.server_cpus == Some(cpus) && base_profile(r, cpus) == c.profile)
        .filter_map(lap_rps)
        .collect()
}

fn efficiencies(c: &mut Scaling, records: &[LapRecord]) {
    let Some(first) = c.points.first().map(|p| (p.cpus, p.rps)) else {
        return;
    };
    let (m, base_rps) = first;
    let base_laps = point_laps(c, m, records);
    let seed = stats::seed_for(&format!(
        "{}/{}/{}/scaling",
        c.scenario, c.profile, c.server
    ));
    let intervals: Vec<Option<Interval>> = c
        .points
        .iter()
        .map(|p| {
            let scale = f64::from(p.cpus) / f64::from(m);
            let laps = point_laps(c, p.cpus, records);
            let ci = stats::bootstrap_ratio_ci(
                &base_laps,
                &laps,
                stats::DEFAULT_CONFIDENCE,
                stats::DEFAULT_RESAMPLES,
                seed,
            );
            ci.filter(|_| p.cpus != m).map(|i| Interval {
                low: i.low / scale,
                high: i.high / scale,
                method: i.method,
            })
        })
        .collect();
    for (p, ci) in c.points.iter_mut().zip(intervals) {
        let scale = f64::from(p.cpus) / f64::from(m);
        p.efficiency = p.rps / (scale * base_rps);
        p.efficiency_interval = ci;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::Tool;
    use serverbench_results::record::{LoadParams, Measurement};

    /// A lap of `server` at `cpus` CPUs measuring `rps`, as a core sweep records it.
    fn lap(server: &str, cpus: u32, lap: u32, rps: f64) -> LapRecord {
        LapRecord {
            suite: "sweep".into(),
            server: server.into(),
            scenario: "hello".into(),
            profile: format!("c100/10s/{cpus}cpu"),
            lap,
            status: LapStatus::Ok,
            failure: None,
            tool: Tool::Serverbench,
            started_at: "2026-11-23T00:00:00Z".into(),
            wall_s: 10.0,
            params: LoadParams {
                server_cpus: Some(cpus),
                ..LoadParams::default()
            },
            load: Some(Measurement {
                rps: Some(rps),
                ..Measurement::default()
            }),
            server_stats: None,
            roles: Default::default(),
            database: None,
            hosts: None,
            disturbance: None,
        }
    }

    #[test]
    fn efficiency_is_the_speed_up_over_the_cores_added() {
        let mut records = Vec::new();
        for l in 1..=3 {
            records.push(lap("a", 1, l, 1000.0 + f64::from(l)));
            records.push(lap("a", 2, l, 1800.0 + f64::from(l)));
            records.push(lap("a", 4, l, 2000.0 + f64::from(l)));
        }
        let s = scaling(&records);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].profile, "c100/10s");
        let e: Vec<(u32, f64)> = s[0].points.iter().map(|p| (p.cpus, p.efficiency)).collect();
        assert_eq!(e[0], (1, 1.0));
        assert!((e[1].1 - 1802.0 / (2.0 * 1002.0)).abs() < 1e-9, "{e:?}");
        assert!((e[2].1 - 2002.0 / (4.0 * 1002.0)).abs() < 1e-9, "{e:?}");
        let ci = s[0].points[1].efficiency_interval.expect("an interval");
        assert!(ci.low <= e[1].1 && e[1].1 <= ci.high, "{ci:?}");
        assert!(s[0].points[0].efficiency_interval.is_none());
    }

    #[test]
    fn laps_outside_a_sweep_or_with_one_count_make_no_curve() {
        let mut plain = lap("a", 1, 1, 1000.0);
        plain.params.server_cpus = None;
        assert!(scaling(&[plain, lap("b", 1, 1, 10.0), lap("b", 1, 2, 11.0)]).is_empty());
    }

    #[test]
    fn scaling_is_computed_from_a_recorded_results_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let mut w = serverbench_results::ResultsWriter::open(&path).unwrap();
        for l in 1..=2 {
            w.append(&lap("x", 1, l, 500.0)).unwrap();
            w.append(&lap("x", 2, l, 750.0)).unwrap();
        }
        let records = serverbench_results::read_records(&path).unwrap();
        let s = scaling(&records);
        assert_eq!(s[0].points[1].efficiency, 0.75);
    }
}
