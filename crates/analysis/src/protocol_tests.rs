//! Tests of the protocol rows: what an HTTP/2 lap says about the server's stream limit, and
//! what a TLS row takes from the laps' `tls` blocks.

use super::*;
use crate::fixture;
use serverbench_model::Tool;
use serverbench_results::record::Measurement;

/// An h2 lap at 1,000 req/s measured by `tool`, with `http2` as its block.
fn h2_lap(tool: Tool, http2: Option<Http2Result>) -> LapRecord {
    let mut r = fixture::lap();
    r.scenario = "h2-hello".into();
    r.tool = tool;
    r.params.transport.protocol = Protocol::H2;
    r.params.transport.tls = true;
    let reported = http2.is_some();
    r.load = Some(Measurement {
        rps: Some(1000.0),
        http2,
        errors: reported.then(Errors::default),
        ..Measurement::default()
    });
    r
}

fn h2_of(records: &[LapRecord]) -> H2Figures {
    let rows = protocol_rows(records);
    rows[0].h2.clone().expect("an h2 row")
}

fn settings(max: Option<u32>) -> Http2Result {
    Http2Result {
        protocol: "h2".into(),
        streams: 1,
        max_concurrent_streams: max,
        initial_window_size: Some(65_535),
        max_frame_size: Some(16_384),
        goaways: 2,
        ..Http2Result::default()
    }
}

#[test]
fn an_h2load_lap_reports_no_stream_limit_goaways_or_refused_streams_rather_than_none() {
    let h = h2_of(&[h2_lap(Tool::H2load, None)]);
    assert_eq!(h.max_concurrent_streams, StreamLimit::NotReported);
    assert_eq!(
        (h.goaways, h.refused_streams, h.protocol_errors),
        (None, None, None)
    );
}

#[test]
fn settings_without_a_limit_are_unlimited_and_a_limit_is_kept() {
    let unlimited = h2_of(&[h2_lap(Tool::Serverbench, Some(settings(None)))]);
    assert_eq!(unlimited.max_concurrent_streams, StreamLimit::Unlimited);
    assert_eq!(
        (unlimited.goaways, unlimited.refused_streams),
        (Some(2), Some(0))
    );
    let limited = h2_of(&[
        h2_lap(Tool::Serverbench, Some(settings(None))),
        h2_lap(Tool::Serverbench, Some(settings(Some(100)))),
    ]);
    assert_eq!(limited.max_concurrent_streams, StreamLimit::Max(100));
    assert_eq!(limited.goaways, Some(4));
}

#[test]
fn an_engine_lap_that_never_received_settings_reports_no_limit() {
    let none_arrived = Http2Result {
        initial_window_size: None,
        max_frame_size: None,
        ..settings(None)
    };
    let h = h2_of(&[h2_lap(Tool::Serverbench, Some(none_arrived))]);
    assert_eq!(h.max_concurrent_streams, StreamLimit::NotReported);
}

#[test]
fn the_stream_limit_is_serialized_by_name() {
    let json = |l: StreamLimit| serde_json::to_string(&l).unwrap();
    assert_eq!(json(StreamLimit::NotReported), "\"not_reported\"");
    assert_eq!(json(StreamLimit::Unlimited), "\"unlimited\"");
    assert_eq!(json(StreamLimit::Max(128)), "{\"max\":128}");
}

/// A lap with a new connection per request over TLS, `handshakes` of them at `p50`/`p99` µs.
fn handshake_lap(tool: Tool, handshakes: u64, p50: f64, p99: f64) -> LapRecord {
    let mut r = fixture::lap();
    r.tool = tool;
    r.params.transport.tls = true;
    r.params.transport.new_conn = tool == Tool::Serverbench;
    let mut tls = TlsResult {
        version: Some("TLSv1.3".into()),
        cipher_suite: Some("TLS_AES_128_GCM_SHA256".into()),
        key_exchange_group: Some("X25519".into()),
        alpn: Some("http/1.1".into()),
        handshakes,
        handshakes_full: handshakes,
        ..TlsResult::default()
    };
    tls.handshake_latency_us.p50 = p50;
    tls.handshake_latency_us.p99 = p99;
    r.load = Some(Measurement {
        rps: Some(1000.0),
        tls: Some(tls),
        ..Measurement::default()
    });
    r
}

#[test]
fn a_tls_row_carries_the_group_the_alpn_and_the_median_handshake_latency() {
    let laps: Vec<LapRecord> = [(100.0, 900.0), (300.0, 700.0), (200.0, 800.0)]
        .into_iter()
        .map(|(p50, p99)| handshake_lap(Tool::Serverbench, 1000, p50, p99))
        .collect();
    let row = &protocol_rows(&laps)[0];
    assert!(row.new_conn);
    let t = row.tls.as_ref().unwrap();
    assert_eq!(t.key_exchange_group.as_deref(), Some("X25519"));
    assert_eq!(t.alpn.as_deref(), Some("http/1.1"));
    assert_eq!(
        (t.handshake_p50_us, t.handshake_p99_us),
        (Some(200.0), Some(800.0))
    );
}

#[test]
fn an_external_tool_that_counts_no_handshakes_has_no_handshake_latency() {
    let row = &protocol_rows(&[handshake_lap(Tool::H2load, 0, 0.0, 0.0)])[0];
    let t = row.tls.as_ref().unwrap();
    assert_eq!(t.version.as_deref(), Some("TLSv1.3"));
    assert_eq!((t.handshake_p50_us, t.handshake_p99_us), (None, None));
}
