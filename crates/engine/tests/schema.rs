//! The JSON result follows spec/load-result.schema.json.

mod common;

use common::*;
use serverbench_engine::Schedule;

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
    let uncorrected = serverbench_engine::histo::decode(&h.latency_us_uncorrected.unwrap());
    assert_eq!(uncorrected.unwrap().len(), r.requests);
}

#[test]
fn the_serialized_histogram_gives_back_the_reported_percentiles() {
    let addr = http_server(|_, _| Reply::Send(ok("Hello World!")));
    let r = run(&http_config(addr, &["/"], false));
    let h = serverbench_engine::histo::decode(&r.histograms.as_ref().unwrap().latency_us).unwrap();
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
    let result = serverbench_engine::LoadResult {
        mode: serverbench_engine::result::Mode::Http,
        ..Default::default()
    };
    let mut v = serde_json::to_value(result).unwrap();
    assert_valid(&v);
    v.as_object_mut().unwrap().remove("rps");
    assert!(!schema().is_valid(&v));
}
