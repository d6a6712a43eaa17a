use super::*;
use crate::histo::encode;

fn hist(values: &[u64]) -> String {
    let mut h = new_histogram();
    for v in values {
        h.record(*v).unwrap();
    }
    encode(&h)
}

fn merged(secs: f64, read: u64, written: u64, connections: u32) -> LoadResult {
    LoadResult {
        duration_s: secs,
        bytes_read: read,
        bytes_written: written,
        connections,
        ..Default::default()
    }
}

fn parts(rs: &[(ProtocolResult, Histograms)]) -> Vec<ProtocolPart<'_>> {
    rs.iter()
        .map(|(p, h)| ProtocolPart {
            protocol: p,
            histograms: Some(h),
        })
        .collect()
}

#[test]
fn websocket_parts_add_their_counts_and_read_the_upgrade_latency_from_the_summed_histograms() {
    let ws = |upgrades, closes: u64, lat: &[u64]| {
        let w = WsResult {
            upgrades,
            messages_sent: 10,
            close_codes: [("1000".to_string(), closes)].into(),
            ..Default::default()
        };
        let h = Histograms {
            upgrade_latency_us: Some(hist(lat)),
            ..Default::default()
        };
        (ProtocolResult::WebSocket(w), h)
    };
    let rs = [ws(1, 1, &[100]), ws(3, 2, &[300, 300, 300])];
    let mut h = Histograms::default();
    let m =
        ProtocolResult::merge(&parts(&rs), &merged(2.0, 1_000_000, 500_000, 4), &mut h).unwrap();
    let ProtocolResult::WebSocket(w) = m else {
        panic!("{m:?}")
    };
    assert_eq!(
        (w.upgrades, w.messages_sent, w.close_codes["1000"]),
        (4, 20, 3)
    );
    assert_eq!(w.upgrades_per_s, 2.0);
    assert_eq!(
        w.upgrade_latency_us.p50, 300.0,
        "not the mean of the parts' medians"
    );
    assert_eq!((w.throughput.mbps_down, w.throughput.mbps_up), (4.0, 2.0));
    assert_eq!(w.throughput.bytes_per_connection, 375_000.0);
    assert!(h.upgrade_latency_us.is_some());
}

#[test]
fn tcp_stream_parts_add_their_bytes_in_flight() {
    let t = |n| {
        let p = ProtocolResult::TcpStream(TcpStreamResult {
            bytes_in_flight: n,
            ..Default::default()
        });
        (p, Histograms::default())
    };
    let rs = [t(5), t(7)];
    let m = ProtocolResult::merge(&parts(&rs), &merged(1.0, 8, 0, 1), &mut Default::default());
    assert_eq!(m.unwrap().throughput().map(|t| t.mbps_down), Some(6.4e-5));
    let m = ProtocolResult::merge(&parts(&rs), &merged(1.0, 8, 0, 1), &mut Default::default());
    assert!(matches!(m.unwrap(), ProtocolResult::TcpStream(t) if t.bytes_in_flight == 12));
}

#[test]
fn http2_parts_add_goaways_and_errors_by_code_and_keep_the_settings_one_sent() {
    let h2 = |goaways, settings| {
        let p = ProtocolResult::Http2(Http2Result {
            protocol: "h2c".into(),
            goaways,
            max_concurrent_streams: settings,
            errors: [("PROTOCOL_ERROR".to_string(), 1)].into(),
            ..Default::default()
        });
        (p, Histograms::default())
    };
    let rs = [h2(1, None), h2(2, Some(100))];
    let m = ProtocolResult::merge(&parts(&rs), &merged(1.0, 0, 0, 1), &mut Default::default());
    let ProtocolResult::Http2(h) = m.unwrap() else {
        panic!()
    };
    assert_eq!((h.goaways, h.errors["PROTOCOL_ERROR"]), (3, 2));
    assert_eq!(h.max_concurrent_streams, Some(100));
}

#[test]
fn mix_entries_add_up_and_their_latency_comes_from_the_summed_histograms() {
    let h1 = |requests, lat: &[u64]| {
        let e = MixEntryResult {
            name: "a".into(),
            requests,
            ..Default::default()
        };
        let p = ProtocolResult::Http1(Http1Result {
            mix: vec![e],
            ..Default::default()
        });
        let h = Histograms {
            mix_latency_us: vec![hist(lat)],
            ..Default::default()
        };
        (p, h)
    };
    let rs = [h1(1, &[10]), h1(3, &[1000, 1000, 1000])];
    let mut h = Histograms::default();
    let m = ProtocolResult::merge(&parts(&rs), &merged(1.0, 0, 0, 1), &mut h).unwrap();
    let ProtocolResult::Http1(m) = m else {
        panic!()
    };
    assert_eq!(m.mix[0].requests, 4);
    assert_eq!(m.mix[0].latency_us.p50, 1000.0);
    assert_eq!(h.mix_latency_us.len(), 1);
}

#[test]
fn parts_of_different_workloads_are_refused_naming_the_part() {
    let rs = [
        (ProtocolResult::default(), Histograms::default()),
        (
            ProtocolResult::TcpPingPong(Default::default()),
            Histograms::default(),
        ),
    ];
    let e = ProtocolResult::merge(&parts(&rs), &LoadResult::default(), &mut Default::default())
        .unwrap_err();
    assert_eq!(e.part(), 1);
    assert_eq!(
        e.to_string(),
        "its result ran workload tcp-ping-pong, the first ran http1"
    );
}

#[test]
fn tls_parts_that_negotiated_different_names_are_marked_mixed() {
    let t = |v: &str| TlsResult {
        version: Some(v.into()),
        handshakes: 2,
        ..Default::default()
    };
    let (a, b) = (t("TLSv1.3"), t("TLSv1.2"));
    let m = TlsResult::merge(&[&a, &b], 2.0, 0.0, Latency::default()).unwrap();
    assert!(m.mixed);
    assert_eq!((m.handshakes, m.handshakes_per_s), (4, 2.0));
}

#[test]
fn grpc_stream_parts_read_the_message_latency_from_the_summed_histograms_and_rate_over_the_run() {
    let part = |received: u64, lat: &[u64]| {
        let g = GrpcResult {
            messages_received: received,
            stream: Some(super::super::GrpcStreamResult {
                kind: crate::spec::GrpcStream::Bidi,
                messages_per_call: 10,
                message_size: 32,
                messages_per_s: 0.0,
                message_latency_us: Latency::default(),
            }),
            ..Default::default()
        };
        let h = Histograms {
            message_latency_us: Some(hist(lat)),
            ..Default::default()
        };
        (ProtocolResult::Grpc(g), h)
    };
    let rs = [part(300, &[100; 99]), part(100, &[5000])];
    let mut out = Histograms::default();
    let p = ProtocolResult::merge(&parts(&rs), &merged(2.0, 0, 0, 2), &mut out).unwrap();
    let ProtocolResult::Grpc(g) = p else {
        panic!("not grpc")
    };
    let s = g.stream.unwrap();
    assert_eq!(g.messages_received, 400);
    assert_eq!(s.messages_per_s, 200.0);
    assert!((99.0..=101.0).contains(&s.message_latency_us.p50), "{s:?}");
    assert!(
        s.message_latency_us.max >= 4990.0,
        "the slow host's one message: {s:?}"
    );
    assert!(out.message_latency_us.is_some());
}
