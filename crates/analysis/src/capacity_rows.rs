//! Capacity laps (`find_max` profiles) in a results folder: one row per server × scenario ×
//! profile with the median capacity over the laps and its interval (a percentile bootstrap of
//! the median from 3 laps, else the laps' min..max), ranked by it, and the curve of every step
//! of every lap (rate → p50/p99/p99.9, errors) for the latency-versus-load chart.

use crate::stats::{self, Interval};
use serde::Serialize;
use serverbench_model::capacity::{Ending, Step};
use serverbench_results::record::{LapRecord, LapStatus};

/// One server's capacity at one profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacityRow {
    pub server: String,
    pub scenario: String,
    pub profile: String,
    /// The goal, as written.
    pub slo: String,
    /// Median over the laps of the highest rate that met the goal.
    pub capacity_rps: Option<f64>,
    pub interval: Option<Interval>,
    /// Each lap's capacity, in lap order.
    pub lap_capacity: Vec<f64>,
    /// Median of the laps' lowest failing rates.
    pub failed_at_rps: Option<f64>,
    /// Median seconds a search took.
    pub search_s: Option<f64>,
    /// Median over the laps of the server tree's CPU µs per request at its capacity step
    /// (what a request costs at the highest rate it holds); `None` where the search could not
    /// read the server's process.
    #[serde(default)]
    pub server_cpu_us_per_request: Option<f64>,
    /// Why each lap's search stopped.
    pub endings: Vec<Ending>,
    /// Some lap stopped at the client's limit: the capacity is a lower bound.
    pub client_limited: bool,
    /// Median over the laps that met it of the client's open-loop ceiling (the most it sent
    /// in a step it could not keep), requests/s.
    #[serde(default)]
    pub client_ceiling_rps: Option<f64>,
    /// Every step of every successful lap, by rate.
    pub curve: Vec<Step>,
    pub rank: Option<u32>,
    pub laps: usize,
    pub failed_laps: usize,
}

/// Every capacity lap's row, grouped by scenario × profile in the order they first appear,
/// ranked (highest capacity first) within each.
pub fn capacity_rows(records: &[LapRecord]) -> Vec<CapacityRow> {
    let mut groups: Vec<(Key, Vec<&LapRecord>)> = Vec::new();
    for r in records.iter().filter(|r| r.params.find_max.is_some()) {
        let key = (r.scenario.clone(), r.profile.clone(), r.server.clone());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, laps)) => laps.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    let mut rows: Vec<CapacityRow> = groups.iter().map(|(_, laps)| row(laps)).collect();
    let mut cells: Vec<(String, String)> = Vec::new();
    for r in &rows {
        let k = (r.scenario.clone(), r.profile.clone());
        if !cells.contains(&k) {
            cells.push(k);
        }
    }
    for (scenario, profile) in &cells {
        let idx: Vec<usize> = (0..rows.len())
            .filter(|&i| (&rows[i].scenario, &rows[i].profile) == (scenario, profile))
            .collect();
        let items: Vec<(f64, Option<Interval>)> = idx
            .iter()
            .map(|&i| (rows[i].capacity_rps.unwrap_or(f64::NAN), rows[i].interval))
            .collect();
        for (&i, rank) in idx.iter().zip(stats::rank(&items)) {
            rows[i].rank = rank;
        }
    }
    let pos = |r: &CapacityRow| {
        cells
            .iter()
            .position(|k| (&k.0, &k.1) == (&r.scenario, &r.profile))
    };
    rows.sort_by(|a, b| {
        pos(a)
            .cmp(&pos(b))
            .then(a.rank.unwrap_or(u32::MAX).cmp(&b.rank.unwrap_or(u32::MAX)))
            .then(a.server.cmp(&b.server))
    });
    rows
}

/// Scenario, profile, server.
type Key = (String, String, String);

fn row(laps: &[&LapRecord]) -> CapacityRow {
    let first = laps[0];
    let searches: Vec<_> = laps
        .iter()
        .filter(|r| r.status == LapStatus::Ok)
        .filter_map(|r| r.load.as_ref()?.capacity.as_ref())
        .collect();
    let lap_capacity: Vec<f64> = searches.iter().filter_map(|c| c.capacity_rps).collect();
    let failed: Vec<f64> = searches.iter().filter_map(|c| c.failed_at_rps).collect();
    let secs: Vec<f64> = searches.iter().map(|c| c.search_s).collect();
    let ceiling: Vec<f64> = searches
        .iter()
        .filter_map(|c| c.client_ceiling_rps)
        .collect();
    let cpu: Vec<f64> = searches
        .iter()
        .filter_map(|c| c.capacity_step()?.server_cpu_us_per_request)
        .collect();
    let mut curve: Vec<Step> = searches.iter().flat_map(|c| c.steps.clone()).collect();
    curve.sort_by(|a, b| a.rate_target.total_cmp(&b.rate_target));
    let seed = stats::seed_for(&format!(
        "{}/{}/{}",
        first.server, first.scenario, first.profile
    ));
    CapacityRow {
        server: first.server.clone(),
        scenario: first.scenario.clone(),
        profile: first.profile.clone(),
        slo: first
            .params
            .find_max
            .as_ref()
            .map_or(String::new(), |f| f.slo.to_string()),
        capacity_rps: stats::median(&lap_capacity),
        interval: stats::bootstrap_median_ci(
            &lap_capacity,
            stats::DEFAULT_CONFIDENCE,
            stats::DEFAULT_RESAMPLES,
            seed,
        ),
        lap_capacity,
        failed_at_rps: stats::median(&failed),
        search_s: stats::median(&secs),
        server_cpu_us_per_request: stats::median(&cpu),
        endings: searches.iter().map(|c| c.ending).collect(),
        client_limited: searches.iter().any(|c| c.ending == Ending::ClientLimit),
        client_ceiling_rps: stats::median(&ceiling),
        curve,
        rank: None,
        laps: searches.len(),
        failed_laps: laps.len() - searches.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::capacity::{CapacityResult, FindMax};
    use serverbench_results::record::Measurement;

    fn search_lap(server: &str, n: u32, capacity: f64, ending: Ending) -> LapRecord {
        let mut r = crate::fixture::lap();
        r.server = server.into();
        r.profile = "p99 5ms".into();
        r.lap = n;
        let slo: serverbench_model::Slo = "p99<=5ms".parse().unwrap();
        r.params.find_max = Some(FindMax {
            slo: slo.clone(),
            precision: None,
            max_steps: None,
            start_rate: None,
        });
        let step = |rate: f64, met: bool| Step {
            rate_target: rate,
            rate_achieved: rate,
            p99_us: if met { 1000.0 } else { 9000.0 },
            // The server's CPU per request: 1 ms of CPU per second over the rate.
            server_cpu_us_per_request: Some(1e6 / rate),
            met,
            ..Step::default()
        };
        let c = CapacityResult {
            target: vec![],
            mode: serverbench_model::Mode::Http,
            slo,
            precision: 0.05,
            max_steps: 20,
            capacity_rps: Some(capacity),
            failed_at_rps: Some(capacity * 1.04),
            client_ceiling_rps: (ending == Ending::ClientLimit).then_some(capacity * 1.1),
            ending,
            note: None,
            search_s: 20.0,
            steps: vec![step(capacity * 1.04, false), step(capacity, true)],
        };
        r.load = Some(Measurement::from(&c));
        r
    }

    #[test]
    fn capacity_is_the_median_over_laps_with_its_range_and_ranks_highest_first() {
        let records = vec![
            search_lap("slow", 1, 1000.0, Ending::Converged),
            search_lap("fast", 1, 9000.0, Ending::Converged),
            search_lap("slow", 2, 1100.0, Ending::Converged),
            search_lap("fast", 2, 9500.0, Ending::ClientLimit),
        ];
        let rows = capacity_rows(&records);
        assert_eq!(rows[0].server, "fast");
        assert_eq!(rows[0].rank, Some(1));
        assert!(rows[0].client_limited);
        assert_eq!(rows[0].client_ceiling_rps, Some(9500.0 * 1.1));
        assert_eq!(rows[1].client_ceiling_rps, None);
        assert_eq!(rows[1].capacity_rps, Some(1050.0));
        let i = rows[1].interval.unwrap();
        assert_eq!((i.low, i.high), (1000.0, 1100.0));
        assert_eq!(rows[1].slo, "p99<=5ms");
        let rates: Vec<f64> = rows[1].curve.iter().map(|s| s.rate_target).collect();
        assert_eq!(rates, vec![1000.0, 1040.0, 1100.0, 1144.0]);
        // The median of the capacity steps' (1000/s: 1000 µs, 1100/s: 909 µs), not of every step.
        let cpu = rows[1].server_cpu_us_per_request.unwrap();
        assert!((cpu - (1000.0 + 1e6 / 1100.0) / 2.0).abs() < 0.01, "{cpu}");
    }

    #[test]
    fn laps_without_a_search_have_no_capacity_row() {
        assert!(capacity_rows(&[crate::fixture::lap()]).is_empty());
    }
}
