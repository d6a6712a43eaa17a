//! The summary of a results folder: one table per scenario x load profile, one row per server,
//! with statistics over laps, speed factors, ranks and warnings. It is what every exporter
//! renders and what `serverbench report --format json` prints.
//!
//! Rules (documented here once, relied on by the exporters):
//! - Only laps with status `ok` feed the figures; failed laps are counted and the first failure
//!   is kept. Nothing is deleted: outlier laps become warnings.
//! - Per-lap figures (req/s, MB/s, Mbps, cores, CPU µs/request) are combined by their median
//!   across laps; peak RSS is the maximum over laps; counts are summed.
//! - Latency percentiles (p50, p90, p99, p99.9, max) come from the exact merge of the laps'
//!   HdrHistograms when every lap has one, otherwise from the median of the laps' figures
//!   ([`latency`]; `latency_source` says which).
//! - MB is 10^6 bytes; Mbps is 10^6 bits per second.
//! - The speed factor is `median(server) / median(baseline)` in the same table, with a
//!   bootstrap interval of that ratio resampling each side's laps independently
//!   ([`stats::bootstrap_ratio_ci`]). Without a baseline the slowest server of the table is the
//!   baseline (1.00x), as in the Node frameworks experiment where express was 1.00x.
//! - Ranks come from [`stats::rank`] on req/s medians and their 95% intervals.
//!
//! Warnings are not made here: [`crate::diagnostics::diagnose`] makes every one of them in one
//! pass, and [`crate::analyze`] returns the summary with them.

mod latency;

pub use latency::LatencySource;

use crate::stats::{self, Interval, Stats};
/// The warning types live in [`crate::warnings`]; kept at this path for the reports.
pub use crate::warnings::{Warning, WarningKind};
use serde::Serialize;
use serverbench_model::disturbance::Cause;
use serverbench_model::failure::LapFailure;
use serverbench_model::Mode;
use serverbench_model::Tool;
use serverbench_results::record::{LapRecord, LapStatus, Measurement, ServerStats};

/// Errors (plus non-2xx) above this fraction of requests are warned about (0.1%).
pub const ERROR_RATE_WARN: f64 = 0.001;
/// Bytes in a megabyte (SI).
pub const BYTES_PER_MB: f64 = 1e6;
/// Bits in a megabit (SI).
pub const BITS_PER_MBIT: f64 = 1e6;

/// Everything a report shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The suite of the first lap (`adhoc` for ad-hoc runs).
    pub suite: Option<String>,
    /// The baseline asked for; `None` means "the slowest server of each table".
    pub baseline: Option<String>,
    /// One table per scenario x profile, in the order the laps first appear.
    pub tables: Vec<Table>,
    /// Plain sentences, each tied to a figure of a table.
    pub warnings: Vec<Warning>,
    /// Core sweeps: req/s against server CPUs per server (empty without a sweep).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scaling: Vec<crate::scaling::Scaling>,
    /// Laps over several machines (`run --hosts`): each client host's share (empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<crate::hosts::HostsLapSummary>,
    /// Laps over TLS or HTTP/2: what was negotiated, handshakes, streams, the h2/h1 ratio.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub protocols: Vec<crate::protocol::ProtocolRow>,
    /// Database laps: rows/s, each role's CPU per request, statements per request, the pool.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub database: Vec<crate::database::DatabaseRow>,
    /// Laps at a fixed rate (`rate = …`): CPU per request, memory, p99/p99.9, valid or not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cost: Vec<crate::cost::CostRow>,
    /// Capacity searches (`find_max = { slo = … }`): the highest rate meeting the goal, and
    /// the curve of every step.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capacity: Vec<crate::capacity_rows::CapacityRow>,
    /// Laps that ran a weighted mix: each entry's share, req/s and latency.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<crate::mix::MixRow>,
    /// Laps something else disturbed (steal, other processes...), with their causes; marked
    /// `dropped` when `--drop-disturbed` left them out of the figures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disturbed: Vec<DisturbedLap>,
    /// `run --until-ci`: the rule and where each cell ended (clear, or the lap limit reached).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until_ci: Option<crate::until_ci::UntilCiReport>,
}

/// One scenario x load profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub scenario: String,
    pub profile: String,
    /// `http`, `tcp-stream` or `tcp-pingpong` (from the first lap).
    pub mode: Mode,
    pub connections: u32,
    /// How the laps travelled (from the first lap), e.g. `https`, `h2 m16`; empty for
    /// HTTP/1.1 keep-alive over plain TCP.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub transport: String,
    /// What the scenario's own requests send (from the first lap), e.g. `POST 500KB..20MB`;
    /// empty for bodiless GETs and mixes.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// The server the speed factors of this table are relative to.
    pub baseline: Option<String>,
    /// Rows sorted by rank, then median req/s (highest first); unranked rows last.
    pub servers: Vec<ServerSummary>,
}

/// The req/s of one successful lap.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LapRps {
    pub lap: u32,
    pub rps: f64,
}

/// A ratio of medians with its interval (`None` for the baseline itself: exactly 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpeedFactor {
    pub ratio: f64,
    pub interval: Option<Interval>,
}

/// One server in one table.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerSummary {
    pub server: String,
    pub tool: Tool,
    /// Laps recorded (ok + failed).
    pub laps: u32,
    pub failed_laps: u32,
    /// Why the first failed lap failed (written as its text, as before failures were typed).
    #[serde(serialize_with = "as_text")]
    pub first_failure: Option<LapFailure>,
    pub lap_rps: Vec<LapRps>,
    pub rps: Option<Stats>,
    /// 95% interval of the median req/s.
    pub rps_ci: Option<Interval>,
    pub rps_best: Option<f64>,
    /// CV above [`stats::NOISY_CV`].
    pub noisy: bool,
    pub latency_p50_us: Option<f64>,
    pub latency_p90_us: Option<f64>,
    pub latency_p99_us: Option<f64>,
    pub latency_p999_us: Option<f64>,
    pub latency_max_us: Option<f64>,
    /// Whether the latency figures are the merge of every lap's histogram or the median of the
    /// laps' figures (some lap had no histogram); `None` without latency.
    pub latency_source: Option<LatencySource>,
    pub throughput_mb_s: Option<f64>,
    /// TCP modes only.
    pub mbps_down: Option<f64>,
    pub mbps_up: Option<f64>,
    pub requests: u64,
    pub errors: u64,
    /// Errors over the attempts: the requests answered and the errors that were not an answer.
    pub error_rate: Option<f64>,
    pub non_2xx: u64,
    pub rss_peak_mb: Option<f64>,
    pub cores_used: Option<f64>,
    pub cpu_us_per_request: Option<f64>,
    /// Voluntary + involuntary context switches of the server's process tree per request
    /// (median of laps; not for a TCP stream): hand-offs between threads show up here.
    pub ctx_switches_per_request: Option<f64>,
    pub client_saturated: bool,
    pub speed_factor: Option<SpeedFactor>,
    /// Left out of the ranks (`rank` is `None`): its database laps broke the contract's
    /// statement rules, and how (crate::off_contract).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub off_contract: Option<String>,
    pub rank: Option<u32>,
}

fn as_text<S: serde::Serializer>(f: &Option<LapFailure>, s: S) -> Result<S::Ok, S::Error> {
    match f {
        Some(f) => s.collect_str(f),
        None => s.serialize_none(),
    }
}

/// Summarizes laps; `baseline` is the server the speed factors are relative to.
pub fn summarize(records: &[LapRecord], baseline: Option<&str>) -> Summary {
    let tables: Vec<Table> = group_by(records, |r| (r.scenario.clone(), r.profile.clone()))
        .iter()
        .map(|laps| build_table(laps, baseline))
        .collect();
    let merged = |scenario: &str, profile: &str, server: &str| {
        tables
            .iter()
            .find(|t| t.scenario == scenario && t.profile == profile)
            .and_then(|t| t.servers.iter().find(|s| s.server == server))
            .map_or_else(crate::cost::Merged::default, |s| crate::cost::Merged {
                p99_us: s.latency_p99_us,
                p999_us: s.latency_p999_us,
                error_rate: s.error_rate,
            })
    };
    let cost = crate::cost::cost_rows(records, &merged);
    Summary {
        suite: records.first().map(|r| r.suite.clone()),
        baseline: baseline.map(str::to_owned),
        tables,
        warnings: Vec::new(),
        scaling: crate::scaling::scaling(records),
        hosts: crate::hosts::breakdown(records),
        protocols: crate::protocol::protocol_rows(records),
        database: crate::database::database_rows(records),
        cost,
        capacity: crate::capacity_rows::capacity_rows(records),
        mix: crate::mix::mix_rows(records),
        disturbed: Vec::new(),
        until_ci: None,
    }
}

/// Groups records by `key`, keeping the order in which keys first appear.
fn group_by<'a, K: PartialEq>(
    records: impl IntoIterator<Item = &'a LapRecord>,
    key: impl Fn(&LapRecord) -> K,
) -> Vec<Vec<&'a LapRecord>> {
    let mut keys: Vec<K> = Vec::new();
    let mut groups: Vec<Vec<&LapRecord>> = Vec::new();
    for r in records {
        let k = key(r);
        match keys.iter().position(|x| *x == k) {
            Some(i) => groups[i].push(r),
            None => {
                keys.push(k);
                groups.push(vec![r]);
            }
        }
    }
    groups
}

fn build_table(laps: &[&LapRecord], baseline: Option<&str>) -> Table {
    let first = laps[0];
    let per_server = group_by(laps.iter().copied(), |r| r.server.clone());
    let mut servers: Vec<ServerSummary> = per_server
        .iter()
        .map(|l| summarize_server(l, &first.scenario, &first.profile))
        .collect();
    // A row outside the statement rules is not ranked (NaN is unranked).
    let ranks = stats::rank(
        &servers
            .iter()
            .map(|s| match s.off_contract {
                Some(_) => (f64::NAN, None),
                None => (s.rps.map_or(f64::NAN, |r| r.median), s.rps_ci),
            })
            .collect::<Vec<_>>(),
    );
    // At a fixed rate every server answers the same req/s: the cost table ranks those laps.
    let fixed_rate = first.params.rate.is_some();
    for (s, r) in servers.iter_mut().zip(ranks) {
        s.rank = r.filter(|_| !fixed_rate);
    }
    let mut table = Table {
        scenario: first.scenario.clone(),
        profile: first.profile.clone(),
        mode: first.params.work.mode,
        connections: first.params.connections,
        transport: first.params.transport_label(),
        body: first.params.body_label(),
        baseline: None,
        servers: Vec::new(),
    };
    if !fixed_rate {
        table.baseline = apply_speed_factors(&table, &mut servers, baseline);
    }
    servers.sort_by(|a, b| {
        let key = |s: &ServerSummary| (s.rank.unwrap_or(u32::MAX), s.rps.map(|r| -r.median));
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0)
            .then(
                ka.1.unwrap_or(f64::INFINITY)
                    .total_cmp(&kb.1.unwrap_or(f64::INFINITY)),
            )
            .then(a.server.cmp(&b.server))
    });
    table.servers = servers;
    table
}

/// Sets each row's speed factor; returns the baseline used.
fn apply_speed_factors(
    table: &Table,
    servers: &mut [ServerSummary],
    baseline: Option<&str>,
) -> Option<String> {
    let chosen = match baseline {
        Some(b) => servers.iter().find(|s| s.server == b && s.rps.is_some()),
        None => servers
            .iter()
            .filter(|s| s.rps.is_some())
            .min_by(|a, b| median_rps(a).total_cmp(&median_rps(b))),
    };
    let base = chosen.cloned()?;
    let base_laps: Vec<f64> = base.lap_rps.iter().map(|l| l.rps).collect();
    let base_median = median_rps(&base);
    for s in servers.iter_mut().filter(|s| s.rps.is_some()) {
        let laps: Vec<f64> = s.lap_rps.iter().map(|l| l.rps).collect();
        if base_median <= 0.0 {
            continue;
        }
        let interval = if s.server == base.server {
            None
        } else {
            let seed = stats::seed_for(&format!(
                "{}/{}/{}",
                table.scenario, table.profile, s.server
            ));
            stats::bootstrap_ratio_ci(
                &base_laps,
                &laps,
                stats::DEFAULT_CONFIDENCE,
                stats::DEFAULT_RESAMPLES,
                seed,
            )
        };
        s.speed_factor = Some(SpeedFactor {
            ratio: median_rps(s) / base_median,
            interval,
        });
    }
    Some(base.server)
}

fn median_rps(s: &ServerSummary) -> f64 {
    s.rps.map_or(f64::NAN, |r| r.median)
}

/// A successful lap and its measurement.
type OkLap<'a> = (&'a LapRecord, &'a Measurement);

/// The median of the `Some` values of `f` over laps; `None` when no lap has one.
fn median_by(laps: &[OkLap], f: impl Fn(&LapRecord, &Measurement) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = laps
        .iter()
        .filter_map(|(r, m)| f(r, m))
        .filter(|x| x.is_finite())
        .collect();
    stats::median(&v)
}

/// Mbps down (bytes read) or up (bytes written): the tool's figure, else computed.
fn mbps(m: &Measurement, down: bool) -> Option<f64> {
    let given = if down { m.mbps_down } else { m.mbps_up };
    let bytes = if down { m.bytes_read } else { m.bytes_written };
    given.or_else(|| per_second(bytes? as f64 * 8.0 / BITS_PER_MBIT, m.duration_s?))
}

fn summarize_server(laps: &[&LapRecord], scenario: &str, profile: &str) -> ServerSummary {
    let ok = ok_laps(laps);
    let failed: Vec<&LapRecord> = laps
        .iter()
        .copied()
        .filter(|r| r.status == LapStatus::Failed)
        .collect();
    let lap_rps: Vec<LapRps> = ok
        .iter()
        .filter_map(|(r, m)| lap_rps(m).map(|rps| LapRps { lap: r.lap, rps }))
        .collect();
    let values: Vec<f64> = lap_rps.iter().map(|l| l.rps).collect();
    let rps = Stats::of(&values);
    let seed = stats::seed_for(&format!("{scenario}/{profile}/{}", laps[0].server));
    let tcp = laps[0].params.work.mode.is_tcp();
    // A stream has no requests: no latency and no CPU per request to show.
    let per_request = !laps[0].params.work.mode.is_stream();
    let requests: u64 = ok.iter().filter_map(|(_, m)| m.requests).sum();
    let errors: u64 = ok.iter().map(|(_, m)| lap_errors(m)).sum();
    // The requests answered include those failed on their answer (a bad status or body, a
    // failed gRPC call): those errors are not added twice.
    let answered_errors: u64 = (ok.iter())
        .filter_map(|(_, m)| Some(m.errors.as_ref()?.on_answers()))
        .sum();
    let attempts = requests + errors - answered_errors.min(errors);
    let ci = stats::bootstrap_median_ci(
        &values,
        stats::DEFAULT_CONFIDENCE,
        stats::DEFAULT_RESAMPLES,
        seed,
    );
    let cell = latency::cell_latency(&ok);
    let latency = |f: fn(&latency::CellLatency) -> Option<f64>| f(&cell).filter(|_| per_request);
    let server = |f: fn(&ServerStats) -> Option<f64>| {
        move |r: &LapRecord, _: &Measurement| f(r.server_stats.as_ref()?)
    };
    ServerSummary {
        server: laps[0].server.clone(),
        tool: laps[0].tool,
        laps: laps.len() as u32,
        failed_laps: failed.len() as u32,
        first_failure: failed
            .iter()
            .min_by_key(|r| r.lap)
            .and_then(|r| r.failure.clone()),
        rps_ci: ci,
        rps_best: stats::best(&values),
        noisy: rps.is_some_and(|s| s.is_noisy()),
        rps,
        lap_rps,
        latency_p50_us: latency(|l| l.p50),
        latency_p90_us: latency(|l| l.p90),
        latency_p99_us: latency(|l| l.p99),
        latency_p999_us: latency(|l| l.p999),
        latency_max_us: latency(|l| l.max),
        latency_source: cell.source.filter(|_| per_request),
        throughput_mb_s: median_by(&ok, |_, m| {
            per_second(m.bytes_read? as f64 / BYTES_PER_MB, m.duration_s?)
        }),
        mbps_down: median_by(&ok, |_, m| mbps(m, true)).filter(|_| tcp),
        mbps_up: median_by(&ok, |_, m| mbps(m, false)).filter(|_| tcp),
        requests,
        errors,
        error_rate: (attempts > 0).then(|| errors as f64 / attempts as f64),
        non_2xx: ok.iter().filter_map(|(_, m)| m.non_2xx).sum(),
        rss_peak_mb: ok
            .iter()
            .filter_map(|(r, _)| r.server_stats.as_ref().map(|s| s.rss_peak_mb))
            .reduce(f64::max),
        cores_used: median_by(&ok, server(|s| Some(s.cores_used))),
        cpu_us_per_request: median_by(&ok, server(|s| s.cpu_us_per_request))
            .filter(|_| per_request),
        ctx_switches_per_request: median_by(&ok, |r, m| {
            let s = r.server_stats.as_ref()?;
            let switches = (s.ctx_switches_voluntary + s.ctx_switches_involuntary) as f64;
            Some(switches / m.requests.filter(|&n| n > 0)? as f64)
        })
        .filter(|_| per_request),
        client_saturated: ok.iter().any(|(_, m)| m.client_saturated == Some(true)),
        speed_factor: None,
        off_contract: crate::database::off_contract(laps),
        rank: None,
    }
}

/// The successful laps with their measurement, by lap number.
fn ok_laps<'a>(laps: &[&'a LapRecord]) -> Vec<OkLap<'a>> {
    let mut ok: Vec<OkLap> = laps
        .iter()
        .filter(|r| r.status == LapStatus::Ok)
        .filter_map(|r| Some((*r, r.load.as_ref()?)))
        .collect();
    ok.sort_by_key(|(r, _)| r.lap);
    ok
}

/// `amount / seconds`, `None` when the duration is not positive.
fn per_second(amount: f64, seconds: f64) -> Option<f64> {
    (seconds > 0.0).then(|| amount / seconds)
}

/// A lap's headline rate: requests (messages) per second; for gRPC the calls that ended OK per
/// second, so a server failing its calls fast does not score by them.
fn lap_rps(m: &Measurement) -> Option<f64> {
    let all = m
        .rps
        .or_else(|| per_second(m.requests? as f64, m.duration_s?))
        .filter(|x| x.is_finite())?;
    match (&m.grpc, m.requests) {
        (Some(g), Some(n)) if n > 0 => Some(all * g.ok_calls().min(n) as f64 / n as f64),
        (Some(_), _) => Some(0.0),
        (None, _) => Some(all),
    }
}

fn lap_errors(m: &Measurement) -> u64 {
    m.errors_total
        .or_else(|| m.errors.as_ref().map(|e| e.total()))
        .unwrap_or(0)
}

/// One disturbed lap (listed by `crate::disturbed`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DisturbedLap {
    pub server: String,
    pub scenario: String,
    pub profile: String,
    pub lap: u32,
    pub causes: Vec<Cause>,
    /// Left out of the statistics (`--drop-disturbed`).
    pub dropped: bool,
}

impl DisturbedLap {
    /// The causes in one line: `steal 4.1%, other processes 30% of the CPUs`.
    pub fn why(&self) -> String {
        let parts: Vec<String> = self.causes.iter().map(Cause::to_string).collect();
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests;
