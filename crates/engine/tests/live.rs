//! The live view's ticks: a snapshot a second, the warm-up as its own phase, and measured
//! figures that agree with the result.

mod common;

use common::*;
use serverbench_engine::{Event, Stop};
use serverbench_model::live::{Phase, Snapshot};
use std::sync::Mutex;
use std::time::Duration;

#[test]
fn ticks_show_the_warm_up_then_the_measured_figures_so_far() {
    let addr = http_server(|_, _| Reply::Send(ok("hi")));
    let mut cfg = http_config(addr, &["/"], false);
    cfg.spec.warmup = Duration::from_millis(1500);
    cfg.stop = Stop::Duration(Duration::from_millis(2500));
    let ticks: Mutex<Vec<Snapshot>> = Mutex::new(Vec::new());
    let observer = |e: Event| {
        if let Event::Tick { snapshot, .. } = e {
            ticks.lock().unwrap().push(*snapshot);
        }
    };
    let r = serverbench_engine::run(&cfg, &observer).unwrap();
    assert_ran_on_the_asked_backend(&r);
    let ticks = ticks.into_inner().unwrap();
    let phases: Vec<Phase> = ticks.iter().map(|s| s.phase).collect();
    // A tick a second into each phase: at 1 s of the 1.5 s warm-up, then at 1 and 2 s of the
    // 2.5 s measurement (the last one may be missed on a busy machine).
    assert!(
        phases.len() >= 2
            && phases[0] == Phase::WarmUp
            && phases[1..].iter().all(|&p| p == Phase::Measuring)
            && phases.len() <= 3,
        "{phases:?}"
    );
    let warm = &ticks[0];
    assert!(warm.requests > 0 && warm.rate_now > 0.0, "{warm:?}");
    assert!(warm.p50_us.is_some() && warm.p99_us >= warm.p50_us);
    assert_eq!(warm.connected, cfg.spec.connections as u64);
    let last = ticks.last().unwrap();
    assert!(
        (Duration::from_millis(950)..Duration::from_millis(2500)).contains(&last.elapsed),
        "{:?} into the measurement",
        last.elapsed
    );
    let share = last.elapsed.as_secs_f64() / 2.5;
    assert!(
        last.requests <= r.requests && last.requests as f64 >= r.requests as f64 * share / 2.0,
        "{:?} of 2.5 s measured: {} of {} requests",
        last.elapsed,
        last.requests,
        r.requests
    );
    assert_eq!(last.errors.total(), 0);
}
