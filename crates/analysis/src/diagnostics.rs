//! Every warning and diagnostic of a summary, in one pass: each is a plain sentence about one
//! figure of one table, so a report can say *why* a number looks the way it does (the question
//! the first experiment ended with: "is Node.js that optimized or have I misconfigured
//! something?").
//!
//! A baseline without a lap, then per row the warnings of [`crate::warnings`] (a saturated
//! client, errors and non-2xx responses above [`crate::summary::ERROR_RATE_WARN`], noisy results
//! with each lap's req/s, too few laps, outliers, failed laps), those of
//! [`crate::host_warnings`] for laps over several machines (a saturated client host, named; a
//! start skew above 1 ms; a host whose share of the requests is off its share of the
//! connections), then, from the laps and `env.json`:
//! - the server used clearly fewer cores than the CPUs it was pinned to ([`UNUSED_CPU_FRACTION`],
//!   [`SINGLE_CORE_CEILING`]);
//! - a long latency tail or a second mode ([`LONG_TAIL_RATIO`]);
//! - RSS that kept growing through every lap ([`RSS_GROWTH_FRACTION`], [`RSS_GROWTH_MIN_MB`]);
//! - a server much slower on `/pingpong` than on `/payload` ([`MESSAGE_PASSING_RATIO`]);
//! - neither the client nor the server busy ([`IDLE_CPU_FRACTION`]);
//! - over TLS and HTTP/2 ([`crate::protocol`]): a server that never resumes when asked, a
//!   handshake rate bound by the client, refused streams and GOAWAYs;
//! - over WebSocket ([`crate::ws_closes`]): closes the client did not ask for, and upgrades
//!   failed or unanswered.

use crate::stats;
use crate::summary::{ServerSummary, Summary, Table};
use crate::warnings::{Warning, WarningKind};
use serverbench_results::env::Env;
use serverbench_results::record::{LapRecord, LapStatus};

/// A server pinned to M > 1 CPUs that used fewer than this fraction of them (median over laps)
/// left capacity idle: typically a single event loop or a `WORKERS` setting it ignored. 0.75
/// leaves room for the time a busy server spends waiting on the client.
pub const UNUSED_CPU_FRACTION: f64 = 0.75;
/// A server given several CPUs that used at most this many cores ran on one core (1 core plus
/// 10% for its helper threads: GC, timers, libuv's thread pool).
pub const SINGLE_CORE_CEILING: f64 = 1.1;
/// p99.9 above this multiple of p50 is a long tail or a second mode (GC pauses, a queue behind a
/// single worker, retransmits). 10x is the "order of magnitude" rule of Gil Tene's "How NOT to
/// measure latency": below it, percentile curves of healthy servers rise smoothly.
pub const LONG_TAIL_RATIO: f64 = 10.0;
/// RSS that grew by more than this fraction of its first sample within a lap...
pub const RSS_GROWTH_FRACTION: f64 = 0.20;
/// ...and by more than this many MB, in every successful lap, hints at a leak or an unbounded
/// cache; the two bounds keep small runtimes' allocator noise (a few MB) quiet.
pub const RSS_GROWTH_MIN_MB: f64 = 10.0;
/// req/s on `/pingpong` below this fraction of req/s on `/payload` (same server and profile, same
/// 1 MiB body) means handing the request to a worker costs a noticeable share of the throughput.
pub const MESSAGE_PASSING_RATIO: f64 = 0.7;

/// Every warning of a summary, in table order (what [`crate::analyze`] puts in
/// `summary.warnings`).
/// `env` is the results folder's `env.json` (for the CPUs the server was pinned to).
pub fn diagnose(summary: &Summary, records: &[LapRecord], env: Option<&Env>) -> Vec<Warning> {
    let server_cpus = env.and_then(Env::server_cpu_count);
    let mut out = Vec::new();
    for table in &summary.tables {
        out.extend(missing_baseline(summary, table));
        for s in &table.servers {
            let hosts = crate::host_warnings::host_warnings(table, s, &summary.hosts);
            let named = hosts.iter().any(|w| w.kind == WarningKind::HostSaturated);
            // A client host named as saturated says more than "the load generator".
            out.extend(
                crate::row_warnings::row_warnings(table, s)
                    .into_iter()
                    .filter(|w| !(named && w.kind == WarningKind::ClientSaturated)),
            );
            out.extend(hosts);
            let laps = ok_laps(records, table, &s.server);
            // In a core sweep, the lap's own count: the run's pinning is every count's ceiling.
            let swept = laps.first().and_then(|r| r.params.server_cpus);
            let given = swept.map(|n| n as usize).or(server_cpus);
            out.extend(unused_cpus(table, s, given));
            out.extend(long_tail(table, s));
            out.extend(rss_growth(table, s, &laps));
            out.extend(neither_busy(table, s, &laps));
        }
    }
    out.extend(message_passing(summary, records));
    out.extend(summary.scaling.iter().filter_map(stops_scaling));
    out.extend(crate::protocol::diagnose(&summary.protocols, records));
    out.extend(crate::ws_closes::diagnose(records));
    out.extend(known_deviations(summary, env));
    out
}

fn ok_laps<'a>(records: &'a [LapRecord], table: &Table, server: &str) -> Vec<&'a LapRecord> {
    records
        .iter()
        .filter(|r| r.status == LapStatus::Ok && r.server == server)
        .filter(|r| r.scenario == table.scenario && r.profile == table.profile)
        .collect()
}

fn warning(table: &Table, server: &str, kind: WarningKind, message: String) -> Warning {
    Warning {
        kind,
        scenario: table.scenario.clone(),
        profile: table.profile.clone(),
        server: Some(server.to_owned()),
        message,
    }
}

fn at(table: &Table, server: &str) -> String {
    format!("{server} ({}, {})", table.scenario, table.profile)
}

fn unused_cpus(table: &Table, s: &ServerSummary, given: Option<usize>) -> Option<Warning> {
    let used = s.cores_used?;
    let m = given.filter(|m| *m > 1)?;
    let idle = used < UNUSED_CPU_FRACTION * m as f64 || used <= SINGLE_CORE_CEILING;
    if !idle {
        return None;
    }
    let message = format!(
        "{}: the server used {used:.2} of the {m} CPUs it was given (CPU chart), so part of the \
         machine stayed idle: check that it starts one worker per CPU (WORKERS={m}).",
        at(table, &s.server)
    );
    Some(warning(table, &s.server, WarningKind::UnusedCpus, message))
}

/// A baseline was asked for but has no successful lap in this table.
fn missing_baseline(summary: &Summary, table: &Table) -> Option<Warning> {
    let b = summary
        .baseline
        .as_deref()
        .filter(|_| table.baseline.is_none())?;
    Some(Warning {
        kind: WarningKind::MissingBaseline,
        scenario: table.scenario.clone(),
        profile: table.profile.clone(),
        server: None,
        message: format!(
            "{}, {}: the baseline {b} has no successful lap here, so there are no speed factors.",
            table.scenario, table.profile
        ),
    })
}

/// Each ranked server that declares deviations from the contract, once, at its first table:
/// its figures come from a server that answers some real clients differently.
fn known_deviations(summary: &Summary, env: Option<&Env>) -> Vec<Warning> {
    let Some(env) = env else {
        return Vec::new();
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for table in &summary.tables {
        for s in &table.servers {
            let Some(devs) = env.deviations(&s.server) else {
                continue;
            };
            if seen.contains(&s.server.as_str()) {
                continue;
            }
            seen.push(&s.server);
            let list: Vec<String> = devs
                .iter()
                .map(|(k, why)| {
                    format!(
                        "{k} ({})",
                        why.split([';', '(']).next().unwrap_or(why).trim()
                    )
                })
                .collect();
            let message = format!(
                "{}: declares deviations from the contract, so some real clients fare differently \
                 than its figures suggest: {}.",
                at(table, &s.server),
                list.join("; ")
            );
            out.push(warning(
                table,
                &s.server,
                WarningKind::KnownDeviation,
                message,
            ));
        }
    }
    out
}

/// In a core sweep, a scaling efficiency below this means adding CPUs stopped paying: 0.7.
pub const SCALING_STOP: f64 = 0.7;

/// Where a server stops scaling in a core sweep, and whether the client saturated first.
fn stops_scaling(c: &crate::scaling::Scaling) -> Option<Warning> {
    let first = c.points.first()?;
    let stop = c
        .points
        .iter()
        .skip(1)
        .find(|p| p.efficiency < SCALING_STOP)?;
    let interval = stop
        .efficiency_interval
        .map(|i| format!(", interval {:.2}–{:.2}", i.low, i.high))
        .unwrap_or_default();
    let client = match c
        .points
        .iter()
        .find(|p| p.client_saturated && p.cpus <= stop.cpus)
    {
        Some(p) => format!(
            " The client was saturated first (at {} CPUs): the figures from there are lower \
             bounds, so the limit may be the load generator's.",
            p.cpus
        ),
        None => " The client was not saturated: the limit is the server's.".to_owned(),
    };
    let profile = format!("{}/{}cpu", c.profile, stop.cpus);
    Some(Warning {
        kind: WarningKind::StopsScaling,
        scenario: c.scenario.clone(),
        profile: profile.clone(),
        server: Some(c.server.clone()),
        message: format!(
            "{} ({}, {}): stops scaling at {} CPUs: {}x the CPUs of {} gave {:.2}x its req/s \
             (efficiency {:.2}{interval}).{client}",
            c.server,
            c.scenario,
            c.profile,
            stop.cpus,
            stop.cpus / first.cpus.max(1),
            first.cpus,
            stop.rps / first.rps,
            stop.efficiency
        ),
    })
}

/// Below this fraction of one CPU, a side of the benchmark counts as idle.
pub const IDLE_CPU_FRACTION: f64 = 0.3;

/// Neither side busy: the client used under [`IDLE_CPU_FRACTION`] of a CPU and so did the
/// server (medians over laps), so the figure is bound by something else.
fn neither_busy(table: &Table, s: &ServerSummary, laps: &[&LapRecord]) -> Option<Warning> {
    // An open loop (a fixed rate, a capacity search) is bound by its schedule, by design.
    if laps
        .iter()
        .any(|r| r.params.rate.is_some() || r.params.find_max.is_some())
    {
        return None;
    }
    let client = median_of(laps, |r| {
        let m = r.load.as_ref()?;
        Some(m.client_cpu_s? / m.duration_s.filter(|d| *d > 0.0)?)
    })?;
    let server = median_of(laps, |r| Some(r.server_stats.as_ref()?.cores_used))?;
    if client >= IDLE_CPU_FRACTION || server >= IDLE_CPU_FRACTION {
        return None;
    }
    let message = format!(
        "{}: neither the client nor the server was busy (client {:.0}%, server {:.0}% of a CPU): \
         the figure is bound by something else — the machine, a lock, a sleep, the network.",
        at(table, &s.server),
        client * 100.0,
        server * 100.0
    );
    Some(warning(table, &s.server, WarningKind::NeitherBusy, message))
}

fn median_of(laps: &[&LapRecord], f: impl Fn(&LapRecord) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = laps
        .iter()
        .filter_map(|r| f(r))
        .filter(|x| x.is_finite())
        .collect();
    stats::median(&v)
}

/// From the cell's latency (merged histograms where every lap has one).
fn long_tail(table: &Table, s: &ServerSummary) -> Option<Warning> {
    let (p50, p999) = (s.latency_p50_us?, s.latency_p999_us?);
    if p50 <= 0.0 || p999 <= LONG_TAIL_RATIO * p50 {
        return None;
    }
    let message = format!(
        "{}: latency has a long tail or a second mode: p99.9 is {:.0} µs, {:.1}x the p50 of \
         {:.0} µs (above {LONG_TAIL_RATIO:.0}x; latency chart): look for GC pauses or requests \
         queued behind a busy worker.",
        at(table, &s.server),
        p999,
        p999 / p50,
        p50
    );
    Some(warning(table, &s.server, WarningKind::LongTail, message))
}

fn rss_growth(table: &Table, s: &ServerSummary, laps: &[&LapRecord]) -> Option<Warning> {
    let growth: Vec<(f64, f64)> = laps
        .iter()
        .map(|r| {
            r.server_stats
                .as_ref()
                .map(|st| (st.rss_first_mb, st.rss_last_mb))
        })
        .collect::<Option<Vec<_>>>()?;
    let grew = |(first, last): (f64, f64)| {
        let d = last - first;
        d > RSS_GROWTH_MIN_MB && d > RSS_GROWTH_FRACTION * first
    };
    if growth.is_empty() || !growth.iter().all(|g| grew(*g)) {
        return None;
    }
    let shown: Vec<String> = laps
        .iter()
        .zip(&growth)
        .map(|(r, (a, b))| format!("lap {} {a:.0} → {b:.0} MB", r.lap))
        .collect();
    let message = format!(
        "{}: the server's RSS kept growing through every lap ({}; RSS chart): a leak or an \
         unbounded cache would look like this.",
        at(table, &s.server),
        shown.join(", ")
    );
    Some(warning(table, &s.server, WarningKind::RssGrowth, message))
}

/// The request paths of a table's laps (from the first lap).
fn paths_of<'a>(records: &'a [LapRecord], table: &Table) -> Option<&'a [String]> {
    records
        .iter()
        .find(|r| r.scenario == table.scenario && r.profile == table.profile)
        .map(|r| r.params.work.paths.as_slice())
}

fn is_only(paths: Option<&[String]>, path: &str) -> bool {
    paths.is_some_and(|p| p.len() == 1 && p[0] == path)
}

fn message_passing(summary: &Summary, records: &[LapRecord]) -> Vec<Warning> {
    let mut out = Vec::new();
    let tables = &summary.tables;
    for ping in tables
        .iter()
        .filter(|t| is_only(paths_of(records, t), "/pingpong"))
    {
        let Some(payload) = tables
            .iter()
            .find(|t| t.profile == ping.profile && is_only(paths_of(records, t), "/payload"))
        else {
            continue;
        };
        for s in &ping.servers {
            let Some(p) = payload.servers.iter().find(|x| x.server == s.server) else {
                continue;
            };
            let (Some(a), Some(b)) = (s.rps, p.rps) else {
                continue;
            };
            if b.median <= 0.0 || a.median / b.median >= MESSAGE_PASSING_RATIO {
                continue;
            }
            let message = format!(
                "{}: {:.0} req/s on /pingpong against {:.0} on /payload ({}): handing each request \
                 to a worker through message passing costs {:.0}% of the throughput.",
                at(ping, &s.server),
                a.median,
                b.median,
                payload.scenario,
                (1.0 - a.median / b.median) * 100.0
            );
            out.push(warning(
                ping,
                &s.server,
                WarningKind::MessagePassing,
                message,
            ));
        }
    }
    out
}

#[cfg(test)]
#[path = "diagnostics_tests.rs"]
mod tests;
