use super::*;
use serverbench_model::histo::bucket_mid;
use serverbench_model::result::{
    ConnectionMode, Errors, Http1Result, Http2Result, TlsResult, WsResult,
};
use std::collections::BTreeMap;

/// A result holding exactly `samples` (µs), as a host would send it.
fn result(samples: &[u64], seconds: Vec<Vec<(u16, u32)>>, cpu: f64) -> LoadResult {
    let mut h = new_histogram();
    for &s in samples {
        h.record(s).unwrap();
    }
    let timeline = seconds
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let n: u64 = b.iter().map(|&(_, c)| u64::from(c)).sum();
            TimelinePoint {
                second: i as u32,
                requests: n,
                errors: 1,
                latency_mean_us: 100.0 * (i + 1) as f64,
                latency_p99_us: p99_of_buckets(b),
                bytes_read: 10 * n,
            }
        })
        .collect();
    LoadResult {
        requests: samples.len() as u64,
        connections: 10,
        threads: 2,
        duration_s: 2.0,
        latency_us: latency_of(&h),
        errors: Errors {
            read: 1,
            ..Errors::default()
        },
        status: BTreeMap::from([("200".to_string(), samples.len() as u64)]),
        client_cpu_s: cpu,
        timeline,
        measure_start_unix_s: Some(1000.0 + cpu / 1000.0),
        histograms: Some(Histograms {
            latency_us: histo::encode(&h),
            timeline_buckets: seconds,
            ..Histograms::default()
        }),
        ..LoadResult::default()
    }
}

#[test]
fn merged_percentiles_are_those_of_one_histogram_of_all_samples() {
    let fast: Vec<u64> = (0..900).map(|i| 100 + i % 50).collect();
    let slow: Vec<u64> = (0..100).map(|i| 5_000 + 37 * i).collect();
    let parts = [
        ("a".to_string(), result(&fast, vec![], 1.0)),
        ("b".to_string(), result(&slow, vec![], 1.0)),
    ];
    let m = merge(&parts).unwrap();
    let mut all = new_histogram();
    for &s in fast.iter().chain(&slow) {
        all.record(s).unwrap();
    }
    assert_eq!(m.latency_us, latency_of(&all));
    let averaged = (parts[0].1.latency_us.p99 + parts[1].1.latency_us.p99) / 2.0;
    assert_ne!(m.latency_us.p99, averaged, "averaging p99s would be wrong");
    let back = histo::decode(&m.histograms.unwrap().latency_us).unwrap();
    assert_eq!(back, all, "the merged histogram travels with the result");
}

#[test]
fn counters_errors_statuses_and_cpu_add_up() {
    let parts = [
        ("a".to_string(), result(&[100; 30], vec![], 1.5)),
        ("b".to_string(), result(&[200; 20], vec![], 0.5)),
    ];
    let m = merge(&parts).unwrap();
    assert_eq!(m.requests, 50);
    assert_eq!((m.connections, m.threads), (20, 4));
    assert_eq!(m.errors.read, 2);
    assert_eq!(m.status["200"], 50);
    assert_eq!(m.client_cpu_s, 2.0);
    assert_eq!(m.rps, 25.0);
    assert_eq!(
        m.measure_start_unix_s,
        Some(1000.0005),
        "the earliest start"
    );
}

#[test]
fn timelines_add_up_second_by_second_with_p99_from_the_summed_buckets() {
    // Second 0: host a has 99 fast samples (bucket 40), host b one slow one (bucket 120).
    let a = result(&[100; 99], vec![vec![(40, 99)], vec![(40, 5)]], 1.0);
    let b = result(&[9_000], vec![vec![(120, 1)]], 1.0);
    let m = merge(&[("a".into(), a), ("b".into(), b)]).unwrap();
    assert_eq!(m.timeline.len(), 2);
    assert_eq!(m.timeline[0].requests, 100);
    assert_eq!(m.timeline[0].errors, 2);
    assert_eq!(m.timeline[0].bytes_read, 1000);
    assert_eq!(
        m.timeline[0].latency_p99_us,
        bucket_mid(40),
        "99 of 100 are fast"
    );
    assert_eq!(
        m.timeline[0].latency_mean_us, 100.0,
        "both hosts' mean is 100 in second 0"
    );
    assert_eq!(m.timeline[1].requests, 5);
    let buckets = &m.histograms.unwrap().timeline_buckets;
    assert_eq!(buckets[0], vec![(40, 99), (120, 1)]);
}

#[test]
fn a_result_without_histograms_names_its_host() {
    let mut b = result(&[1], vec![], 1.0);
    b.histograms = None;
    let err = merge(&[("a".into(), result(&[1], vec![], 1.0)), ("b".into(), b)]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("b: its result has no histograms"),
        "{err}"
    );
}

#[test]
fn naps_add_up_with_the_mean_weighted_by_each_hosts_naps() {
    use serverbench_model::result::{IdlePolicy, IdleResult};
    let idle = |naps, mean, max| IdleResult {
        policy: IdlePolicy::Auto,
        naps,
        nap_us_mean: mean,
        nap_us_max: max,
    };
    let mut a = result(&[100; 10], vec![], 1.0);
    a.idle = Some(idle(300, 20.0, 31.0));
    let mut b = result(&[100; 10], vec![], 1.0);
    b.idle = Some(idle(100, 60.0, 75.0));
    let m = merge(&[("a".into(), a), ("b".into(), b)]).unwrap();
    assert_eq!(m.idle, Some(idle(400, 30.0, 75.0)));
}

/// `result` over TLS: `handshakes` handshakes of `us` µs each, `resumed` of them resumed,
/// negotiating `version`, with `cause` counted once among its TLS errors.
fn over_tls(handshakes: &[u64], resumed: u64, version: &str, cause: &str) -> LoadResult {
    let mut r = result(&[100; 10], vec![], 1.0);
    let mut h = new_histogram();
    for &us in handshakes {
        h.record(us).unwrap();
    }
    r.errors.tls = 1;
    r.protocol = ProtocolResult::Http1(Http1Result {
        connection_mode: ConnectionMode::NewConn,
        ..Http1Result::default()
    });
    r.connects = Some(handshakes.len() as u64);
    r.tls = Some(TlsResult {
        version: Some(version.into()),
        cipher_suite: Some("TLS_AES_128_GCM_SHA256".into()),
        alpn: Some("http/1.1".into()),
        resume: "tickets".into(),
        handshakes: handshakes.len() as u64,
        handshakes_full: handshakes.len() as u64 - resumed,
        handshakes_resumed: resumed,
        handshake_latency_us: latency_of(&h),
        client_cpu_us_per_handshake: Some(1.0),
        errors: BTreeMap::from([(cause.to_string(), 1)]),
        ..TlsResult::default()
    });
    let histograms = r.histograms.as_mut().unwrap();
    histograms.handshake_latency_us = Some(histo::encode(&h));
    histograms.connect_latency_us = Some(histo::encode(&h));
    r
}

#[test]
fn tls_handshakes_and_errors_add_up_with_latency_from_the_summed_histograms() {
    let a = over_tls(&[300; 90], 80, "TLSv1.3", "certificate unknown issuer");
    let b = over_tls(&[9_000; 10], 0, "TLSv1.3", "handshake timeout");
    let m = merge(&[("a".into(), a), ("b".into(), b)]).unwrap();
    let t = m.tls.as_ref().expect("the TLS block is merged");
    assert_eq!(t.version.as_deref(), Some("TLSv1.3"));
    assert!(!t.mixed);
    assert_eq!(
        (t.handshakes, t.handshakes_full, t.handshakes_resumed),
        (100, 20, 80)
    );
    assert_eq!(t.handshakes_per_s, 50.0, "100 handshakes over 2 s");
    assert_eq!(t.client_cpu_us_per_handshake, Some(2.0 * 1e6 / 100.0));
    assert_eq!(t.errors.len(), 2, "{:?}", t.errors);
    assert_eq!(m.errors.tls, 2, "errors.tls adds up like the others");
    let mut all = new_histogram();
    all.record_n(300, 90).unwrap();
    all.record_n(9_000, 10).unwrap();
    assert_eq!(t.handshake_latency_us, latency_of(&all));
    assert_eq!(m.connect_latency_us, Some(latency_of(&all)));
    assert_eq!(
        (m.connects, m.connection_mode()),
        (Some(100), Some(ConnectionMode::NewConn))
    );
    let h = m.histograms.unwrap();
    assert_eq!(
        histo::decode(&h.handshake_latency_us.unwrap()).unwrap(),
        all
    );
}

#[test]
fn a_host_that_negotiated_another_version_marks_the_merge_mixed() {
    let a = over_tls(&[300; 5], 0, "TLSv1.3", "x");
    let b = over_tls(&[300; 5], 0, "TLSv1.2", "x");
    let m = merge(&[("a".into(), a), ("b".into(), b)]).unwrap();
    let t = m.tls.unwrap();
    assert_eq!(t.version.as_deref(), Some("TLSv1.3"), "the first host's");
    assert!(t.mixed);
    assert_eq!(t.errors["x"], 2);
}

#[test]
fn http2_goaways_and_errors_add_up_and_the_servers_settings_are_kept() {
    let h2 = |goaways, code: &str| Http2Result {
        protocol: "h2".into(),
        streams: 16,
        max_concurrent_streams: Some(100),
        goaways,
        errors: BTreeMap::from([(code.to_string(), 1)]),
        ..Http2Result::default()
    };
    let (mut a, mut b) = (result(&[1], vec![], 1.0), result(&[1], vec![], 1.0));
    a.protocol = ProtocolResult::Http2(h2(1, "PROTOCOL_ERROR"));
    a.errors.protocol = 1;
    b.protocol = ProtocolResult::Http2(h2(2, "PROTOCOL_ERROR"));
    b.errors.refused_stream = 3;
    let m = merge(&[("a".into(), a), ("b".into(), b)]).unwrap();
    let h = m.http2().unwrap().clone();
    assert_eq!((h.protocol.as_str(), h.streams), ("h2", 16));
    assert_eq!(h.max_concurrent_streams, Some(100));
    assert_eq!(h.goaways, 3);
    assert_eq!(h.errors["PROTOCOL_ERROR"], 2);
    assert_eq!((m.errors.protocol, m.errors.refused_stream), (1, 3));
    assert!(m.tls.is_none() && m.connect_latency_us.is_none());
}

#[test]
fn two_hosts_http3_blocks_merge_exactly_as_the_models_merge_of_them() {
    use serverbench_model::result::{Http3Result, QuicCounters, ZeroRttResult};
    let h3 = |n: u64, limit, gro| Http3Result {
        streams: 16,
        max_streams_bidi: Some(limit),
        zero_rtt: Some(ZeroRttResult {
            attempted: 10 * n,
            accepted: 9 * n,
        }),
        quic: QuicCounters {
            datagrams_sent: 100 * n,
            send_calls: 10 * n,
            packets_lost: n,
            gso: true,
            gro,
            ..QuicCounters::default()
        },
        transport_errors: BTreeMap::from([("local: IDLE_TIMEOUT".to_string(), n)]),
        h3_errors: BTreeMap::from([("H3_MESSAGE_ERROR".to_string(), n)]),
        stream_resets: n,
        ..Http3Result::default()
    };
    let (ha, hb) = (h3(1, 100, true), h3(2, 50, false));
    let (mut a, mut b) = (result(&[1], vec![], 1.0), result(&[1], vec![], 1.0));
    a.protocol = ProtocolResult::Http3(ha.clone());
    b.protocol = ProtocolResult::Http3(hb.clone());
    let m = merge(&[("a".into(), a), ("b".into(), b)]).unwrap();
    let h = m.http3().unwrap().clone();
    assert_eq!(h, Http3Result::merge(&[&ha, &hb], Vec::new()));
    assert_eq!((h.quic.datagrams_sent, h.quic.send_calls), (300, 30));
    assert_eq!(
        h.zero_rtt,
        Some(ZeroRttResult {
            attempted: 30,
            accepted: 27
        })
    );
    assert_eq!(
        (h.max_streams_bidi, h.quic.gso, h.quic.gro),
        (Some(50), true, false)
    );
    assert_eq!((h.h3_errors["H3_MESSAGE_ERROR"], h.stream_resets), (3, 3));
}

#[test]
fn websocket_close_codes_causes_and_unanswered_upgrades_add_up() {
    let ws = |closes: &[(&str, u64)], unexpected, unanswered| WsResult {
        message_kind: "text".into(),
        upgrades: 4,
        close_codes: closes.iter().map(|&(c, n)| (c.to_string(), n)).collect(),
        protocol_errors: BTreeMap::from([("unexpected close".to_string(), unexpected)]),
        upgrade_failures: BTreeMap::from([("timeout".to_string(), 1)]),
        upgrades_unanswered: unanswered,
        ..WsResult::default()
    };
    let (mut a, mut b) = (result(&[1], vec![], 1.0), result(&[1], vec![], 1.0));
    a.protocol = ProtocolResult::WebSocket(ws(&[("1011", 3), ("1000", 1)], 3, 0));
    b.protocol = ProtocolResult::WebSocket(ws(&[("1011", 2), ("1006", 1)], 3, 2));
    let m = merge(&[("a".into(), a), ("b".into(), b)]).unwrap();
    let w = m.ws().unwrap().clone();
    let codes: Vec<(&str, u64)> = w
        .close_codes
        .iter()
        .map(|(c, n)| (c.as_str(), *n))
        .collect();
    assert_eq!(codes, [("1000", 1), ("1006", 1), ("1011", 5)]);
    assert_eq!(w.protocol_errors["unexpected close"], 6);
    assert_eq!(
        (w.upgrade_failures["timeout"], w.upgrades_unanswered),
        (2, 2)
    );
    assert_eq!(w.upgrades, 8);
}

#[test]
fn hosts_on_one_backend_keep_it_and_hosts_on_two_leave_it_to_their_own_records() {
    use serverbench_model::IoBackend;
    let mut a = result(&[100, 200], vec![vec![(1, 1)]], 1.0);
    let mut b = result(&[300], vec![vec![(1, 1)]], 1.0);
    a.io = Some(IoBackend::Uring);
    b.io = Some(IoBackend::Uring);
    let m = merge(&[("a".into(), a.clone()), ("b".into(), b.clone())]).unwrap();
    assert_eq!(m.io, Some(IoBackend::Uring));
    b.io = Some(IoBackend::Epoll);
    b.notes = vec!["io_uring refused (EPERM): ran on epoll".into()];
    let m = merge(&[("a".into(), a), ("b".into(), b.clone())]).unwrap();
    assert_eq!(m.io, None);
    assert_eq!(m.notes, b.notes);
}

/// `result` with a mix of two entries: all of `samples` on the first, one request on the
/// second (with a status error).
fn mixed(samples: &[u64]) -> LoadResult {
    use serverbench_model::result::MixEntryResult;
    let mut r = result(samples, vec![], 1.0);
    let (mut a, mut b) = (new_histogram(), new_histogram());
    for &s in samples {
        a.record(s).unwrap();
    }
    b.record(7).unwrap();
    let entry = |name: &str, requests: u64, status: u64| MixEntryResult {
        name: name.into(),
        requests,
        errors: Errors {
            status,
            ..Errors::default()
        },
        ..MixEntryResult::default()
    };
    r.protocol = ProtocolResult::Http1(Http1Result {
        mix: vec![entry("a", samples.len() as u64, 0), entry("b", 1, 1)],
        ..Http1Result::default()
    });
    let h = r.histograms.as_mut().unwrap();
    h.mix_latency_us = vec![histo::encode(&a), histo::encode(&b)];
    r
}

#[test]
fn mix_entries_add_up_and_their_percentiles_come_from_the_summed_histograms() {
    let fast: Vec<u64> = (0..90).map(|i| 100 + i).collect();
    let slow: Vec<u64> = (0..10).map(|i| 9_000 + i).collect();
    let parts = [
        ("a".to_string(), mixed(&fast)),
        ("b".to_string(), mixed(&slow)),
    ];
    let m = merge(&parts).unwrap();
    assert_eq!((m.mix()[0].requests, m.mix()[1].requests), (100, 2));
    assert_eq!(m.mix()[1].errors.status, 2);
    let mut all = new_histogram();
    for &s in fast.iter().chain(&slow) {
        all.record(s).unwrap();
    }
    assert_eq!(m.mix()[0].latency_us, latency_of(&all));
    assert_eq!(m.histograms.unwrap().mix_latency_us.len(), 2);
}

#[test]
fn a_host_with_other_mix_entries_is_named() {
    let mut other = mixed(&[5]);
    if let ProtocolResult::Http1(h) = &mut other.protocol {
        h.mix.pop();
    }
    let parts = [("a".to_string(), mixed(&[5])), ("b".to_string(), other)];
    let err = merge(&parts).unwrap_err().to_string();
    assert!(err.starts_with("b: "), "{err}");
}

#[test]
fn requests_in_flight_add_up_and_only_a_silence_of_every_host_is_kept() {
    let silence = |from_s, to_s| Silence { from_s, to_s };
    let mut a = result(&[100, 200], vec![], 1.0);
    a.in_flight_at_end = 40;
    a.silences = vec![silence(0.5, 3.0)];
    let mut b = result(&[100], vec![], 1.0);
    b.in_flight_at_end = 24;
    b.silences = vec![silence(1.5, 4.0)];
    let parts = [("a".to_string(), a.clone()), ("b".to_string(), b)];
    let m = merge(&parts).unwrap();
    assert_eq!(m.in_flight_at_end, 64);
    assert_eq!(m.silences, vec![silence(1.5, 3.0)]);
    let answered = result(&[100], vec![], 1.0);
    let m = merge(&[("a".to_string(), a), ("c".to_string(), answered)]).unwrap();
    assert!(m.silences.is_empty(), "host c answered throughout");
}

#[test]
fn a_host_that_ran_another_workload_is_named() {
    let a = result(&[100], vec![], 1.0);
    let mut b = result(&[100], vec![], 1.0);
    b.protocol = ProtocolResult::TcpPingPong(Default::default());
    let err = merge(&[("a".into(), a), ("b".into(), b)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "b: its result ran workload tcp-ping-pong, the first ran http1"
    );
}
