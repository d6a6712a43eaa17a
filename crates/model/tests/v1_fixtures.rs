//! Results written by serverbench before the protocol block (schema version 1: no
//! `schema_version`, each protocol's fields beside the common ones) read into today's
//! `LoadResult`, each protocol's figures in its block, and write back as the current version. The
//! fixtures were made with the release binary of `main` before the change (`load --json`,
//! `-c 4 -t 2 -d 1s`, against nginx on loopback for HTTP/1.1 and h2c, and a small Python echo
//! and WebSocket echo server).

use serverbench_model::result::{ConnectionMode, ProtocolResult};
use serverbench_model::{LoadResult, Mode, Workload};

fn read(name: &str) -> LoadResult {
    let path = format!(
        "{}/tests/fixtures/v1/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("schema_version"), "{path} is not version 1");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The result written as the current version (3) and read again is the same.
fn round_trips(r: &LoadResult) {
    let v = serde_json::to_value(r).unwrap();
    assert_eq!(v["schema_version"], 3);
    assert_eq!(&serde_json::from_value::<LoadResult>(v).unwrap(), r);
}

#[test]
fn an_http1_result_with_a_body_and_verify_keeps_its_bodies_and_connection_mode() {
    let r = read("http1");
    assert_eq!((r.workload(), r.mode()), (Workload::Http1, Mode::Http));
    assert_eq!(r.requests, 76967);
    assert_eq!(r.connection_mode(), Some(ConnectionMode::KeepAlive));
    let b = r.bodies().expect("bodies");
    assert_eq!((b.responses, b.requests_with_body), (76967, 76971));
    assert_eq!(b.encodings["identity"], 76967);
    assert_eq!((r.mbps_down(), r.http2(), r.ws()), (None, None, None));
    assert_eq!(r.latency_us.p50, 50.0);
    round_trips(&r);
}

#[test]
fn an_h2c_result_keeps_its_protocol_streams_and_settings() {
    let r = read("http2");
    assert_eq!((r.workload(), r.mode()), (Workload::Http2, Mode::Http));
    assert_eq!(r.requests, 86166);
    let h = r.http2().expect("http2");
    assert_eq!((h.protocol.as_str(), h.streams), ("h2c", 4));
    assert_eq!(h.max_concurrent_streams, Some(128));
    assert_eq!(r.connection_mode(), Some(ConnectionMode::KeepAlive));
    assert_eq!(r.bodies(), None);
    round_trips(&r);
}

#[test]
fn a_websocket_result_keeps_its_upgrades_messages_and_mbps() {
    let r = read("ws");
    assert_eq!((r.workload(), r.mode()), (Workload::WebSocket, Mode::Ws));
    assert_eq!(r.requests, 67685);
    let w = r.ws().expect("ws");
    assert_eq!(
        (w.upgrades, w.messages_sent, w.message_size),
        (4, 67689, 11)
    );
    assert_eq!(w.message_kind, "text");
    assert_eq!(r.mbps_down(), Some(7.043368));
    assert_eq!(r.bytes_per_connection(), Some(507937.5));
    assert_eq!(r.connection_mode(), None);
    round_trips(&r);
}

#[test]
fn a_tcp_stream_result_keeps_its_mbps_and_bytes_in_flight() {
    let r = read("tcp-stream");
    assert_eq!(
        (r.workload(), r.mode()),
        (Workload::TcpStream, Mode::TcpStream)
    );
    assert_eq!(r.requests, 161759976);
    assert_eq!(r.mbps_down(), Some(14234.87796));
    assert_eq!(r.bytes_in_flight(), Some(0));
    assert!(matches!(r.protocol, ProtocolResult::TcpStream(_)));
    round_trips(&r);
}

#[test]
fn a_tcp_pingpong_result_keeps_its_messages_and_mbps() {
    let r = read("tcp-pingpong");
    assert_eq!(
        (r.workload(), r.mode()),
        (Workload::TcpPingPong, Mode::TcpPingpong)
    );
    assert_eq!((r.requests, r.bytes_read), (89186, 5707904));
    assert_eq!(r.mbps_down(), Some(45.663232));
    assert_eq!(r.bytes_in_flight(), None);
    assert_eq!(r.latency_us.p50, 41.0);
    round_trips(&r);
}
