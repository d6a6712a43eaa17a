//! HTTP/2 with prior knowledge (h2c) against in-process `h2` servers: streams, the server's
//! limits, GOAWAY, resets, flow control, checks of statuses and bodies, and the JSON result.

mod common;

use common::http2::*;
use common::*;
use serverbench_engine::{Protocol, Schedule, Stop};
use std::sync::atomic::Ordering;
use std::time::Duration;

fn hello() -> impl Fn(u64, &str) -> H2Reply + Send + Sync + 'static {
    |_, _| h2_ok("Hello World!")
}

#[test]
fn streams_complete_and_are_counted() {
    let (addr, seen) = h2_server(H2Server::default(), None, hello());
    let mut cfg = h2_config(&format!("http://{addr}/hello"), 10, None);
    cfg.stop = Stop::Requests(3000);
    let r = run(&cfg);
    assert_eq!((r.requests, r.status["200"]), (3000, 3000));
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(seen.requests.load(Ordering::SeqCst), 3000);
    assert_eq!(seen.connections.load(Ordering::SeqCst), 2);
    let open = seen.max_open.load(Ordering::SeqCst);
    assert!(
        (2..=10).contains(&open),
        "streams overlap, 10 at most: {open}"
    );
    let h2 = r.http2().expect("an http2 section").clone();
    assert_eq!(
        (h2.protocol.as_str(), h2.streams, h2.goaways),
        ("h2c", 10, 0)
    );
    assert!(r.tls.is_none());
    assert!(r.latency_us.p50 > 0.0);
}

#[test]
fn a_server_limiting_concurrent_streams_to_5_is_respected() {
    let server = H2Server {
        max_concurrent: Some(5),
        ..Default::default()
    };
    let (addr, seen) = h2_server(server, None, hello());
    let mut cfg = h2_config(&format!("http://{addr}/"), 50, None);
    cfg.spec.connections = 1;
    cfg.stop = Stop::Requests(2000);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (2000, 0), "{:?}", r.errors);
    assert_eq!(seen.max_open.load(Ordering::SeqCst), 5);
    let h2 = r.http2().unwrap().clone();
    assert_eq!((h2.streams, h2.max_concurrent_streams), (50, Some(5)));
}

#[test]
fn a_goaway_mid_run_reconnects_and_is_counted() {
    let server = H2Server {
        goaway_after: Some(100),
        ..Default::default()
    };
    let (addr, seen) = h2_server(server, None, hello());
    let mut cfg = h2_config(&format!("http://{addr}/"), 8, None);
    cfg.stop = Stop::Requests(1000);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (1000, 0), "{:?}", r.errors);
    assert!(seen.connections.load(Ordering::SeqCst) >= 10);
    let h2 = r.http2().unwrap().clone();
    assert!(h2.goaways >= 8, "a GOAWAY per 100 requests: {h2:?}");
    assert!(r.connects.unwrap() >= 8, "{:?}", r.connects);
}

#[test]
fn reset_streams_are_counted_by_code_and_refused_ones_apart() {
    let (addr, _) = h2_server(H2Server::default(), None, |n, _| match n % 10 {
        3 => H2Reply::Reset(h2::Reason::INTERNAL_ERROR),
        7 => H2Reply::Reset(h2::Reason::REFUSED_STREAM),
        _ => h2_ok("x"),
    });
    let mut cfg = h2_config(&format!("http://{addr}/"), 4, None);
    cfg.stop = Stop::Requests(1000);
    let r = run(&cfg);
    assert_eq!(r.requests, 800, "{:?}", r.errors);
    assert_eq!((r.errors.protocol, r.errors.refused_stream), (100, 100));
    assert_eq!(r.http2().unwrap().errors["INTERNAL_ERROR"], 100);
}

#[test]
fn a_1_mib_body_completes_through_small_windows_both_ways() {
    let body = vec![b'b'; 1 << 20];
    let served = body.clone();
    let server = H2Server {
        window: Some(16_384),
        conn_window: Some(65_535),
        ..Default::default()
    };
    let (addr, seen) = h2_server(server, None, move |_, _| {
        H2Reply::Send(200, Vec::new(), served.clone())
    });
    let mut cfg = h2_config(&format!("http://{addr}/"), 2, None);
    if let Protocol::Http2(h) = &mut cfg.protocol {
        h.window = 65_535; // ours: WINDOW_UPDATEs every 32 KiB
        h.requests[0] =
            serverbench_wire::h2::Request::new(&[0x83, 0x86, 0x84, 0x01, 0x01, b'x'], Some(&body));
    }
    cfg.stop = Stop::Requests(20);
    cfg.spec.timeout = Duration::from_secs(10);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (20, 0), "{:?}", r.errors);
    assert!(r.bytes_read > 20 << 20);
    assert_eq!(seen.body_bytes.load(Ordering::SeqCst), 20 << 20);
}

#[test]
fn verify_and_expect_status_work_as_for_http_1_1() {
    let (addr, _) = h2_server(H2Server::default(), None, |n, _| match n % 4 {
        0 => H2Reply::Send(404, Vec::new(), b"no".to_vec()),
        1 => h2_ok("long body"),
        _ => h2_ok("body"),
    });
    let url = format!("http://{addr}/");
    let mut cfg = h2_config(&url, 1, None);
    cfg.spec.connections = 1;
    cfg.stop = Stop::Requests(400);
    if let Protocol::Http2(h) = &mut cfg.protocol {
        h.verify = true;
        h.expect_status = vec![200, 404];
    }
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.status), (400, 0));
    // The first body was the 404's: every other one differs from it.
    assert_eq!(r.errors.body, 300, "{:?}", r.errors);
    assert_eq!((r.status["404"], r.status["200"]), (100, 300));
}

#[test]
fn rate_is_held_per_stream_and_latency_is_corrected() {
    let (addr, _) = h2_server(H2Server::default(), None, hello());
    // Streams enough that the rate holds while responses take up to 32 ms (a busy machine).
    let mut cfg = h2_config(&format!("http://{addr}/"), 32, None);
    cfg.schedule = Schedule::Rate { per_second: 1000.0 };
    cfg.stop = Stop::Duration(Duration::from_millis(1000));
    let r = run(&cfg);
    let achieved = r.rate_achieved.unwrap();
    assert!((950.0..=1050.0).contains(&achieved), "{achieved}");
    assert!(r.latency_us_uncorrected.is_some());
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
}

#[test]
fn response_headers_using_the_dynamic_table_decode() {
    // The h2 crate's encoder indexes headers: later responses refer to the dynamic table, and
    // the changing `x-seq` values evict older entries.
    let (addr, _) = h2_server(H2Server::default(), None, |n, _| {
        let status = if n % 3 == 0 { 201 } else { 200 };
        let headers = vec![
            ("x-seq".to_string(), format!("{n:0>400}")),
            ("content-type".to_string(), "text/plain".to_string()),
        ];
        H2Reply::Send(status, headers, b"ok".to_vec())
    });
    let mut cfg = h2_config(&format!("http://{addr}/"), 1, None);
    cfg.spec.connections = 1;
    cfg.stop = Stop::Requests(300);
    let r = run(&cfg);
    assert_eq!(
        (r.status["201"], r.status["200"]),
        (100, 200),
        "{:?}",
        r.errors
    );
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
}

#[test]
fn h2c_json_validates_against_the_schema() {
    let server = H2Server {
        max_concurrent: Some(7),
        ..Default::default()
    };
    let (addr, _) = h2_server(server, None, hello());
    let v = serde_json::to_value(run(&h2_config(&format!("http://{addr}/"), 3, None))).unwrap();
    assert_schema_valid(&v);
    assert_eq!(v["protocol"]["protocol"], "h2c");
    assert_eq!(v["protocol"]["max_concurrent_streams"], 7);
    assert_eq!(v["protocol"]["initial_window_size"], 65_535);
    assert_eq!(v["errors"]["refused_stream"], 0);
}

#[test]
fn window_and_eager_reads_complete_every_stream_even_when_responses_shrink() {
    // The first 1500 responses teach the engine a size (past a connection's eager first reads);
    // the rest are smaller, so a predicted mark overshoots until the guard drops it.
    let (addr, _) = h2_server(H2Server::default(), None, |n, _| {
        let body = if n < 1500 {
            "x".repeat(400)
        } else {
            "y".into()
        };
        h2_ok(&body)
    });
    for reads in [
        serverbench_engine::Reads::Window,
        serverbench_engine::Reads::Eager,
    ] {
        let mut cfg = h2_config(&format!("http://{addr}/"), 8, None);
        cfg.spec.connections = 1;
        cfg.reads = reads;
        cfg.stop = Stop::Requests(3000);
        let r = run(&cfg);
        assert_eq!(
            (r.requests, r.errors.total()),
            (3000, 0),
            "{reads:?}: {:?}",
            r.errors
        );
    }
}

#[test]
fn a_mix_over_h2c_draws_by_weight_and_counts_errors_on_their_entry() {
    let (addr, seen) = h2_server(H2Server::default(), None, |_, path| match path {
        "/b" => H2Reply::Send(500, Vec::new(), b"no".to_vec()),
        _ => h2_ok("a"),
    });
    let text = "[[request]]\npath = \"/a\"\nweight = 3\n\
                [[request]]\nmethod = \"POST\"\npath = \"/b\"\nbody = \"xyz\"\n";
    let no_files = |_: &std::path::Path| Err(std::io::Error::other("none"));
    let mix = serverbench_model::Mix::parse(text, "m.toml".as_ref(), &no_files).unwrap();
    let mut spec = serverbench_model::LoadSpec {
        target: addr.to_string(),
        connections: 2,
        threads: Some(1),
        requests: Some(4000),
        io: io(),
        ..Default::default()
    };
    spec.work.mix_requests = Some(mix);
    spec.transport.protocol = serverbench_model::Protocol::H2c;
    spec.transport.streams = Some(8);
    let r = run(&serverbench_engine::Config::try_from(&spec).unwrap());
    assert_eq!(r.requests, 4000);
    let (a, b) = (&r.mix()[0], &r.mix()[1]);
    assert_eq!(a.requests + b.requests, 4000);
    let share = a.requests as f64 / 4000.0;
    assert!((share - 0.75).abs() < 0.03, "{share}");
    assert_eq!((a.errors.status, b.errors.status), (0, b.requests));
    assert_eq!(seen.body_bytes.load(Ordering::SeqCst), 3 * b.requests);
}
