//! `serverbench compare` through the real binary: the regression exit code on two fixture
//! folders (`regressed` has node/http 20% slower and rust/hyper 10% faster than `basic`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> String {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/fixtures")
        .join(name);
    p.to_str().unwrap().to_owned()
}

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_twenty_percent_regression_fails_a_five_percent_threshold() {
    let out = serverbench(&[
        "compare",
        &fixture("basic"),
        &fixture("regressed"),
        "--fail-above",
        "5%",
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("regression: node/http (hello, c50) is 20.0% slower"),
        "{err}"
    );
    assert!(!err.contains("rust/hyper"), "{err}");
    let table = text(&out.stdout);
    assert!(
        table.contains("slower") && table.contains("faster"),
        "{table}"
    );
}

#[test]
fn the_same_regression_passes_a_twenty_five_percent_threshold() {
    let out = serverbench(&[
        "compare",
        &fixture("basic"),
        &fixture("regressed"),
        "--fail-above",
        "25%",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn without_a_threshold_compare_only_reports() {
    let out = serverbench(&[
        "compare",
        &fixture("basic"),
        &fixture("regressed"),
        "-f",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["comparison"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 7);
    let node = rows.iter().find(|r| r["server"] == "node/http").unwrap();
    assert_eq!(node["verdict"], "slower");
}

#[test]
fn a_folder_without_laps_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("results.jsonl"), "\n").unwrap();
    let dir = tmp.path().to_str().unwrap();
    let out = serverbench(&["compare", &fixture("basic"), dir]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains(dir) && err.contains("holds no laps"), "{err}");
}

#[test]
fn a_bad_threshold_is_rejected_by_the_flag_parser() {
    let out = serverbench(&[
        "compare",
        &fixture("basic"),
        &fixture("regressed"),
        "--fail-above",
        "lots",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a usage error, not the regression code"
    );
    assert!(
        text(&out.stderr).contains("not a percentage"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn html_or_svg_output_of_a_comparison_is_a_usage_error_not_a_terminal_table() {
    for format in ["html", "svg"] {
        let out = serverbench(&[
            "compare",
            &fixture("basic"),
            &fixture("regressed"),
            "--format",
            format,
        ]);
        assert_eq!(out.status.code(), Some(1), "--format {format}");
        assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!("a comparison has no {format} form"))
                && err.contains("term, md, json or csv"),
            "{err}"
        );
    }
}

#[test]
fn a_comparison_renders_as_csv_with_raw_figures() {
    let out = serverbench(&[
        "compare",
        &fixture("basic"),
        &fixture("regressed"),
        "-f",
        "csv",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "server,scenario,profile,old_median,new_median,ratio,ratio_low,ratio_high,verdict,\
             measure"
        )
    );
    let node = lines.find(|l| l.starts_with("node/http,")).unwrap();
    assert!(
        node.starts_with("node/http,hello,c50,30250,24200,0.8"),
        "{node}"
    );
    assert!(node.ends_with(",slower,req/s"), "{node}");
}

#[test]
fn at_a_fixed_rate_more_cpu_per_request_is_the_regression_and_the_table_says_costlier() {
    use serverbench_history::synth::{write_run, RunSpec};
    let tmp = tempfile::tempdir().unwrap();
    let old = write_run(tmp.path(), "old", &RunSpec::at_rate(40.0, 2_000.0, 1)).unwrap();
    let new = write_run(tmp.path(), "new", &RunSpec::at_rate(52.0, 2_000.0, 2)).unwrap();
    let out = serverbench(&[
        "compare",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
        "--fail-above",
        "5%",
    ]);
    let (stdout, err) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(4), "{stdout}{err}");
    assert!(
        err.contains("regression: mine (hello, c64) costs ")
            && err.contains("% more CPU per request (new/old 1.2"),
        "{err}"
    );
    assert!(
        stdout.contains("old µs/req")
            && stdout.contains("costlier")
            && stdout.contains("cost: CPU"),
        "{stdout}"
    );
    let back = serverbench(&["compare", new.to_str().unwrap(), old.to_str().unwrap()]);
    assert!(
        text(&back.stdout).contains("cheaper"),
        "{}",
        text(&back.stdout)
    );
    let csv = serverbench(&[
        "compare",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
        "-f",
        "csv",
    ]);
    let csv = text(&csv.stdout);
    assert!(csv.lines().next().unwrap().ends_with(",measure"), "{csv}");
    assert!(csv.contains(",costlier,µs/req"), "{csv}");
}
