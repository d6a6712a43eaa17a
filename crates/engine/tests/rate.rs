//! Open-loop `-R`: the achieved rate, and coordinated-omission correction.

mod common;

use common::*;
use serverbench_engine::{Schedule, Stop};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[test]
fn rate_2000_is_achieved_within_one_percent() {
    let addr = http_server(|_, _| Reply::Send(ok("Hello World!")));
    let mut cfg = http_config(addr, &["/"], false);
    cfg.schedule = Schedule::Rate { per_second: 2000.0 };
    cfg.stop = Stop::Duration(Duration::from_secs(1));
    cfg.spec.connections = 8;
    cfg.threads = 2;
    let r = run(&cfg);
    let achieved = r.rate_achieved.unwrap();
    assert!((achieved - 2000.0).abs() <= 20.0, "achieved {achieved}");
    assert!(
        (r.requests as f64 - 2000.0).abs() <= 20.0,
        "completed {}",
        r.requests
    );
    assert_eq!(r.rate_target, Some(2000.0));
}

#[test]
fn one_300ms_stall_shows_in_corrected_p99_but_not_in_uncorrected() {
    let stall: Mutex<Option<Instant>> = Mutex::new(None);
    let addr = http_server(move |n, _| {
        // Request 400 (~200 ms in) stalls every connection for 300 ms.
        let until = {
            let mut s = stall.lock().unwrap();
            if n == 400 {
                *s = Some(Instant::now() + Duration::from_millis(300));
            }
            *s
        };
        if let Some(until) = until {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
        }
        Reply::Send(ok("x"))
    });
    let mut cfg = http_config(addr, &["/"], false);
    cfg.schedule = Schedule::Rate { per_second: 2000.0 };
    cfg.stop = Stop::Duration(Duration::from_millis(1500));
    cfg.spec.connections = 8;
    let r = run(&cfg);
    let corrected = r.latency_us.p99;
    let uncorrected = r.latency_us_uncorrected.unwrap().p99;
    assert!(corrected >= 150_000.0, "corrected p99 {corrected} µs");
    assert!(uncorrected < 50_000.0, "uncorrected p99 {uncorrected} µs");
    assert!(r.late.unwrap() > 0);
}
