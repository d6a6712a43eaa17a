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

/// A run of `suite` against the fixture catalog with `extra` flags: whether it succeeded, its
/// stdout and stderr, the results folder and its laps.
struct Ran {
    ok: bool,
    stdout: String,
    dir: PathBuf,
    laps: Vec<serde_json::Value>,
}

fn run_suite(tmp: &Path, suite: &str, extra: &[&str]) -> Ran {
    let file = tmp.join("capacity.toml");
    std::fs::write(&file, suite).unwrap();
    let results = tmp.join("results");
    let root = fixture_root();
    let mut args = vec![
        "run",
        "--root",
        root.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ];
    args.extend(extra);
    args.push(file.to_str().unwrap());
    let out = serverbench(&args, &results);
    let stdout = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    let dir = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.jsonl").is_file())
        .expect("a results folder");
    let laps = std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Ran {
        ok: out.status.success(),
        stdout,
        dir,
        laps,
    }
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
    let Ran {
        ok,
        stdout,
        dir,
        laps: records,
    } = run_suite(tmp.path(), SUITE, &[]);
    assert!(ok, "{stdout}");
    let results = tmp.path().join("results");
    assert!(stdout.contains("Capacity · hello · p99-50ms"), "{stdout}");
    assert!(stdout.contains("Cost · hello · rate100"), "{stdout}");
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
    // The engine read the server's tree per step (a short step of a fast server can use less
    // than one clock tick, 10 ms, so some read 0); the lap's cost is its capacity step's.
    let steps = capacity["steps"].as_array().unwrap();
    let cpu = |s: &serde_json::Value| s["server_cpu_us_per_request"].as_f64();
    assert!(
        steps.iter().all(|s| cpu(s).is_some_and(|v| v >= 0.0))
            && steps.iter().any(|s| cpu(s).is_some_and(|v| v > 0.0)),
        "{capacity}"
    );
    let at = steps
        .iter()
        .rev()
        .find(|s| s["met"] == true && s["rate_target"] == capacity["capacity_rps"])
        .expect("the capacity step");
    assert_eq!(
        search["server_stats"]["cpu_us_per_request"], at["server_cpu_us_per_request"],
        "{search}"
    );
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
    let md = report("md");
    assert!(
        md.contains("### Capacity curve · python/fast · hello · p99-50ms")
            && md.contains("| target/s |"),
        "every step in Markdown: {md}"
    );
    assert!(html.contains("Capacity curve · python/fast"));
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

#[test]
fn history_judges_a_searchs_capacity_and_a_fixed_rates_cost() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.db");
    let record = ["--record", "--history", db.to_str().unwrap()];
    let ran = run_suite(tmp.path(), SUITE, &record);
    assert!(ran.ok, "{}", ran.stdout);
    let results = ran.dir;
    let out = serverbench(
        &[
            "history",
            "check",
            "--history",
            db.to_str().unwrap(),
            "--format",
            "bmf",
        ],
        &results,
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    let has = |profile: &str, measure: &str| {
        json[format!("python/fast hello {profile} h1")][measure]["value"]
            .as_f64()
            .is_some_and(|v| v > 0.0)
    };
    assert!(
        has("p99-50ms", "throughput"),
        "capacity as the search's series: {json}"
    );
    assert!(
        has("p99-50ms", "cpu-us-per-request"),
        "cost at capacity: {json}"
    );
    assert!(
        has("rate100", "cpu-us-per-request"),
        "cost at the fixed rate: {json}"
    );
}

#[test]
fn until_ci_repeats_a_search_until_its_capacity_interval_is_narrow_enough() {
    let tmp = tempfile::tempdir().unwrap();
    let searches_only = SUITE
        .split("[[profile]]\nname = \"rate100\"")
        .next()
        .unwrap();
    let until = ["--until-ci", "50%", "--min-laps", "3", "--max-laps", "4"];
    let Ran {
        ok, stdout, laps, ..
    } = run_suite(tmp.path(), searches_only, &until);
    assert!(ok, "{stdout}");
    assert!((3..=4).contains(&laps.len()), "{} laps", laps.len());
    assert!(
        laps.iter()
            .all(|l| l["status"] == "ok" && l["load"]["capacity"]["capacity_rps"].is_number()),
        "every lap a whole search"
    );
    assert!(stdout.contains("p99-50ms"), "{stdout}");
}

#[test]
fn a_search_that_misses_its_goal_at_the_first_rate_fails_the_lap_and_keeps_the_step() {
    let tmp = tempfile::tempdir().unwrap();
    let impossible = SUITE
        .split("[[profile]]\nname = \"rate100\"")
        .next()
        .unwrap()
        .replace("p99<=50ms", "p99<=1us");
    let ran = run_suite(tmp.path(), &impossible, &[]);
    let lap = &ran.laps[0];
    assert_eq!(lap["status"], "failed", "{}", ran.stdout);
    let why = lap["failure"]["detail"].as_str().unwrap_or_default();
    assert!(why.contains("p99"), "the goal that failed: {lap}");
    let steps = lap["load"]["capacity"]["steps"]
        .as_array()
        .expect("the step kept");
    assert_eq!(steps.len(), 1, "{lap}");
    assert_eq!(steps[0]["rate_target"], 50.0, "{lap}");
    assert_eq!(
        lap["load"]["capacity"]["ending"], "goal-missed-at-start",
        "{lap}"
    );
}
