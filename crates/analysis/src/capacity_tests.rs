//! Tests of the capacity search: the bracket, the bisection, the client's limit and its ceiling.

use super::*;

fn slo(s: &str) -> Slo {
    s.parse().unwrap()
}

/// A server of `capacity` req/s: 1 ms p99 below it, 50 ms above, the client never short.
fn server(capacity: f64) -> impl FnMut(f64) -> Result<Step, String> {
    move |rate| {
        let p99 = if rate <= capacity { 1000.0 } else { 50_000.0 };
        Ok(Step {
            rate_target: rate,
            rate_achieved: rate.min(capacity),
            requests: 10_000,
            p50_us: p99 / 2.0,
            p90_us: p99,
            p99_us: p99,
            p999_us: p99,
            ..Step::default()
        })
    }
}

#[test]
fn the_search_brackets_then_bisects_to_within_the_precision() {
    let plan = Plan::default();
    let (out, err) = search(&slo("p99<=5ms"), &plan, server(2000.0));
    assert!(err.is_none());
    assert_eq!(out.ending, Ending::Converged);
    let (met, missed) = (out.capacity.unwrap(), out.failed_at.unwrap());
    assert!(met <= 2000.0 && missed > 2000.0, "{met} {missed}");
    assert!(missed <= met * 1.05, "{met} {missed}");
    let rates: Vec<f64> = out.steps.iter().map(|s| s.rate_target).collect();
    assert_eq!(&rates[..4], &[500.0, 1000.0, 2000.0, 4000.0]);
    assert!(out.steps.len() < 12, "{rates:?}");
}

#[test]
fn a_tighter_precision_takes_more_steps_and_lands_closer() {
    let coarse = Plan {
        precision: 0.2,
        ..Plan::default()
    };
    let fine = Plan {
        precision: 0.01,
        ..Plan::default()
    };
    let (c, _) = search(&slo("p99<=5ms"), &coarse, server(3000.0));
    let (f, _) = search(&slo("p99<=5ms"), &fine, server(3000.0));
    assert!(f.steps.len() > c.steps.len());
    assert!(3000.0 - f.capacity.unwrap() < 3000.0 - c.capacity.unwrap() + 1.0);
    assert!(f.capacity.unwrap() >= 2970.0, "{:?}", f.capacity);
}

#[test]
fn the_step_limit_stops_the_search_with_the_bracket_so_far() {
    let plan = Plan {
        max_steps: 5,
        ..Plan::default()
    };
    let (out, _) = search(&slo("p99<=5ms"), &plan, server(2500.0));
    assert_eq!(out.ending, Ending::StepLimit);
    assert_eq!(out.steps.len(), 5);
    assert_eq!(out.capacity, Some(2000.0));
    assert_eq!(out.failed_at, Some(3000.0));
}

#[test]
fn a_goal_missed_at_the_first_rate_finds_no_capacity_and_says_why() {
    let (out, _) = search(&slo("p99<=5ms"), &Plan::default(), server(100.0));
    assert_eq!(out.ending, Ending::GoalMissedAtStart);
    assert_eq!(out.capacity, None);
    assert_eq!(out.steps.len(), 1);
    assert!(out.note.unwrap().contains("p99 50ms > 5ms"));
}

/// A client that sends at most `ceiling` req/s (its CPU ≥ 90% busy above it when `busy`,
/// else only short) against a server of `capacity` req/s.
fn client(ceiling: f64, busy: bool, capacity: f64) -> impl FnMut(f64) -> Result<Step, String> {
    let mut server = server(capacity);
    move |rate| {
        let mut step = server(rate)?;
        step.rate_achieved = rate.min(ceiling);
        step.client_saturated = busy && rate > ceiling;
        Ok(step)
    }
}

#[test]
fn a_rate_the_client_cannot_send_is_bisected_below_and_ends_at_the_clients_limit() {
    let plan = Plan::default();
    let (out, _) = search(&slo("p99<=5ms"), &plan, client(1500.0, false, 1e9));
    assert_eq!(out.ending, Ending::ClientLimit);
    let rates: Vec<f64> = out.steps.iter().map(|s| s.rate_target).collect();
    assert_eq!(&rates[..4], &[500.0, 1000.0, 2000.0, 1500.0], "{rates:?}");
    // Up to 95% of the rate asked is a kept schedule: the answer is within that.
    let met = out.capacity.unwrap();
    assert!((1500.0..=1500.0 / 0.95).contains(&met), "{rates:?}");
    let top = out.client_limit_at.unwrap();
    assert!(top > met && top <= met * 1.05, "{met} {top}");
    assert_eq!(out.client_ceiling, Some(1500.0));
    assert_eq!(out.failed_at, None);
    let note = out.note.unwrap();
    assert!(
        note.contains(&format!("capacity ≥ {met:.0}/s (client limit 1500/s)")),
        "{note}"
    );
    assert!(note.contains("-t") && note.contains("--hosts"), "{note}");
}

#[test]
fn a_busy_client_above_the_servers_knee_still_finds_the_knee_and_its_own_ceiling() {
    let plan = Plan::default();
    let (out, _) = search(&slo("p99<=5ms"), &plan, client(3000.0, true, 2000.0));
    assert_eq!(out.ending, Ending::Converged, "{:?}", out.steps);
    assert_eq!(out.capacity, Some(2000.0));
    let missed = out.failed_at.unwrap();
    assert!(missed > 2000.0 && missed <= 2100.0, "{missed}");
    assert_eq!(out.client_limit_at, Some(4000.0));
    assert_eq!(out.client_ceiling, Some(3000.0));
    assert!(out.steps[3].client_limit.as_ref().unwrap().contains("CPU"));
    assert_eq!(out.note, None);
}

#[test]
fn a_client_that_cannot_send_the_first_rate_finds_no_capacity_and_says_what_to_change() {
    let (out, _) = search(&slo("p99<=5ms"), &Plan::default(), client(100.0, true, 1e9));
    assert_eq!(out.ending, Ending::ClientLimit);
    assert_eq!((out.capacity, out.client_ceiling), (None, Some(100.0)));
    assert_eq!(out.steps.len(), 1);
    let note = out.note.unwrap();
    assert!(
        note.contains("CPU") && note.contains("--start-rate"),
        "{note}"
    );
}

#[test]
fn a_server_at_its_limit_misses_the_goal_rather_than_the_clients() {
    let mut step = Step {
        rate_target: 4000.0,
        rate_achieved: 2000.0,
        p99_us: 90_000.0,
        ..Step::default()
    };
    judge(&slo("p99<=5ms"), &mut step);
    assert!(!step.met);
    assert_eq!(step.client_limit, None);
}

#[test]
fn a_saturated_client_host_is_named_in_its_steps_limit() {
    let mut step = Step {
        rate_target: 800.0,
        rate_achieved: 800.0,
        client_saturated: true,
        saturated_hosts: vec!["sb-client2".into()],
        ..Step::default()
    };
    judge(&slo("p99<=60ms"), &mut step);
    let why = step.client_limit.unwrap();
    assert!(
        why.starts_with("at 800/s client host sb-client2's CPU was ≥90% busy"),
        "{why}"
    );
}

#[test]
fn a_shortfall_with_failed_requests_is_a_miss_and_never_the_clients_limit() {
    // Half the requests failed (a client host died mid-step): the goal is on p99 only.
    let mut step = Step {
        rate_target: 400.0,
        rate_achieved: 210.0,
        errors_pct: 49.0,
        p99_us: 20_000.0,
        ..Step::default()
    };
    judge(&slo("p99<=60ms"), &mut step);
    assert_eq!(step.client_limit, None);
    assert!(!step.met);
    assert_eq!(step.misses, ["sent 210/s of 400/s with 49.0% errors"]);
}

#[test]
fn a_shortfall_with_every_connection_waiting_on_the_server_is_a_miss_not_the_clients_limit() {
    // 4 connections to a server of 400/s asked for 412/s: the goal held in a 1 s step, but
    // the requests not sent were queued behind the server's answers.
    let backlog = Step {
        rate_target: 412.0,
        rate_achieved: 384.0,
        p99_us: 40_000.0,
        connections: 4,
        in_flight_at_end: 4,
        ..Step::default()
    };
    let mut step = backlog.clone();
    judge(&slo("p99<=100ms"), &mut step);
    assert_eq!(step.client_limit, None);
    assert_eq!(
        step.misses,
        ["sent 384/s of 412/s: every connection was waiting on the server (4 in flight at the end)"]
    );
    // Connections free at the end: the client did not keep its schedule.
    let mut idle = Step {
        in_flight_at_end: 1,
        ..backlog.clone()
    };
    judge(&slo("p99<=100ms"), &mut idle);
    assert!(
        idle.misses.is_empty() && idle.client_limit.is_some(),
        "{idle:?}"
    );
    // A saturated client is the client's limit, whatever its connections.
    let mut busy = Step {
        client_saturated: true,
        ..backlog
    };
    judge(&slo("p99<=100ms"), &mut busy);
    assert!(
        busy.misses.is_empty() && busy.client_limit.is_some(),
        "{busy:?}"
    );
}

#[test]
fn an_error_mid_search_keeps_the_steps_measured_so_far() {
    let mut n = 0;
    let dying = |rate: f64| {
        n += 1;
        if n == 3 {
            return Err("refused".to_string());
        }
        server(1e9)(rate)
    };
    let (out, err) = search(&slo("p99<=5ms"), &Plan::default(), dying);
    assert_eq!(err.as_deref(), Some("refused"));
    assert_eq!(out.ending, Ending::Aborted);
    assert_eq!(out.steps.len(), 2);
    assert_eq!(out.capacity, Some(1000.0));
}

#[test]
fn the_ceiling_ends_a_search_whose_goal_always_holds() {
    let plan = Plan {
        ceiling: 3000.0,
        ..Plan::default()
    };
    let (out, _) = search(&slo("p99<=5ms"), &plan, server(1e9));
    assert_eq!(out.ending, Ending::RateCeiling);
    assert_eq!(out.capacity, Some(3000.0));
}

#[test]
fn a_step_lasts_long_enough_for_a_hundred_samples_beyond_the_quantile() {
    assert_eq!(samples_needed(&slo("p99<=5ms")), 10_000);
    assert_eq!(samples_needed(&slo("p50<=1ms,p99.9<=9ms")), 100_000);
    assert_eq!(samples_needed(&slo("errors<=1%")), 1000);
    let (floor, cap) = (Duration::from_secs(1), Duration::from_secs(10));
    let p99 = slo("p99<=5ms");
    assert_eq!(
        step_duration(&p99, 2000.0, floor, cap),
        Duration::from_secs(5)
    );
    assert_eq!(step_duration(&p99, 100.0, floor, cap), cap);
    assert_eq!(step_duration(&p99, 1e6, floor, cap), floor);
}

#[test]
fn a_suites_find_max_becomes_a_plan_and_a_bad_value_names_its_key() {
    let find_max = |precision, max_steps, start_rate| FindMax {
        slo: slo("p99<=5ms"),
        precision,
        max_steps,
        start_rate,
    };
    let plan = Plan::of(&find_max(Some(2.0), None, Some(100.0))).unwrap();
    assert_eq!(
        (plan.start, plan.precision, plan.max_steps),
        (100.0, 0.02, 20)
    );
    let bad = |f: FindMax| Plan::of(&f).unwrap_err().to_string();
    assert!(bad(find_max(Some(0.0), None, None)).contains("precision"));
    assert!(bad(find_max(None, Some(1), None)).contains("max_steps"));
    assert!(bad(find_max(None, None, Some(0.0))).contains("start_rate"));
}

#[test]
fn a_step_is_the_spec_at_its_rate_for_its_length_after_its_warm_up() {
    let spec = LoadSpec {
        requests: Some(5),
        connections: 16,
        ..LoadSpec::default()
    };
    let fixed = Some(Duration::from_secs(2));
    let length = step_length(&slo("p99<=5ms"), 400.0, fixed);
    let s = step_spec(&spec, 400.0, length, STEP_WARMUP);
    assert_eq!((s.rate, s.requests, s.connections), (Some(400.0), None, 16));
    assert_eq!((s.duration, s.warmup), (fixed, STEP_WARMUP));
    let free = step_length(&slo("p99<=5ms"), 2000.0, None);
    assert_eq!(free, Duration::from_secs(5));
}

#[test]
fn a_step_where_no_request_succeeded_is_an_error_naming_its_rate() {
    let mut r = LoadResult {
        rate_target: Some(800.0),
        ..LoadResult::default()
    };
    r.errors.connect = 12;
    let why = step_of(&r).unwrap_err().to_string();
    assert!(why.starts_with("at 800/s: no request succeeded"), "{why}");
    r.requests = 100;
    assert_eq!(step_of(&r).unwrap().requests, 112);
}

#[test]
fn a_step_that_nothing_answered_is_an_error_and_not_a_goal_met() {
    let r = LoadResult {
        rate_target: Some(800.0),
        duration_s: 2.0,
        in_flight_at_end: 1600,
        ..LoadResult::default()
    };
    let why = step_of(&r).unwrap_err().to_string();
    assert_eq!(
        why,
        "at 800/s: no answer in the 2.0 s step: 1600 requests in flight"
    );
}
