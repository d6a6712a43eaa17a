//! The per-host breakdown of laps run over several machines (`run --hosts`): for each lap, what
//! every client host measured (its share of the requests, its own latency, CPU and start
//! offset) and what the lap as a whole records (the start skew, the controller's CPU). The main
//! tables show the merged figures; this is what reports put under them.

use serde::Serialize;
use serverbench_model::histo::{self, latency_of};
use serverbench_results::record::{ClientLap, LapRecord, LapStatus};

/// One lap over several machines.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostsLapSummary {
    pub scenario: String,
    pub profile: String,
    pub server: String,
    pub lap: u32,
    pub status: LapStatus,
    /// The host the server ran on.
    pub server_host: String,
    /// Spread of the client hosts' measurement starts (ms); `None` for a failed lap.
    pub start_skew_ms: Option<f64>,
    /// CPU seconds of the controller (serverbench and its ssh clients) during the lap.
    pub controller_cpu_s: f64,
    /// Every client host, in `--client-hosts` order (those that completed, for a failed lap).
    pub clients: Vec<HostSummary>,
}

/// One client host's share of one lap.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HostSummary {
    pub host: String,
    pub connections: Option<u32>,
    pub requests: Option<u64>,
    pub rps: Option<f64>,
    /// From the host's own histogram (its recorded figures when it has none).
    pub latency_p50_us: Option<f64>,
    pub latency_p99_us: Option<f64>,
    /// Errors plus non-2xx responses.
    pub errors: u64,
    pub client_cpu_s: Option<f64>,
    pub client_saturated: bool,
    /// Milliseconds after the earliest client host's measurement start.
    pub start_offset_ms: Option<f64>,
}

/// Every lap of `records` that ran over several machines, in record order.
pub fn breakdown(records: &[LapRecord]) -> Vec<HostsLapSummary> {
    records
        .iter()
        .filter_map(|r| {
            let h = r.hosts.as_ref()?;
            Some(HostsLapSummary {
                scenario: r.scenario.clone(),
                profile: r.profile.clone(),
                server: r.server.clone(),
                lap: r.lap,
                status: r.status,
                server_host: h.server_host.clone(),
                start_skew_ms: h.start_skew_ms,
                controller_cpu_s: h.controller_cpu_s,
                clients: h.clients.iter().map(host).collect(),
            })
        })
        .collect()
}

fn host(c: &ClientLap) -> HostSummary {
    let m = &c.load;
    let decoded = m
        .histograms
        .as_ref()
        .and_then(|h| histo::decode(&h.latency_us).ok())
        .filter(|h| !h.is_empty())
        .map(|h| latency_of(&h));
    let errors = m
        .errors_total
        .or_else(|| m.errors.as_ref().map(|e| e.total()))
        .unwrap_or(0);
    HostSummary {
        host: c.host.clone(),
        connections: c.connections,
        requests: m.requests,
        rps: m.rps,
        latency_p50_us: decoded.as_ref().map(|l| l.p50).or(m.latency_us.p50),
        latency_p99_us: decoded.map(|l| l.p99).or(m.latency_us.p99),
        errors: errors + m.non_2xx.unwrap_or(0),
        client_cpu_s: m.client_cpu_s,
        client_saturated: m.client_saturated == Some(true),
        start_offset_ms: c.start_offset_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::histo::new_histogram;
    use serverbench_model::result::Histograms;
    use serverbench_results::record::{HostsLap, Measurement};

    fn client(host: &str, samples: &[u64], offset: f64) -> ClientLap {
        let mut h = new_histogram();
        samples.iter().for_each(|&s| h.record(s).unwrap());
        ClientLap {
            host: host.into(),
            connections: Some(4),
            start_offset_ms: Some(offset),
            load: Measurement {
                requests: Some(samples.len() as u64),
                rps: Some(samples.len() as f64 / 2.0),
                errors_total: Some(1),
                non_2xx: Some(2),
                client_cpu_s: Some(0.5),
                client_saturated: Some(host.ends_with('2')),
                histograms: Some(Histograms {
                    latency_us: histo::encode(&h),
                    ..Histograms::default()
                }),
                ..Measurement::default()
            },
        }
    }

    #[test]
    fn each_client_hosts_figures_come_from_its_own_histogram() {
        let mut lap = crate::fixture::lap();
        lap.hosts = Some(HostsLap {
            server_host: "db".into(),
            start_skew_ms: Some(0.3),
            controller_cpu_s: 0.02,
            clients: vec![
                client("load1", &[100; 10], 0.0),
                client("load2", &[900; 30], 0.3),
            ],
        });
        let b = breakdown(&[crate::fixture::lap(), lap]);
        assert_eq!(b.len(), 1, "only laps over several machines");
        let (l, c) = (&b[0], &b[0].clients);
        assert_eq!((l.server_host.as_str(), l.start_skew_ms), ("db", Some(0.3)));
        assert_eq!(c[0].latency_p50_us, Some(100.0));
        assert_eq!(
            c[1].latency_p99_us,
            Some(900.0),
            "not the recorded (empty) summary"
        );
        assert_eq!((c[1].requests, c[1].errors), (Some(30), 3));
        assert_eq!(
            (c[0].client_saturated, c[1].client_saturated),
            (false, true)
        );
        assert_eq!(c[1].start_offset_ms, Some(0.3));
    }
}
