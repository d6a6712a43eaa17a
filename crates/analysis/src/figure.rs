//! The one figure a lap is ranked, repeated (`--until-ci`) and compared by: req/s closed loop,
//! the capacity of a `find_max` search, and at a fixed rate the CPU a request cost (every
//! server answers the rate asked for, so its req/s says nothing about the server).

use serde::Serialize;
use serverbench_results::record::LapRecord;
use serverbench_results::Role;

/// What a lap's figure measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// Requests per second, closed loop (bigger is better).
    Rps,
    /// The highest rate that met a capacity search's goal (bigger is better).
    Capacity,
    /// CPU µs per request of the server's tree plus the database's, at a fixed rate (smaller
    /// is better).
    CpuPerRequest,
}

impl Figure {
    /// Whether a larger value is an improvement.
    pub fn bigger_is_better(self) -> bool {
        !matches!(self, Figure::CpuPerRequest)
    }

    /// The unit in tables: `req/s`, `capacity/s`, `µs/req`.
    pub fn unit(self) -> &'static str {
        match self {
            Figure::Rps => "req/s",
            Figure::Capacity => "capacity/s",
            Figure::CpuPerRequest => "µs/req",
        }
    }
}

/// CPU µs per request of the lap's server tree plus its database's (where one ran).
pub fn lap_cost(r: &LapRecord) -> Option<f64> {
    let server = r.stats(Role::Server)?.cpu_us_per_request?;
    let db = r.stats(Role::Database).and_then(|s| s.cpu_us_per_request);
    Some(server + db.unwrap_or(0.0)).filter(|v| v.is_finite())
}

/// The lap's figure: a capacity search's capacity; a fixed-rate lap's CPU per request (its
/// req/s when no CPU was read); else its req/s (from its requests and duration when the tool
/// gave no rate).
pub fn lap_figure(r: &LapRecord) -> Option<(Figure, f64)> {
    let m = r.load.as_ref()?;
    if let Some(c) = &m.capacity {
        return c.capacity_rps.map(|v| (Figure::Capacity, v));
    }
    if let (Some(_), Some(cost)) = (r.params.rate, lap_cost(r)) {
        return Some((Figure::CpuPerRequest, cost));
    }
    let rps = m.rps.or_else(|| {
        let d = m.duration_s.filter(|d| *d > 0.0)?;
        Some(m.requests? as f64 / d)
    });
    rps.filter(|v| v.is_finite()).map(|v| (Figure::Rps, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_is_figured_by_its_capacity_and_a_fixed_rate_lap_by_its_cpu_per_request() {
        use serverbench_model::capacity::{CapacityResult, Ending};
        use serverbench_results::record::Measurement;
        let mut closed = crate::fixture::lap();
        closed.load = Some(Measurement {
            rps: Some(900.0),
            ..Default::default()
        });
        assert_eq!(lap_figure(&closed), Some((Figure::Rps, 900.0)));

        let mut at_rate = closed.clone();
        at_rate.params.rate = Some(1000.0);
        assert_eq!(
            lap_figure(&at_rate),
            Some((Figure::Rps, 900.0)),
            "no CPU read: its req/s"
        );
        let mut stats = serverbench_results::ProcessStats {
            cpu_us_per_request: Some(40.0),
            ..Default::default()
        };
        at_rate.set_stats(Role::Server, stats.clone());
        stats.cpu_us_per_request = Some(15.0);
        at_rate.set_stats(Role::Database, stats);
        assert_eq!(lap_figure(&at_rate), Some((Figure::CpuPerRequest, 55.0)));
        assert_eq!(lap_cost(&at_rate), Some(55.0));

        let mut search = crate::fixture::lap();
        search.load = Some(Measurement {
            rps: Some(1990.0),
            capacity: Some(CapacityResult {
                target: vec![],
                mode: serverbench_model::Mode::Http,
                slo: "p99<=5ms".parse().unwrap(),
                precision: 0.05,
                max_steps: 20,
                capacity_rps: Some(2000.0),
                failed_at_rps: None,
                client_ceiling_rps: None,
                ending: Ending::Converged,
                note: None,
                search_s: 1.0,
                steps: vec![],
            }),
            ..Default::default()
        });
        assert_eq!(lap_figure(&search), Some((Figure::Capacity, 2000.0)));
    }
}
