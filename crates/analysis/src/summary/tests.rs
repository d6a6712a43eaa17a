//! Tests of the summary: speed factors, ranks, intervals and the warnings' wording.
use super::*;
use serverbench_model::failure::FailureKind;
use serverbench_model::Mode;
use serverbench_model::Tool;
use serverbench_results::record::LoadParams;

fn lap(server: &str, n: u32, rps: Option<f64>) -> LapRecord {
    LapRecord {
        suite: "s".into(),
        server: server.into(),
        scenario: "hello".into(),
        profile: "c50".into(),
        lap: n,
        status: if rps.is_some() {
            LapStatus::Ok
        } else {
            LapStatus::Failed
        },
        failure: rps
            .is_none()
            .then(|| LapFailure::new(FailureKind::Load, "exit status 1").with_log_tail("log tail")),
        tool: Tool::Serverbench,
        started_at: String::new(),
        wall_s: 1.0,
        params: LoadParams::default(),
        load: rps.map(|r| Measurement {
            rps: Some(r),
            requests: Some(r as u64),
            errors_total: Some(r as u64 / 100),
            ..Measurement::default()
        }),
        server_stats: None,
        roles: Default::default(),
        database: None,
        hosts: None,
        disturbance: None,
    }
}

fn fixture() -> Vec<LapRecord> {
    let mut laps = Vec::new();
    for n in 1..=3 {
        laps.push(lap("fast", n, Some(200.0 + n as f64)));
        laps.push(lap("slow", n, Some(100.0 + n as f64)));
        laps.push(lap("broken", n, (n != 2).then_some(50.0)));
    }
    laps
}

#[test]
fn a_tcp_stream_table_has_no_latency_or_cpu_per_request_and_speaks_of_messages() {
    let laps: Vec<LapRecord> = (1..=3)
        .map(|n| {
            let mut r = lap("echo", n, Some([100.0, 200.0, 100.0][n as usize - 1]));
            r.params.work.mode = Mode::TcpStream;
            if let Some(m) = r.load.as_mut() {
                m.latency_us.p50 = Some(0.0);
                m.client_saturated = Some(true);
                m.mbps_down = Some(80.0);
            }
            r
        })
        .collect();
    let s = crate::analyze(&laps, None, None);
    let row = &s.tables[0].servers[0];
    assert_eq!((row.latency_p50_us, row.cpu_us_per_request), (None, None));
    let text: Vec<&str> = s.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(text.iter().any(|w| w.contains("msg/s varies")), "{text:?}");
    assert!(
        text.iter()
            .any(|w| w.contains("80 Mbps down is a lower bound")),
        "{text:?}"
    );
}

#[test]
fn speed_factors_are_ratios_of_medians_to_the_slowest_by_default() {
    let s = summarize(&fixture(), None);
    let t = &s.tables[0];
    assert_eq!(t.baseline.as_deref(), Some("broken"));
    let names: Vec<&str> = t.servers.iter().map(|r| r.server.as_str()).collect();
    assert_eq!(names, ["fast", "slow", "broken"]);
    assert_eq!(t.servers[0].speed_factor.unwrap().ratio, 202.0 / 50.0);
    assert_eq!(t.servers[2].speed_factor.unwrap().interval, None);
}

#[test]
fn an_explicit_baseline_is_one_and_others_are_relative_to_it() {
    let s = summarize(&fixture(), Some("slow"));
    let slow = s.tables[0]
        .servers
        .iter()
        .find(|r| r.server == "slow")
        .unwrap();
    assert_eq!(slow.speed_factor.unwrap().ratio, 1.0);
    assert_eq!(s.tables[0].servers[0].rank, Some(1));
}

#[test]
fn failed_laps_are_counted_with_the_first_failure_and_warned_about() {
    let s = crate::analyze(&fixture(), None, None);
    let b = &s.tables[0].servers[2];
    assert_eq!((b.laps, b.failed_laps), (3, 1));
    let first = b.first_failure.as_ref().unwrap();
    assert_eq!(
        (first.kind, first.detail.as_str()),
        (FailureKind::Load, "exit status 1")
    );
    // "fast": 201 + 202 + 203 requests with 2 errors each: 6 / 612.
    assert_eq!(s.tables[0].servers[0].error_rate, Some(6.0 / 612.0));
    let kinds: Vec<WarningKind> = s.warnings.iter().map(|w| w.kind).collect();
    assert!(kinds.contains(&WarningKind::FailedLaps) && kinds.contains(&WarningKind::FewLaps));
    assert!(kinds.contains(&WarningKind::Errors));
}

#[test]
fn a_missing_baseline_leaves_no_speed_factors_and_says_so() {
    let s = crate::analyze(&fixture(), Some("absent"), None);
    assert!(s.tables[0].servers.iter().all(|r| r.speed_factor.is_none()));
    assert!(s
        .warnings
        .iter()
        .any(|w| w.kind == WarningKind::MissingBaseline));
}

/// A gRPC lap of `server` answering 1,000 calls/s, `failed` of them with grpc-status 1.
fn grpc_lap(server: &str, n: u32, failed: u64) -> LapRecord {
    let mut r = lap(server, n, Some(1000.0));
    r.params.work.mode = Mode::Grpc;
    let m = r.load.as_mut().unwrap();
    m.errors_total = Some(failed);
    m.errors = Some(serverbench_model::result::Errors {
        verdict: failed,
        ..Default::default()
    });
    m.grpc = Some(serverbench_model::result::GrpcResult {
        status_codes: [
            ("OK".to_string(), 1000 - failed),
            ("CANCELLED".into(), failed),
        ]
        .into(),
        ..Default::default()
    });
    r
}

#[test]
fn an_http_lap_whose_answers_had_bad_statuses_counts_each_once_in_its_error_rate() {
    let laps: Vec<LapRecord> = (1..=3)
        .map(|n| {
            let mut r = lap("s", n, Some(1000.0));
            let m = r.load.as_mut().unwrap();
            m.errors_total = Some(250);
            m.errors = Some(serverbench_model::result::Errors {
                status: 200,
                connect: 50,
                ..Default::default()
            });
            r
        })
        .collect();
    let s = summarize(&laps, None);
    // Each lap: 1,000 answered (200 of them with a bad status) and 50 connects that failed.
    assert_eq!(s.tables[0].servers[0].error_rate, Some(250.0 / 1050.0));
}

#[test]
fn a_grpc_server_failing_its_calls_fast_ranks_by_the_calls_that_ended_ok() {
    let laps: Vec<LapRecord> = (1..=3)
        .flat_map(|n| [grpc_lap("fails", n, 900), grpc_lap("right", n, 0)])
        .collect();
    let s = summarize(&laps, None);
    let t = &s.tables[0];
    assert_eq!(t.servers[0].server, "right");
    let fails = &t.servers[1];
    assert_eq!(fails.rps.unwrap().median, 100.0);
    // 2,700 of the 3,000 calls answered failed: not 2,700 of 5,700.
    assert_eq!(fails.error_rate, Some(0.9));
}
