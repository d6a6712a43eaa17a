//! Every warning and diagnostic of a summary, in one pass: each is a plain sentence about one
//! figure of one table, so a report can say *why* a number looks the way it does (the question
//! the first experiment ended with: "is Node.js that optimized or have I misconfigured
//! something?").
//!
//! A baseline without a lap, then per row the warnings of [`crate::warnings`] (a saturated
//! client, errors and non-2xx responses above [`crate::summary::ERROR_RATE_WARN`], noisy results
//! with each lap's req/s, too few laps, outliers, failed laps), then, from the laps and
//! `env.json`:
//! - the server used clearly fewer cores than the CPUs it was pinned to ([`UNUSED_CPU_FRACTION`],
//!   [`SINGLE_CORE_CEILING`]);
//! - a long latency tail or a second mode ([`LONG_TAIL_RATIO`]);
//! - RSS that kept growing through every lap ([`RSS_GROWTH_FRACTION`], [`RSS_GROWTH_MIN_MB`]);
//! - a server much slower on `/pingpong` than on `/payload` ([`MESSAGE_PASSING_RATIO`]);
//! - neither the client nor the server busy ([`IDLE_CPU_FRACTION`]).

use crate::stats;
use crate::summary::{ServerSummary, Summary, Table, Warning, WarningKind};
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
            out.extend(crate::warnings::row_warnings(table, s));
            let laps = ok_laps(records, table, &s.server);
            out.extend(unused_cpus(table, s, server_cpus));
            out.extend(long_tail(table, s, &laps));
            out.extend(rss_growth(table, s, &laps));
            out.extend(neither_busy(table, s, &laps));
        }
    }
    out.extend(message_passing(summary, records));
    out.extend(summary.scaling.iter().filter_map(stops_scaling));
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

fn long_tail(table: &Table, s: &ServerSummary, laps: &[&LapRecord]) -> Option<Warning> {
    let p50 = median_of(laps, |r| r.load.as_ref()?.latency_us.p50)?;
    let p999 = median_of(laps, |r| r.load.as_ref()?.latency_us.p999)?;
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
        .map(|r| r.params.paths.as_slice())
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
mod tests {
    use super::*;
    use crate::summary::summarize;
    use serverbench_results::env::Pinning;
    use serverbench_results::record::{LoadParams, Measurement, ServerStats};
    use serverbench_results::{Mode, Tool};

    /// A healthy lap: 1000 req/s, p50 100 µs, p99.9 500 µs, 2 cores, flat 50 MB RSS.
    fn lap(server: &str, scenario: &str, n: u32) -> LapRecord {
        let mut m = Measurement {
            rps: Some(1000.0),
            requests: Some(10_000),
            errors_total: Some(0),
            non_2xx: Some(0),
            client_saturated: Some(false),
            ..Measurement::default()
        };
        m.latency_us.p50 = Some(100.0);
        m.latency_us.p999 = Some(500.0);
        LapRecord {
            suite: "s".into(),
            server: server.into(),
            scenario: scenario.into(),
            profile: "c10".into(),
            lap: n,
            status: LapStatus::Ok,
            failure: None,
            tool: Tool::Serverbench,
            started_at: String::new(),
            wall_s: 10.0,
            params: LoadParams {
                mode: Mode::Http,
                paths: vec![format!("/{scenario}")],
                connections: 10,
                ..LoadParams::default()
            },
            load: Some(m),
            server_stats: Some(ServerStats {
                rss_peak_mb: 50.0,
                rss_first_mb: 50.0,
                rss_last_mb: 50.0,
                cores_used: 2.0,
                ..ServerStats::default()
            }),
        }
    }

    fn laps(edit: impl Fn(&mut LapRecord)) -> Vec<LapRecord> {
        let mut v: Vec<LapRecord> = (1..=3).map(|n| lap("a/x", "hello", n)).collect();
        v.iter_mut().for_each(edit);
        v
    }

    fn kinds(records: &[LapRecord], env: Option<&Env>) -> Vec<WarningKind> {
        let summary = crate::analyze(records, None, env);
        summary.warnings.into_iter().map(|w| w.kind).collect()
    }

    fn pinned_to(cpus: &[usize]) -> Env {
        Env {
            pinning: Some(Pinning {
                server_cpus: cpus.to_vec(),
                ..Pinning::default()
            }),
            ..Env::default()
        }
    }

    fn two_cpus() -> Env {
        pinned_to(&[0, 1])
    }

    fn stats(r: &mut LapRecord) -> &mut ServerStats {
        r.server_stats.as_mut().unwrap()
    }

    fn load(r: &mut LapRecord) -> &mut Measurement {
        r.load.as_mut().unwrap()
    }

    #[test]
    fn healthy_laps_raise_no_diagnostic() {
        assert_eq!(kinds(&laps(|_| {}), Some(&two_cpus())), []);
    }

    #[test]
    fn a_saturated_client_is_diagnosed_and_an_idle_one_is_not() {
        let k = kinds(&laps(|r| load(r).client_saturated = Some(true)), None);
        assert_eq!(k, [WarningKind::ClientSaturated]);
    }

    #[test]
    fn errors_and_non_2xx_above_a_tenth_of_a_percent_are_diagnosed() {
        let k = kinds(&laps(|r| load(r).errors_total = Some(11)), None);
        assert_eq!(k, [WarningKind::Errors]);
        assert_eq!(kinds(&laps(|r| load(r).errors_total = Some(9)), None), []);
        let k = kinds(&laps(|r| load(r).non_2xx = Some(11)), None);
        assert_eq!(k, [WarningKind::Non2xx]);
    }

    #[test]
    fn a_noisy_result_is_diagnosed_with_every_lap_shown() {
        let records = laps(|r| load(r).rps = Some(1000.0 + 100.0 * r.lap as f64));
        let summary = crate::analyze(&records, None, None);
        let w = summary
            .warnings
            .iter()
            .find(|w| w.kind == WarningKind::Noisy);
        let msg = &w.expect("CV of 1100/1200/1300 is 8%").message;
        assert!(msg.contains("lap 1 1100, lap 2 1200, lap 3 1300"), "{msg}");
        let calm = laps(|r| load(r).rps = Some(1000.0 + r.lap as f64));
        assert_eq!(kinds(&calm, None), []);
    }

    #[test]
    fn a_server_on_one_of_two_cpus_is_diagnosed_with_both_counts() {
        let records = laps(|r| stats(r).cores_used = 1.0);
        let summary = summarize(&records, None);
        let w = diagnose(&summary, &records, Some(&two_cpus()));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message.contains("used 1.00 of the 2 CPUs"),
            "{}",
            w[0].message
        );
        assert_eq!(w[0].kind.figure(), "cpu");
    }

    #[test]
    fn cpu_use_is_not_diagnosed_on_one_cpu_or_without_pinning() {
        let records = laps(|r| stats(r).cores_used = 1.0);
        let one = pinned_to(&[0]);
        assert_eq!(kinds(&records, Some(&one)), []);
        assert_eq!(kinds(&records, None), []);
        let busy = laps(|r| stats(r).cores_used = 1.8);
        assert_eq!(kinds(&busy, Some(&two_cpus())), []);
    }

    #[test]
    fn a_run_where_neither_side_was_busy_is_diagnosed_with_both_figures() {
        let idle = laps(|r| {
            stats(r).cores_used = 0.05;
            load(r).client_cpu_s = Some(0.2);
            load(r).duration_s = Some(2.0);
        });
        let summary = summarize(&idle, None);
        let w = diagnose(&summary, &idle, None);
        let w: Vec<_> = w
            .iter()
            .filter(|w| w.kind == WarningKind::NeitherBusy)
            .collect();
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message.contains("client 10%, server 5% of a CPU"),
            "{}",
            w[0].message
        );
        let busy = laps(|r| {
            stats(r).cores_used = 0.95;
            load(r).client_cpu_s = Some(0.2);
            load(r).duration_s = Some(2.0);
        });
        assert!(!kinds(&busy, None).contains(&WarningKind::NeitherBusy));
    }

    #[test]
    fn an_unpinned_server_has_no_cpu_count() {
        assert_eq!(pinned_to(&[2]).server_cpu_count(), Some(1));
        assert_eq!(pinned_to(&[]).server_cpu_count(), None);
    }

    #[test]
    fn a_tail_ten_times_the_median_is_diagnosed() {
        let records = laps(|r| load(r).latency_us.p999 = Some(2500.0));
        assert_eq!(kinds(&records, None), [WarningKind::LongTail]);
        let records = laps(|r| load(r).latency_us.p999 = Some(900.0));
        assert_eq!(kinds(&records, None), []);
    }

    #[test]
    fn rss_growing_in_every_lap_is_diagnosed() {
        let records = laps(|r| stats(r).rss_last_mb = 80.0);
        let summary = summarize(&records, None);
        let w = diagnose(&summary, &records, None);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message.contains("lap 1 50 → 80 MB"),
            "{}",
            w[0].message
        );
    }

    #[test]
    fn rss_growth_in_some_laps_or_by_a_few_mb_is_not_diagnosed() {
        let one_lap = laps(|r| stats(r).rss_last_mb = if r.lap == 2 { 80.0 } else { 50.0 });
        assert_eq!(kinds(&one_lap, None), []);
        let small = laps(|r| {
            stats(r).rss_first_mb = 4.0;
            stats(r).rss_last_mb = 12.0;
        });
        assert_eq!(kinds(&small, None), []);
    }

    fn payload_and_pingpong(ping_rps: f64) -> Vec<LapRecord> {
        let mut v = Vec::new();
        for n in 1..=3 {
            v.push(lap("go/std", "payload", n));
            let mut p = lap("go/std", "pingpong", n);
            load(&mut p).rps = Some(ping_rps);
            v.push(p);
        }
        v
    }

    #[test]
    fn pingpong_much_slower_than_payload_states_the_cost_of_message_passing() {
        let records = payload_and_pingpong(400.0);
        let summary = summarize(&records, None);
        let w = diagnose(&summary, &records, None);
        assert_eq!(w.len(), 1);
        assert_eq!(
            (w[0].kind, w[0].scenario.as_str()),
            (WarningKind::MessagePassing, "pingpong")
        );
        assert!(
            w[0].message.contains("costs 60% of the throughput"),
            "{}",
            w[0].message
        );
    }

    #[test]
    fn pingpong_close_to_payload_is_not_diagnosed() {
        assert_eq!(kinds(&payload_and_pingpong(900.0), None), []);
    }
}
