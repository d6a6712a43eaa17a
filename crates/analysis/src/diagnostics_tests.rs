//! Tests of the diagnostics: each warning raised where it should be and nowhere else.

use super::*;
use crate::summary::summarize;
use serverbench_model::Mode;
use serverbench_model::Tool;
use serverbench_results::env::Pinning;
use serverbench_results::record::{LoadParams, Measurement, ServerStats};

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
            work: serverbench_model::spec::Work {
                mode: Mode::Http,
                paths: vec![format!("/{scenario}")],
                ..Default::default()
            },
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
        roles: Default::default(),
        database: None,
        hosts: None,
        disturbance: None,
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
fn in_a_core_sweep_cpu_use_is_judged_against_the_laps_own_count() {
    let at = |n: u32, used: f64| {
        laps(|r| {
            r.params.server_cpus = Some(n);
            stats(r).cores_used = used;
        })
    };
    let four = pinned_to(&[0, 1, 2, 3]);
    assert_eq!(kinds(&at(1, 0.98), Some(&four)), []);
    assert_eq!(kinds(&at(2, 1.9), Some(&four)), []);
    assert_eq!(kinds(&at(2, 1.0), Some(&four)), [WarningKind::UnusedCpus]);
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
fn a_declared_deviation_is_named_once_with_its_reason() {
    let mut env = two_cpus();
    env.servers.insert(
        "a/x".into(),
        serverbench_results::env::ServerVersion {
            available: true,
            deviations: [(
                "http10".to_owned(),
                "answers HTTP/1.0 with 505; upstream".to_owned(),
            )]
            .into(),
            ..Default::default()
        },
    );
    let records = laps(|_| {});
    let w = crate::analyze(&records, None, Some(&env)).warnings;
    let dev: Vec<_> = w
        .iter()
        .filter(|w| w.kind == WarningKind::KnownDeviation)
        .collect();
    assert_eq!(dev.len(), 1);
    assert!(
        dev[0]
            .message
            .contains("http10 (answers HTTP/1.0 with 505)"),
        "{}",
        dev[0].message
    );
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
