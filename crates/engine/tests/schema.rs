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
    let v = serde_json::to_value(run(&cfg)).unwrap();
    assert_valid(&v);
    assert!(v["latency_us_uncorrected"]["p99"].is_number());
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
