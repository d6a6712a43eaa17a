//! gRPC unary calls (h2c with prior knowledge) against an in-process `h2` server implementing
//! the benchmark service: calls judged and counted by status code, each fault by its cause,
//! `--deadline` sent as `grpc-timeout`, `-R`, and the JSON result against the schema.

mod common;

use common::grpc::*;
use common::grpc_server::*;
use common::*;
use serverbench_engine::{Schedule, Stop};
use serverbench_model::spec::GrpcStream;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[test]
fn sum_calls_complete_verified_and_are_counted_by_status_code() {
    let (addr, seen) = grpc_server(Fault::None, 1);
    let mut cfg = grpc_config(addr, "Sum", 8);
    cfg.stop = Stop::Requests(2000);
    let r = run(&cfg);
    assert_eq!(r.requests, 2000);
    assert_eq!(r.errors.total(), 0, "{:?} {:?}", r.errors, r.grpc());
    let g = r.grpc().expect("a grpc block").clone();
    assert_eq!(g.ok_calls(), 2000);
    assert_eq!((g.protocol.as_str(), g.streams), ("h2c", 8));
    assert_eq!(g.method, "/serverbench.Bench/Sum");
    assert_eq!((g.messages_sent, g.messages_received), (2000, 2000));
    assert_eq!(g.message_bytes_received, 2000 * 7);
    assert_eq!(g.deadline_ms, Some(500));
    assert_eq!(seen.timeout.lock().unwrap().as_deref(), Some("500m"));
    assert!(seen.calls.load(Ordering::SeqCst) >= 2000);
    assert!(r.latency_us.p99 > 0.0);
    let json = serde_json::to_value(&r).unwrap();
    assert_schema_valid(&json);
}

#[test]
fn echo_calls_carry_the_message_both_ways() {
    let (addr, _) = grpc_server(Fault::None, 1);
    let mut cfg = grpc_config(addr, "Echo", 4);
    cfg.stop = Stop::Requests(500);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (500, 0), "{:?}", r.grpc());
    let g = r.grpc().unwrap();
    // Payload{data: 100 bytes}: tag, length, data; framed: 5 more.
    assert_eq!(g.message_bytes_sent, 500 * 107);
    assert_eq!(g.message_bytes_received, 500 * 107);
}

#[test]
fn a_server_answering_200_with_grpc_status_13_fails_every_call_by_code() {
    let (addr, _) = grpc_server(Fault::Status13, 1);
    let mut cfg = grpc_config(addr, "Sum", 4);
    cfg.stop = Stop::Requests(300);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.verdict), (300, 300));
    assert_eq!(r.status["200"], 300, "HTTP says 200 every time");
    let g = r.grpc().unwrap();
    assert_eq!(g.status_codes["INTERNAL"], 300);
    assert_eq!(g.failures["grpc-status"], 300);
    assert_eq!(g.ok_calls(), 0);
}

#[test]
fn trailers_only_no_trailers_long_messages_and_wrong_sums_are_counted_by_cause() {
    for (fault, cause) in [
        (Fault::TrailersOnly14, "grpc-status"),
        (Fault::NoTrailers, "no trailers"),
        (Fault::LongMessage, "framing"),
        (Fault::WrongSum, "verify"),
    ] {
        let (addr, _) = grpc_server(fault, 2);
        let mut cfg = grpc_config(addr, "Sum", 4);
        cfg.stop = Stop::Requests(400);
        let r = run(&cfg);
        let g = r.grpc().unwrap();
        assert_eq!(r.requests, 400, "{fault:?}");
        let n = g.failures.get(cause).copied().unwrap_or(0);
        assert!(
            (150..=250).contains(&n),
            "{fault:?}: half fail by {cause}: {g:?}"
        );
        assert_eq!(r.errors.verdict, n, "{fault:?}: {:?}", r.errors);
        if fault == Fault::TrailersOnly14 {
            assert_eq!(g.status_codes["UNAVAILABLE"], n);
        }
    }
}

#[test]
fn reset_streams_are_counted_by_code_and_a_timed_run_ends_on_time() {
    let (addr, _) = grpc_server(Fault::Reset, 3);
    let mut cfg = grpc_config(addr, "Sum", 4);
    cfg.stop = Stop::Duration(Duration::from_millis(400));
    let t = Instant::now();
    let r = run(&cfg);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    let g = r.grpc().unwrap();
    assert!(r.errors.protocol > 0, "{:?}", r.errors);
    assert_eq!(g.failures["RST_STREAM CANCEL"], r.errors.protocol);
    assert!(g.ok_calls() > 0);
}

#[test]
fn grpcs_calls_go_over_tls_with_alpn_h2_and_a_server_without_h2_is_refused() {
    let pki = common::tls::Pki::new();
    let (addr, _) = grpcs_server(&pki, &[b"h2"]);
    let mut cfg = grpcs_config(addr, "Sum", 4, &pki);
    cfg.stop = Stop::Requests(500);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (500, 0), "{:?}", r.grpc());
    let g = r.grpc().unwrap();
    assert_eq!((g.protocol.as_str(), g.ok_calls()), ("h2", 500));
    assert_eq!(r.tls.as_ref().map(|t| t.handshakes), Some(2));
    let (addr, _) = grpcs_server(&pki, &[b"http/1.1"]);
    let mut cfg = grpcs_config(addr, "Sum", 4, &pki);
    cfg.stop = Stop::Duration(Duration::from_millis(300));
    let r = run(&cfg);
    assert_eq!(r.requests, 0);
    assert!(r.errors.tls > 0, "{:?}", r.errors);
}

#[test]
fn a_server_dying_mid_run_is_counted_the_run_ends_on_time_and_its_calls_are_kept() {
    let (addr, _) = grpc_server(Fault::Die, 300);
    let mut cfg = grpc_config(addr, "Sum", 4);
    cfg.stop = Stop::Duration(Duration::from_millis(600));
    let t = Instant::now();
    let r = run(&cfg);
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    let g = r.grpc().unwrap();
    assert!((250..300).contains(&g.ok_calls()), "{g:?}");
    assert_eq!(
        r.requests,
        g.ok_calls(),
        "every call answered before was OK"
    );
    assert!(r.errors.total() > 0, "the lost connections: {:?}", r.errors);
    assert_eq!(r.errors.verdict, 0, "{:?}", r.errors);
}

#[test]
fn an_open_loop_rate_is_kept_with_calls() {
    let (addr, _) = grpc_server(Fault::None, 1);
    let mut cfg = grpc_config(addr, "Sum", 4);
    cfg.schedule = Schedule::Rate { per_second: 2000.0 };
    cfg.stop = Stop::Duration(Duration::from_millis(500));
    let r = run(&cfg);
    assert_eq!(r.errors.total(), 0, "{:?}", r.grpc());
    assert!((700..=1300).contains(&r.requests), "{}", r.requests);
}

#[test]
fn server_streams_count_every_chunk_verified_and_time_each_message() {
    let (addr, _) = grpc_server(Fault::None, 1);
    let mut cfg = grpc_stream_config(addr, GrpcStream::Server, (50, 32), 4);
    cfg.stop = Stop::Requests(400);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (400, 0), "{:?}", r.grpc());
    let g = r.grpc().unwrap();
    assert_eq!(g.method, "/serverbench.Bench/ServerStream");
    assert_eq!((g.messages_sent, g.messages_received), (400, 400 * 50));
    let s = g.stream.as_ref().expect("a stream block");
    assert_eq!(
        (s.kind, s.messages_per_call, s.message_size),
        (GrpcStream::Server, 50, 32)
    );
    assert!(s.messages_per_s > 0.0);
    assert!(s.message_latency_us.max > 0.0, "{s:?}");
    let hist = r
        .histograms
        .as_ref()
        .and_then(|h| h.message_latency_us.as_deref());
    let h = serverbench_model::histo::decode(hist.expect("encoded")).unwrap();
    assert_eq!(h.len(), 400 * 50, "one latency per message received");
    assert_schema_valid(&serde_json::to_value(&r).unwrap());
}

#[test]
fn client_streams_send_their_chunks_within_the_windows_and_get_one_count_back() {
    let (addr, _) = grpc_server(Fault::None, 1);
    // 100 chunks of 16 KiB: 1.6 MB per call, far above the 64 KiB windows a call starts with.
    let mut cfg = grpc_stream_config(addr, GrpcStream::Client, (100, 16 << 10), 2);
    cfg.stop = Stop::Requests(40);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (40, 0), "{:?}", r.grpc());
    let g = r.grpc().unwrap();
    assert_eq!((g.messages_sent, g.messages_received), (40 * 100, 40));
    assert!(g.message_bytes_sent > 40 * 100 * (16 << 10));
    assert_eq!(g.stream.as_ref().unwrap().kind, GrpcStream::Client);
}

#[test]
fn bidi_calls_send_each_chunk_after_the_echo_of_the_one_before() {
    let (addr, _) = grpc_server(Fault::None, 1);
    let mut cfg = grpc_stream_config(addr, GrpcStream::Bidi, (20, 100 << 10), 4);
    cfg.stop = Stop::Requests(60);
    let r = run(&cfg);
    assert_eq!((r.requests, r.errors.total()), (60, 0), "{:?}", r.grpc());
    let g = r.grpc().unwrap();
    assert_eq!((g.messages_sent, g.messages_received), (60 * 20, 60 * 20));
    assert_eq!(g.message_bytes_sent, g.message_bytes_received);
    let s = g.stream.as_ref().unwrap();
    // Each echo's round trip: never 0, since the next chunk goes out only after it.
    assert!(s.message_latency_us.p50 >= 1.0, "{s:?}");
    assert!(
        s.message_latency_us.p50 < r.latency_us.p50,
        "a message is a part of a call"
    );
}

#[test]
fn a_stream_one_chunk_short_or_with_a_wrong_byte_fails_by_its_cause() {
    for (kind, fault, cause) in [
        (GrpcStream::Server, Fault::ShortStream, "message count"),
        (GrpcStream::Server, Fault::WrongChunk, "verify"),
        (GrpcStream::Bidi, Fault::WrongChunk, "verify"),
    ] {
        let (addr, _) = grpc_server(fault, 2);
        let mut cfg = grpc_stream_config(addr, kind, (10, 8), 4);
        cfg.stop = Stop::Requests(200);
        let r = run(&cfg);
        let g = r.grpc().unwrap();
        let n = g.failures.get(cause).copied().unwrap_or(0);
        assert!(
            (60..=140).contains(&n),
            "{kind} {fault:?}: half by {cause}: {g:?}"
        );
        assert_eq!(r.errors.verdict, n, "{kind} {fault:?}: {:?}", r.errors);
    }
}
