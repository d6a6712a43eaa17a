//! Synthetic results folders with known levels and noise: what the tests, the CLI's tests and
//! `bench/history.sh` record into a history. Not measurements: never mix them with real runs.

use serverbench_analysis::stats::SplitMix64;
use serverbench_model::Tool;
use serverbench_results::env::{Env, Git, Machine};
use serverbench_results::record::{
    LapRecord, LapStatus, LatencySummary, LoadParams, Measurement, ServerStats,
};
use serverbench_results::{ResultsError, ResultsWriter, ENV_FILE, RESULTS_FILE};
use std::path::{Path, PathBuf};

/// One synthetic run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Suite name.
    pub suite: String,
    /// Servers and their median req/s (with `rate`: their median CPU µs per request).
    pub servers: Vec<(String, f64)>,
    /// Laps per cell.
    pub laps: u32,
    /// Relative lap-to-lap noise (0.02 for 2%).
    pub cv: f64,
    /// Seed of the noise.
    pub seed: u64,
    /// Seconds after 2026-01-01T00:00:00Z the run started.
    pub at_s: u64,
    /// The commit measured.
    pub commit: Option<String>,
    /// Connections (a different count is a different series).
    pub connections: u32,
    /// A fixed-rate run: every lap at this many req/s, its servers' levels their cost.
    pub rate: Option<f64>,
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            suite: "quick".into(),
            servers: vec![("mine".into(), 100_000.0)],
            laps: 5,
            cv: 0.02,
            seed: 1,
            at_s: 0,
            commit: None,
            connections: 64,
            rate: None,
        }
    }
}

impl RunSpec {
    /// A run of one server, `mine`, at a fixed `rate` whose requests cost about `cpu_us` each.
    pub fn at_rate(cpu_us: f64, rate: f64, seed: u64) -> RunSpec {
        RunSpec {
            servers: vec![("mine".into(), cpu_us)],
            rate: Some(rate),
            seed,
            ..RunSpec::default()
        }
    }
}

/// The RFC 3339 time `s` seconds after 2026-01-01T00:00:00Z.
fn time(s: u64) -> String {
    let days = s / 86_400;
    let (mut month, mut day) = (1u64, 1 + days);
    const LEN: [u64; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    while month <= 12 && day > LEN[month as usize - 1] {
        day -= LEN[month as usize - 1];
        month += 1;
    }
    let year = 2026 + (month - 1) / 12;
    let month = (month - 1) % 12 + 1;
    let r = s % 86_400;
    format!(
        "{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        r / 3600,
        r / 60 % 60,
        r % 60
    )
}

fn normal(rng: &mut SplitMix64) -> f64 {
    let u = |r: &mut SplitMix64| (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let (a, b) = (u(rng).max(1e-12), u(rng));
    (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
}

/// One successful lap of `server` at about `rps`.
pub fn lap(spec: &RunSpec, server: &str, lap: u32, rps: f64) -> LapRecord {
    let p99 = 64.0 * 1e6 / rps * 2.5;
    LapRecord {
        suite: spec.suite.clone(),
        server: server.into(),
        scenario: "hello".into(),
        profile: format!("c{}", spec.connections),
        lap,
        status: LapStatus::Ok,
        failure: None,
        tool: Tool::Serverbench,
        started_at: time(spec.at_s + u64::from(lap) * 10),
        wall_s: 10.0,
        params: LoadParams {
            work: serverbench_model::spec::Work {
                paths: vec!["/hello".into()],
                ..Default::default()
            },
            connections: spec.connections,
            threads: 1,
            duration_s: Some(10.0),
            ..LoadParams::default()
        },
        load: Some(Measurement {
            requests: Some((rps * 10.0) as u64),
            duration_s: Some(10.0),
            rps: Some(rps),
            latency_us: LatencySummary {
                p99: Some(p99),
                ..LatencySummary::default()
            },
            ..Measurement::default()
        }),
        server_stats: None,
        roles: Default::default(),
        database: None,
        hosts: None,
        disturbance: None,
    }
}

/// One successful lap of `server` at the spec's fixed rate, its server's CPU µs per request
/// about `cpu_us`.
pub fn lap_at_rate(spec: &RunSpec, server: &str, n: u32, cpu_us: f64) -> LapRecord {
    let rate = spec.rate.unwrap_or(1_000.0);
    let mut r = lap(spec, server, n, rate);
    r.params.rate = Some(rate);
    r.server_stats = Some(ServerStats {
        cpu_s: cpu_us * rate * 10.0 / 1e6,
        cores_used: cpu_us * rate / 1e6,
        cpu_us_per_request: Some(cpu_us),
        ..ServerStats::default()
    });
    r
}

/// Writes the run into `parent/<name>` and returns the folder.
pub fn write_run(parent: &Path, name: &str, spec: &RunSpec) -> Result<PathBuf, ResultsError> {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).map_err(|source| ResultsError::Io {
        path: dir.clone(),
        source,
    })?;
    let _ = std::fs::remove_file(dir.join(RESULTS_FILE));
    let mut rng = SplitMix64::new(spec.seed);
    let mut w = ResultsWriter::open(&dir.join(RESULTS_FILE))?;
    for (server, level) in &spec.servers {
        for n in 1..=spec.laps {
            let value = level * (1.0 + spec.cv * normal(&mut rng));
            match spec.rate {
                Some(_) => w.append(&lap_at_rate(spec, server, n, value))?,
                None => w.append(&lap(spec, server, n, value))?,
            }
        }
    }
    let env = Env {
        serverbench_version: Some("0.1.0".into()),
        started_at: Some(time(spec.at_s)),
        git: Git {
            commit: spec.commit.clone(),
            dirty: Some(false),
        },
        machine: Machine {
            cpu_model: Some("Synthetic CPU @ 3.0GHz".into()),
            cpus_available: Some(2),
            kernel: Some("6.1.0".into()),
            ..Machine::default()
        },
        ..Env::default()
    };
    env.write(&dir.join(ENV_FILE))
        .map_err(|e| ResultsError::Io {
            path: dir.join(ENV_FILE),
            source: std::io::Error::other(e.to_string()),
        })?;
    Ok(dir)
}

/// Writes and imports one run per level of `levels` (the server's median req/s in each run),
/// an hour apart, each with commit `c0000NN`; `base` gives everything else.
pub fn record_series(
    history: &mut crate::History,
    parent: &Path,
    levels: &[f64],
    base: &RunSpec,
) -> Result<(), crate::HistoryError> {
    for (i, level) in levels.iter().enumerate() {
        let spec = RunSpec {
            servers: base
                .servers
                .iter()
                .map(|(s, l)| (s.clone(), l * level))
                .collect(),
            seed: base.seed.wrapping_mul(1_000_003).wrapping_add(i as u64),
            at_s: base.at_s + i as u64 * 3600,
            commit: Some(format!("c{i:06}")),
            ..base.clone()
        };
        let dir = write_run(parent, &format!("run{i:04}"), &spec)
            .map_err(|e| crate::HistoryError::Folder(e.to_string()))?;
        history.import(&dir, &crate::Source::default())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_count_days_into_months() {
        assert_eq!(time(0), "2026-01-01T00:00:00Z");
        assert_eq!(time(31 * 86_400 + 3661), "2026-02-01T01:01:01Z");
    }
}
