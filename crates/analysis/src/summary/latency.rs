//! A cell's latency percentiles across its laps.
//!
//! When every successful lap carries its latency HdrHistogram (serverbench's own engine, one
//! host or several), the laps' histograms are added exactly and every percentile is read from
//! the sum: the p99 of all the cell's requests. A mean or median of per-lap p99s is not that
//! figure (a slow lap's tail weighs as much as a fast lap's). Where some lap has no histogram
//! (external tools: wrk, ab, ...), each percentile is the median of the laps' figures, as
//! before, the max the largest lap max, and [`LatencySource`] says so.

use super::OkLap;
use crate::stats;
use serde::Serialize;
use serverbench_model::histo::{self, latency_of};

/// Where a cell's latency percentiles come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LatencySource {
    /// The exact merge of every lap's histogram.
    Merged,
    /// The median over laps of each lap's percentile (some lap had no histogram).
    PerLapMedian,
}

impl LatencySource {
    /// `merged` or `per-lap-median`: its name in JSON and CSV.
    pub fn name(self) -> &'static str {
        match self {
            LatencySource::Merged => "merged",
            LatencySource::PerLapMedian => "per-lap-median",
        }
    }

    /// `merged` or `per-lap median`, as reports print it.
    pub fn label(self) -> &'static str {
        match self {
            LatencySource::Merged => "merged",
            LatencySource::PerLapMedian => "per-lap median",
        }
    }
}

/// The latency figures of a cell, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CellLatency {
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub max: Option<f64>,
    /// `None` when no lap measured latency.
    pub source: Option<LatencySource>,
}

/// The latency of a cell over its successful laps: merged when every lap has a histogram that
/// decodes, otherwise per-lap medians.
pub(crate) fn cell_latency(laps: &[OkLap]) -> CellLatency {
    merged(laps).unwrap_or_else(|| per_lap_median(laps))
}

fn merged(laps: &[OkLap]) -> Option<CellLatency> {
    let texts: Vec<&str> = laps
        .iter()
        .map(|(_, m)| m.histograms.as_ref().map(|h| h.latency_us.as_str()))
        .collect::<Option<_>>()?;
    let h = histo::merge(texts).ok().filter(|h| !h.is_empty())?;
    let l = latency_of(&h);
    Some(CellLatency {
        p50: Some(l.p50),
        p90: Some(l.p90),
        p99: Some(l.p99),
        p999: Some(l.p999),
        max: Some(l.max),
        source: Some(LatencySource::Merged),
    })
}

fn per_lap_median(laps: &[OkLap]) -> CellLatency {
    let median = |f: fn(&serverbench_results::record::LatencySummary) -> Option<f64>| {
        let v: Vec<f64> = laps
            .iter()
            .filter_map(|(_, m)| f(&m.latency_us))
            .filter(|x| x.is_finite())
            .collect();
        stats::median(&v)
    };
    let max = laps
        .iter()
        .filter_map(|(_, m)| m.latency_us.max)
        .filter(|x| x.is_finite())
        .reduce(f64::max);
    let mut l = CellLatency {
        p50: median(|l| l.p50),
        p90: median(|l| l.p90),
        p99: median(|l| l.p99),
        p999: median(|l| l.p999),
        max,
        source: None,
    };
    let any = [l.p50, l.p90, l.p99, l.p999, l.max]
        .iter()
        .any(Option::is_some);
    l.source = any.then_some(LatencySource::PerLapMedian);
    l
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::histo::new_histogram;
    use serverbench_model::result::Histograms;
    use serverbench_results::record::Measurement;

    /// A lap's measurement holding exactly `samples` (µs), as the engine records it.
    fn measured(samples: &[u64]) -> Measurement {
        let mut h = new_histogram();
        for &s in samples {
            h.record(s).unwrap();
        }
        Measurement {
            latency_us: (&latency_of(&h)).into(),
            histograms: Some(Histograms {
                latency_us: histo::encode(&h),
                ..Histograms::default()
            }),
            ..Measurement::default()
        }
    }

    /// Three laps: two fast ones and a slow one with a long tail.
    fn laps() -> Vec<Vec<u64>> {
        let fast: Vec<u64> = (0..1000).map(|i| 100 + i % 50).collect();
        let slow: Vec<u64> = (0..1000)
            .map(|i| if i % 10 == 0 { 20_000 + i } else { 300 })
            .collect();
        vec![fast.clone(), fast, slow]
    }

    #[test]
    fn a_cells_p99_is_the_p99_of_one_histogram_of_every_laps_samples() {
        let samples = laps();
        let r = crate::fixture::lap();
        let ms: Vec<Measurement> = samples.iter().map(|s| measured(s)).collect();
        let ok: Vec<OkLap> = ms.iter().map(|m| (&r, m)).collect();
        let got = cell_latency(&ok);
        let mut all = new_histogram();
        samples
            .iter()
            .flatten()
            .for_each(|&s| all.record(s).unwrap());
        let want = latency_of(&all);
        assert_eq!(got.source, Some(LatencySource::Merged));
        assert_eq!(
            (got.p50, got.p90, got.p99, got.p999, got.max),
            (
                Some(want.p50),
                Some(want.p90),
                Some(want.p99),
                Some(want.p999),
                Some(want.max)
            )
        );
        let p99s: Vec<f64> = ms.iter().map(|m| m.latency_us.p99.unwrap()).collect();
        let mean = p99s.iter().sum::<f64>() / p99s.len() as f64;
        assert_ne!(
            got.p99,
            Some(mean),
            "the mean of per-lap p99s is another figure"
        );
        assert_ne!(got.p99, stats::median(&p99s), "and so is their median");
    }

    #[test]
    fn a_lap_without_a_histogram_keeps_the_per_lap_median_and_says_so() {
        let samples = laps();
        let r = crate::fixture::lap();
        let mut ms: Vec<Measurement> = samples.iter().map(|s| measured(s)).collect();
        ms[1].histograms = None;
        let ok: Vec<OkLap> = ms.iter().map(|m| (&r, m)).collect();
        let got = cell_latency(&ok);
        let p99s: Vec<f64> = ms.iter().map(|m| m.latency_us.p99.unwrap()).collect();
        assert_eq!(got.source, Some(LatencySource::PerLapMedian));
        assert_eq!(got.p99, stats::median(&p99s));
        assert_eq!(got.max, ms[2].latency_us.max, "the largest lap max");
    }

    #[test]
    fn a_sources_name_is_its_json_value() {
        for l in [LatencySource::Merged, LatencySource::PerLapMedian] {
            assert_eq!(serde_json::to_value(l).unwrap(), l.name());
        }
    }

    #[test]
    fn laps_without_any_latency_have_no_source() {
        let r = crate::fixture::lap();
        let m = Measurement::default();
        assert_eq!(cell_latency(&[(&r, &m)]), CellLatency::default());
        assert_eq!(cell_latency(&[]), CellLatency::default());
    }
}
