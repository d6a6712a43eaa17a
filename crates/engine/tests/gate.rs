//! A gated run: load unmeasured until the gate opens, then measure for the whole duration.

mod common;

use common::*;
use serverbench_engine::{run_gated, EngineError, Stop, GATE_LEAD};
use serverbench_model::histo;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
fn measurement_starts_a_fixed_lead_after_the_gate_opens() {
    let addr = http_server(|_, _| Reply::Send(ok("hi")));
    let cfg = http_config(addr, &["/"], false);
    let opened = std::sync::Mutex::new(0.0);
    let gate = || {
        std::thread::sleep(Duration::from_millis(300));
        *opened.lock().unwrap() = unix_now();
        true
    };
    let t = Instant::now();
    let r = run_gated(&cfg, &|_| {}, Some(&gate)).unwrap();
    assert_ran_on_the_asked_backend(&r);
    assert!(
        t.elapsed() >= Duration::from_millis(600),
        "300 ms gate + 300 ms"
    );
    let start = r.measure_start_unix_s.unwrap();
    let lead = start - *opened.lock().unwrap();
    // The lead itself, plus whatever a busy machine adds between the gate's return and the
    // engine reading the clock.
    let min = GATE_LEAD.as_secs_f64();
    assert!(
        (min..min + 0.1).contains(&lead),
        "measurement started {lead} s after the gate"
    );
    assert!(r.requests > 0);
    let h = histo::decode(&r.histograms.unwrap().latency_us).unwrap();
    assert_eq!(
        h.len(),
        r.requests,
        "only measured requests are in the histogram"
    );
}

#[test]
fn http2_streams_resume_on_their_open_session_when_the_gate_opens() {
    use common::http2::{h2_config, h2_ok, h2_server, H2Server};
    let (addr, seen) = h2_server(H2Server::default(), None, |_, _| h2_ok("hi"));
    let cfg = h2_config(&format!("http://{addr}/"), 4, None);
    let gate = || {
        std::thread::sleep(Duration::from_millis(200));
        true
    };
    let r = run_gated(&cfg, &|_| {}, Some(&gate)).unwrap();
    assert_ran_on_the_asked_backend(&r);
    assert!(r.requests > 0, "no stream after the release: {r:?}");
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    let connections = seen.connections.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        connections, 2,
        "the sessions opened before the gate are kept"
    );
}

#[test]
fn a_gate_that_stays_shut_cancels_the_run() {
    let addr = http_server(|_, _| Reply::Send(ok("hi")));
    let mut cfg = http_config(addr, &["/"], false);
    // A 5 s run: cancelled, it ends long before (a margin for a busy CI machine).
    cfg.stop = serverbench_engine::Stop::Duration(Duration::from_secs(5));
    let t = Instant::now();
    let err = run_gated(&cfg, &|_| {}, Some(&|| false)).unwrap_err();
    assert!(matches!(err, EngineError::Cancelled), "{err}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

#[test]
fn a_gate_that_answers_no_at_once_stops_every_thread_however_late_it_reaches_its_loop() {
    // The gate answers before some threads reach their loop: each must still go through it
    // (a thread that read the gate's answer as "no gate" ran the whole 5 s).
    let addr = http_server(|_, _| Reply::Send(ok("hi")));
    let mut cfg = http_config(addr, &["/"], false);
    cfg.stop = serverbench_engine::Stop::Duration(Duration::from_secs(5));
    (cfg.threads, cfg.spec.connections) = (4, 4);
    for _ in 0..10 {
        let t = Instant::now();
        let err = run_gated(&cfg, &|_| {}, Some(&|| false)).unwrap_err();
        assert!(matches!(err, EngineError::Cancelled), "{err}");
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    }
}

#[test]
fn a_request_count_cannot_be_gated() {
    let addr = http_server(|_, _| Reply::Send(ok("hi")));
    let mut cfg = http_config(addr, &["/"], false);
    cfg.stop = Stop::Requests(10);
    let err = run_gated(&cfg, &|_| {}, Some(&|| true)).unwrap_err();
    assert!(err.to_string().contains("-n/--requests"), "{err}");
}

#[test]
fn a_refused_target_fails_without_asking_the_gate() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let cfg = http_config(addr, &["/"], false);
    let asked = std::sync::atomic::AtomicBool::new(false);
    let gate = || {
        asked.store(true, std::sync::atomic::Ordering::SeqCst);
        true
    };
    let err = run_gated(&cfg, &|_| {}, Some(&gate)).unwrap_err();
    assert!(matches!(err, EngineError::Refused { .. }), "{err}");
    assert!(
        !asked.load(std::sync::atomic::Ordering::SeqCst),
        "ready without a connection"
    );
}
