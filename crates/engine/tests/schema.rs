//! The JSON result follows spec/load-result.schema.json.

mod common;

use common::tls::*;
use common::*;
use serverbench_engine::Schedule;
use serverbench_model::TlsResume;

fn schema() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../spec/load-result.schema.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

fn assert_valid(v: &serde_json::Value) {
    let errors: Vec<String> = schema().iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{v:#}");
}

#[test]
fn closed_loop_json_validates_against_the_schema() {
    let addr = http_server(|_, _| Reply::Send(ok("Hello World!")));
    let r = run(&http_config(addr, &["/"], false));
    let v = serde_json::to_value(&r).unwrap();
    assert_valid(&v);
    assert!(v["latency_us"]["p9999"].is_number() && v["timeline"].as_array().is_some());
}

#[test]
fn rate_json_validates_against_the_schema() {
    let addr = http_server(|_, _| Reply::Send(ok("Hello World!")));
    let mut cfg = http_config(addr, &["/"], false);
    cfg.schedule = Schedule::Rate { per_second: 500.0 };
    let r = run(&cfg);
    let v = serde_json::to_value(&r).unwrap();
    assert_valid(&v);
    assert!(v["latency_us_uncorrected"]["p99"].is_number());
    let h = r.histograms.unwrap();
    let uncorrected = serverbench_model::histo::decode(&h.latency_us_uncorrected.unwrap());
    assert_eq!(uncorrected.unwrap().len(), r.requests);
}

#[test]
fn the_serialized_histogram_gives_back_the_reported_percentiles() {
    let addr = http_server(|_, _| Reply::Send(ok("Hello World!")));
    let r = run(&http_config(addr, &["/"], false));
    let h = serverbench_model::histo::decode(&r.histograms.as_ref().unwrap().latency_us).unwrap();
    assert_eq!(h.len(), r.requests);
    assert_eq!(h.value_at_quantile(0.99) as f64, r.latency_us.p99);
    assert_eq!(h.max() as f64, r.latency_us.max);
    let buckets = &r.histograms.as_ref().unwrap().timeline_buckets;
    assert_eq!(buckets.len(), r.timeline.len());
    let counted: u64 = buckets.iter().flatten().map(|&(_, c)| c as u64).sum();
    assert_eq!(
        counted, r.requests,
        "every measured request is in a second's buckets"
    );
}

#[test]
fn json_missing_a_required_key_is_rejected_by_the_schema() {
    let result = serverbench_model::LoadResult::default();
    let mut v = serde_json::to_value(result).unwrap();
    assert_valid(&v);
    v.as_object_mut().unwrap().remove("rps");
    assert!(!schema().is_valid(&v));
}

#[test]
fn https_new_conn_json_validates_against_the_schema() {
    let pki = Pki::new();
    let server = ServerTls {
        tickets: true,
        ..Default::default()
    };
    let (addr, _) = https_server(server, pki.localhost(), |_, _| Reply::Send(ok("hi")));
    let client = ClientTls {
        resume: TlsResume::Tickets,
        new_conn: true,
        ..ClientTls::trusting(&pki)
    };
    let v = serde_json::to_value(run(&https_config(
        &format!("https://{addr}/"),
        client,
        false,
    )))
    .unwrap();
    assert_valid(&v);
    assert_eq!(v["protocol"]["connection_mode"], "new-conn");
    assert!(
        v["tls"]["handshakes_resumed"].as_u64().unwrap() > 0,
        "{v:#}"
    );
    assert!(v["connect_latency_us"]["p50"].is_number());
}

#[test]
fn https_json_with_tls_errors_validates_against_the_schema() {
    let (pki, other) = (Pki::new(), Pki::new());
    let (addr, _) = https_server(ServerTls::default(), other.localhost(), |_, _| {
        Reply::Send(ok("hi"))
    });
    let mut cfg = https_config(
        &format!("https://{addr}/"),
        ClientTls::trusting(&pki),
        false,
    );
    cfg.stop = serverbench_engine::Stop::Requests(2);
    let v = serde_json::to_value(run(&cfg)).unwrap();
    assert_valid(&v);
    assert!(v["tls"]["version"].is_null());
    assert!(
        v["tls"]["errors"]["certificate unknown issuer"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn every_protocol_of_a_version_1_result_upgrades_to_a_valid_version_2_document() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../model/tests/fixtures/v1");
    for name in ["http1", "http2", "ws", "tcp-stream", "tcp-pingpong"] {
        let text = std::fs::read_to_string(format!("{dir}/{name}.json")).unwrap();
        let r: serverbench_model::LoadResult = serde_json::from_str(&text).unwrap();
        let v = serde_json::to_value(&r).unwrap();
        assert_valid(&v);
        assert_eq!(v["protocol"]["workload"], r.workload().as_str(), "{name}");
    }
}

#[test]
fn a_result_written_before_tls_existed_still_parses() {
    let old = serde_json::json!({
        "mode": "http", "target": ["http://127.0.0.1:1/"], "connections": 1, "threads": 1,
        "requests": 1, "duration_s": 1.0, "rps": 1.0, "bytes_read": 1, "bytes_written": 1,
        "latency_us": {"p50": 1.0, "p75": 1.0, "p90": 1.0, "p99": 1.0, "p999": 1.0,
                       "p9999": 1.0, "max": 1.0, "mean": 1.0, "stdev": 0.0},
        "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0, "parse": 0,
                   "status": 0, "body": 0},
        "status": {"200": 1}, "client_cpu_s": 0.1, "client_cpu_us_per_request": 1.0,
        "client_saturated": false, "timeline": []
    });
    let r: serverbench_model::LoadResult = serde_json::from_value(old).unwrap();
    assert_eq!((r.errors.tls, r.tls, r.connects), (0, None, None));
}

#[test]
fn a_mix_json_validates_and_its_entry_histograms_give_back_their_percentiles() {
    let addr = http_server(|_, _| Reply::Send(ok("Hello World!")));
    let text = "[[request]]\npath = \"/a\"\nweight = 2\n[[request]]\npath = \"/b\"\n";
    let no_files = |_: &std::path::Path| Err(std::io::Error::other("none"));
    let mix = serverbench_model::Mix::parse(text, "m.toml".as_ref(), &no_files).unwrap();
    let mut spec = serverbench_model::LoadSpec {
        target: addr.to_string(),
        connections: 2,
        threads: Some(1),
        requests: Some(600),
        io: io(),
        ..Default::default()
    };
    spec.work.mix_requests = Some(mix);
    let r = run(&serverbench_engine::Config::try_from(&spec).unwrap());
    let v = serde_json::to_value(&r).unwrap();
    assert_valid(&v);
    let h = r.histograms.as_ref().unwrap();
    for (e, text) in r.mix().iter().zip(&h.mix_latency_us) {
        let decoded = serverbench_model::histo::decode(text).unwrap();
        assert_eq!(decoded.len(), e.requests);
        assert_eq!(decoded.value_at_quantile(0.99) as f64, e.latency_us.p99);
    }
    assert_eq!(r.mix().iter().map(|e| e.requests).sum::<u64>(), r.requests);
}

#[test]
fn an_http3_block_validates_against_the_schema_and_a_wrong_socket_does_not() {
    use serverbench_model::result::{Http3Result, ProtocolResult, QuicCounters, ZeroRttResult};
    let addr = http_server(|_, _| Reply::Send(ok("Hello World!")));
    let mut r = run(&http_config(addr, &["/"], false));
    r.protocol = ProtocolResult::Http3(Http3Result {
        streams: 16,
        max_streams_bidi: Some(100),
        zero_rtt: Some(ZeroRttResult {
            attempted: 4,
            accepted: 3,
        }),
        quic: QuicCounters {
            datagrams_sent: 10,
            send_calls: 5,
            gso: true,
            ..QuicCounters::default()
        },
        transport_errors: [("local: IDLE_TIMEOUT".to_string(), 1)].into(),
        h3_errors: [("H3_MESSAGE_ERROR".to_string(), 2)].into(),
        ..Http3Result::default()
    });
    let mut v = serde_json::to_value(&r).unwrap();
    assert_valid(&v);
    assert_eq!(v["protocol"]["quic"]["socket"], "per-connection");
    v["protocol"]["quic"]["socket"] = "one".into();
    assert!(schema().iter_errors(&v).next().is_some(), "{v:#}");
}
