//! Laps that ran a weighted mix (`mix` in a suite scenario): one row per server x scenario x
//! profile x entry, with the share of requests the entry asked for (its weight) and got, its
//! req/s (median over the laps), its p50 and p99 from the laps' histograms of that entry
//! merged (exact; the median of the laps' own figures for laps without histograms) and its
//! errors over every lap.

use crate::stats;
use serde::Serialize;
use serverbench_model::histo;
use serverbench_model::result::MixEntryResult;
use serverbench_results::record::{LapRecord, LapStatus, Measurement};

/// One entry of a mix, for one server x scenario x profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MixRow {
    pub server: String,
    pub scenario: String,
    pub profile: String,
    /// The entry's name in the mix file.
    pub entry: String,
    /// Its weight over the mix's total: the share of requests asked for.
    pub weight_share: f64,
    /// Its requests over every entry's, all laps together: the share it got.
    pub share: Option<f64>,
    /// req/s of this entry, median over the laps.
    pub rps: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// Errors counted on this entry over every lap.
    pub errors: u64,
    /// Successful laps with this entry.
    pub laps: usize,
}

/// The mix rows of `records`, in the order the laps first appear and the mix's order.
pub fn mix_rows(records: &[LapRecord]) -> Vec<MixRow> {
    let mut groups: Vec<(&LapRecord, Vec<&Measurement>)> = Vec::new();
    for r in records.iter().filter(|r| r.status == LapStatus::Ok) {
        let Some(load) = r.load.as_ref().filter(|l| !l.mix.is_empty()) else {
            continue;
        };
        let same = |(g, _): &&mut (&LapRecord, Vec<&Measurement>)| {
            (&g.server, &g.scenario, &g.profile) == (&r.server, &r.scenario, &r.profile)
        };
        match groups.iter_mut().find(same) {
            Some((_, laps)) => laps.push(load),
            None => groups.push((r, vec![load])),
        }
    }
    groups
        .into_iter()
        .flat_map(|(first, laps)| rows_of(first, &laps))
        .collect()
}

fn rows_of(first: &LapRecord, laps: &[&Measurement]) -> Vec<MixRow> {
    let entries: &[MixEntryResult] = &laps[0].mix;
    let laps: Vec<&Measurement> = laps
        .iter()
        .copied()
        .filter(|l| l.mix.len() == entries.len())
        .collect();
    let total_weight: f64 = entries.iter().map(|e| e.weight).sum();
    let all: u64 = laps.iter().flat_map(|l| &l.mix).map(|e| e.requests).sum();
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let requests: u64 = laps.iter().map(|l| l.mix[i].requests).sum();
            let rps: Vec<f64> = laps
                .iter()
                .filter_map(|l| Some(l.mix[i].requests as f64 / l.duration_s.filter(|d| *d > 0.0)?))
                .collect();
            let (p50, p99) = latency(&laps, i);
            MixRow {
                server: first.server.clone(),
                scenario: first.scenario.clone(),
                profile: first.profile.clone(),
                entry: e.name.clone(),
                weight_share: if total_weight > 0.0 {
                    e.weight / total_weight
                } else {
                    0.0
                },
                share: (all > 0).then(|| requests as f64 / all as f64),
                rps: stats::median(&rps),
                p50_us: p50,
                p99_us: p99,
                errors: laps.iter().map(|l| l.mix[i].errors.total()).sum(),
                laps: laps.len(),
            }
        })
        .collect()
}

/// Entry `i`'s p50 and p99: from the merged histograms when every lap has one, else the
/// median of the laps' figures.
fn latency(laps: &[&Measurement], i: usize) -> (Option<f64>, Option<f64>) {
    let texts: Option<Vec<&str>> = laps
        .iter()
        .map(|l| Some(l.histograms.as_ref()?.mix_latency_us.get(i)?.as_str()))
        .collect();
    if let Some(h) = texts
        .and_then(|t| histo::merge(t).ok())
        .filter(|h| !h.is_empty())
    {
        let l = histo::latency_of(&h);
        return (Some(l.p50), Some(l.p99));
    }
    let of = |f: fn(&MixEntryResult) -> f64| {
        let v: Vec<f64> = laps
            .iter()
            .filter(|l| l.mix[i].requests > 0)
            .map(|l| f(&l.mix[i]))
            .collect();
        stats::median(&v)
    };
    (of(|e| e.latency_us.p50), of(|e| e.latency_us.p99))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::histo::new_histogram;
    use serverbench_model::result::Histograms;

    fn lap(n: u32, a: (u64, u64), b: (u64, u64)) -> LapRecord {
        let mut r = crate::fixture::lap();
        r.lap = n;
        r.load = Some(Measurement::default());
        let entry = |name: &str, weight: f64, (requests, _): (u64, u64)| MixEntryResult {
            name: name.into(),
            weight,
            requests,
            ..Default::default()
        };
        let hist = |(requests, us): (u64, u64)| {
            let mut h = new_histogram();
            h.record_n(us, requests).unwrap();
            histo::encode(&h)
        };
        let load = r.load.as_mut().unwrap();
        load.duration_s = Some(2.0);
        load.mix = vec![entry("a", 3.0, a), entry("b", 1.0, b)];
        load.histograms = Some(Histograms {
            mix_latency_us: vec![hist(a), hist(b)],
            ..Histograms::default()
        });
        r
    }

    #[test]
    fn each_entry_gets_its_shares_median_rate_and_merged_percentiles() {
        let rows = mix_rows(&[
            lap(1, (300, 100), (100, 1000)),
            lap(2, (500, 100), (100, 9000)),
        ]);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].entry.as_str(), rows[0].weight_share), ("a", 0.75));
        assert_eq!(rows[0].share, Some(0.8));
        assert_eq!(rows[0].rps, Some(200.0));
        assert_eq!(rows[1].p50_us, Some(1000.0));
        assert!(rows[1].p99_us.unwrap() >= 8990.0, "{:?}", rows[1].p99_us);
        assert_eq!(rows[1].laps, 2);
    }
}
