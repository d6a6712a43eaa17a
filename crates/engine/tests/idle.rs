//! `--idle`: a worker with nothing to do naps (auto, following the latency, or a fixed span) or
//! blocks; naps must not lose or delay responses beyond their span, and are recorded.

mod common;

use common::*;
use serverbench_engine::{Idle, Stop};
use serverbench_model::result::IdlePolicy;
use std::time::Duration;

/// A server answering every request 2 ms late: auto naps 1/32 of that (~62 µs).
fn slow_server() -> std::net::SocketAddr {
    http_server(|_, _| Reply::After(Duration::from_millis(2), ok("slow")))
}

#[test]
fn auto_naps_against_a_slow_server_and_records_spans_that_follow_its_latency() {
    // 100 connections answered 2 ms late: a response every ~20 µs wakes a blocking thread far
    // more often than naps of ~62 µs would.
    let mut cfg = http_config(slow_server(), &["/"], true);
    cfg.spec.connections = 100;
    cfg.stop = Stop::Duration(Duration::from_millis(500));
    let r = run(&cfg);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert!(r.requests > 100, "{} requests", r.requests);
    let idle = r.idle.expect("the result records --idle");
    assert_eq!(idle.policy, IdlePolicy::Auto);
    assert!(idle.naps > 0, "{idle:?}");
    // 1/32 of a latency of at least 2 ms is at least 62 µs; the longest nap is capped at
    // 200 µs plus whatever the scheduler adds on a busy machine.
    assert!(idle.nap_us_mean >= 50.0, "{idle:?}");
    assert!(r.latency_us.p50 >= 2000.0, "{:?}", r.latency_us);
}

#[test]
fn auto_keeps_blocking_when_responses_come_rarely() {
    // 2 connections answered 2 ms late: a blocking poll sleeps ~1 ms, longer than naps.
    let mut cfg = http_config(slow_server(), &["/"], true);
    cfg.stop = Stop::Duration(Duration::from_millis(500));
    let r = run(&cfg);
    let idle = r.idle.unwrap();
    assert!(r.requests > 100, "{} requests", r.requests);
    // A few naps may be tried before the trend shows; a napping thread would take thousands.
    assert!(idle.naps < 100, "{idle:?}");
}

#[test]
fn block_never_naps_and_a_fixed_nap_always_does() {
    let addr = slow_server();
    let mut cfg = http_config(addr, &["/"], true);
    cfg.idle = Idle::Block;
    let blocked = run(&cfg).idle.unwrap();
    assert_eq!((blocked.policy, blocked.naps), (IdlePolicy::Block, 0));
    cfg.idle = Idle::Nap(Duration::from_micros(30));
    let napped = run(&cfg).idle.unwrap();
    assert_eq!(napped.policy, IdlePolicy::Nap);
    assert!(napped.naps > 0 && napped.nap_us_mean >= 30.0, "{napped:?}");
}

#[test]
fn naps_add_no_more_than_their_span_to_the_latency() {
    // The same slow server measured blocking and napping 200 µs: the medians differ by less
    // than the nap plus a margin for a noisy machine.
    let addr = slow_server();
    let mut cfg = http_config(addr, &["/"], true);
    cfg.stop = Stop::Requests(300);
    cfg.idle = Idle::Block;
    let blocked = run(&cfg).latency_us.p50;
    cfg.idle = Idle::Nap(Duration::from_micros(200));
    let napped = run(&cfg).latency_us.p50;
    assert!(
        napped - blocked < 200.0 + 500.0,
        "block {blocked} µs, nap {napped} µs"
    );
}

#[test]
fn rate_schedules_block_whatever_the_policy() {
    let mut cfg = http_config(slow_server(), &["/"], true);
    cfg.schedule = serverbench_engine::Schedule::Rate { per_second: 200.0 };
    cfg.idle = Idle::Nap(Duration::from_micros(30));
    let idle = run(&cfg).idle.unwrap();
    assert_eq!(idle.naps, 0, "{idle:?}");
}
