//! A suite's `find_max = { slo = … }` profile (a capacity search per lap) and `rate = …` profile
//! (cost at a fixed rate) through `serverbench run` and `serverbench report`, against the
//! harness's fixture catalog (Python stdlib servers).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/run-catalog")
}

fn serverbench(args: &[&str], results: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(args)
        .env("SERVERBENCH_CACHE", results.join("cache"))
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SUITE: &str = r#"
name = "capacity"
description = "d"
reproduces = "none"
servers = ["python/fast"]
laps = 1
warmup = "200ms"

[[scenario]]
name = "hello"
paths = ["/hello"]
requires = "hello"

[[profile]]
name = "p99-50ms"
connections = 8
duration = "500ms"
find_max = { slo = "p99<=50ms", start_rate = 50, max_steps = 4 }

[[profile]]
name = "rate100"
connections = 8
duration = "1s"
rate = 100
"#;

#[test]
fn a_find_max_profile_records_the_search_and_a_rate_profile_its_cost_in_every_report() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("capacity.toml");
    std::fs::write(&suite, SUITE).unwrap();
    let results = tmp.path().join("results");
    let root = fixture_root();
    let out = serverbench(
        &[
            "run",
            "--root",
            root.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
            suite.to_str().unwrap(),
        ],
        &results,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("Capacity · hello · p99-50ms"), "{stdout}");
    assert!(stdout.contains("Cost · hello · rate100"), "{stdout}");
    let dir = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.jsonl").is_file())
        .expect("a results folder");
    let records: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let search = records
        .iter()
        .find(|r| r["profile"] == "p99-50ms")
        .expect("the search's lap");
    assert_eq!(search["status"], "ok", "{search}");
    let capacity = &search["load"]["capacity"];
    assert_eq!(capacity["slo"], "p99<=50ms");
    assert!(
        capacity["steps"].as_array().unwrap().len() >= 2,
        "{capacity}"
    );
    assert_eq!(capacity["steps"][0]["rate_target"], 50.0, "{capacity}");
    let report = |format: &str| {
        let out = serverbench(&["report", dir.to_str().unwrap(), "-f", format], &results);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let page = tmp.path().join("report.html");
    let out = serverbench(
        &[
            "report",
            dir.to_str().unwrap(),
            "-f",
            "html",
            "-o",
            page.to_str().unwrap(),
        ],
        &results,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("latency against load"), "a curve per server");
    assert!(html.contains("Cost · hello · rate100"));
    let csv = report("csv");
    assert!(
        csv.contains("total_cpu_us_per_req") && csv.contains("capacity_rps"),
        "{csv}"
    );
    let json = report("json");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["summary"]["capacity"][0]["server"], "python/fast");
    let cost = &v["summary"]["cost"][0];
    assert_eq!(cost["rate_target"], 100.0);
    assert_eq!(cost["valid"], true, "{cost}");
    assert!(
        cost["total_cpu_us_per_request"].as_f64().unwrap() > 0.0,
        "{cost}"
    );
}
