//! `serverbench report` through the real binary, over the report crate's fixture folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/fixtures")
        .join(name)
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
fn markdown_report_uses_the_suite_baseline_and_shows_versions() {
    let dir = fixture("basic");
    let out = serverbench(&["report", dir.to_str().unwrap(), "--format", "md"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let md = text(&out.stdout);
    assert!(
        md.contains("Speed factor relative to node/express."),
        "{md}"
    );
    assert!(
        md.contains("  Versions:    go/stdlib     go1.26.0\n"),
        "{md}"
    );
    assert!(md.contains("rust/hyper    hyper 1.4.1\n"), "{md}");
    assert!(
        !md.contains("| hyper 1.4.1 |"),
        "a version in the ranking: {md}"
    );
}

#[test]
fn the_default_terminal_report_fits_120_columns_and_wide_shows_versions() {
    let dir = fixture("basic");
    let out = serverbench(&["report", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let widest = report.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 120, "{widest} columns:\n{report}");
    assert!(
        report.contains("150,500"),
        "no thousands separators:\n{report}"
    );
    let out = serverbench(&["report", dir.to_str().unwrap(), "--wide"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let wide = text(&out.stdout);
    let row = wide
        .lines()
        .find(|l| l.contains("rust/hyper") && l.contains("150,000"))
        .unwrap();
    assert!(row.contains("hyper 1.4.1"), "{row}");
    assert!(
        row.chars().count() > 120,
        "--wide shows every column: {row}"
    );
}

#[test]
fn report_writes_csv_to_the_output_file() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("out.csv");
    let dir = fixture("basic");
    let out = serverbench(&[
        "report",
        dir.to_str().unwrap(),
        "-f",
        "csv",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let csv = std::fs::read_to_string(file).unwrap();
    assert!(csv.starts_with("suite,scenario,profile,"));
    assert_eq!(csv.lines().filter(|l| l.starts_with("fixture,")).count(), 7);
}

#[test]
fn an_explicit_baseline_changes_the_speed_factors() {
    let dir = fixture("basic");
    let out = serverbench(&["report", dir.to_str().unwrap(), "--baseline", "rust/hyper"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("speed vs rust/hyper"));
}

#[test]
fn an_unknown_baseline_or_format_is_an_error_naming_it() {
    let dir = fixture("basic");
    let out = serverbench(&["report", dir.to_str().unwrap(), "--baseline", "nope/x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--baseline nope/x: no such server"),
        "{}",
        text(&out.stderr)
    );
    let out = serverbench(&["report", dir.to_str().unwrap(), "--format", "pdf"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("valid formats: term, md"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_folder_without_results_is_an_error_naming_the_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let out = serverbench(&["report", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(tmp.path().to_str().unwrap()) && err.contains("no results.jsonl"),
        "{err}"
    );
}

#[test]
fn a_trailing_partial_line_is_ignored_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let mut laps = std::fs::read_to_string(fixture("basic").join("results.jsonl")).unwrap();
    laps.push_str("{\"suite\": \"fixture\", \"server\": \"rust/hy");
    std::fs::write(tmp.path().join("results.jsonl"), laps).unwrap();
    let out = serverbench(&["report", tmp.path().to_str().unwrap(), "-f", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("partial line"),
        "{}",
        text(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["tables"].as_array().unwrap().len(), 2);
    assert!(v["env"].is_null());
}

#[test]
fn svg_format_writes_one_file_per_chart_and_lists_them() {
    let tmp = tempfile::tempdir().unwrap();
    let charts = tmp.path().join("charts");
    let dir = fixture("basic");
    let out = serverbench(&[
        "report",
        dir.to_str().unwrap(),
        "--format",
        "svg",
        "-o",
        charts.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    // 4 + 5 x 2 for the HTTP table; 3 + 2 x 1 for the echo stream (no latency) and echo Mbps.
    assert_eq!(listed.len(), 20, "{listed:?}");
    for path in &listed {
        let svg = std::fs::read_to_string(path).unwrap();
        assert!(svg.starts_with("<svg xmlns="), "{path}");
    }
    assert!(charts.join("hello-c50-latency.svg").exists());
}

#[test]
fn html_format_writes_the_page_to_the_output_file() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("page.html");
    let dir = fixture("basic");
    let args = [
        "report",
        dir.to_str().unwrap(),
        "-f",
        "html",
        "-o",
        file.to_str().unwrap(),
    ];
    let out = serverbench(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(html.contains("<h2 id=\"diagnostics\">") && html.contains("<svg "));
    assert!(
        html.contains("RSS kept growing"),
        "the diagnostics are missing"
    );
}

#[test]
fn terminal_report_appends_the_diagnostics() {
    let dir = fixture("basic");
    let out = serverbench(&["report", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(
        report.contains("latency has a long tail or a second mode"),
        "{report}"
    );
}

#[test]
fn the_terminal_groups_repeated_warnings_and_report_warnings_lists_each() {
    let dir = fixture("protocols");
    let dir = dir.to_str().unwrap();
    let out = serverbench(&["report", dir]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let short = text(&out.stdout);
    assert!(
        short.contains(
            "3 servers noisy (CV above 5%, marked ?): c/nginx, go/net-http, node/no-tickets"
        ),
        "{short}"
    );
    assert!(
        short.contains("c/nginx ?"),
        "the noisy rows are marked: {short}"
    );
    assert!(!short.contains("noisy, req/s varies"), "{short}");
    let out = serverbench(&["report", dir, "--warnings"]);
    let all = text(&out.stdout);
    assert_eq!(all.matches("noisy, req/s varies").count(), 12, "{all}");
    let md = text(&serverbench(&["report", dir, "-f", "md"]).stdout);
    assert_eq!(md.matches("noisy, req/s varies").count(), 12, "{md}");
}

#[test]
fn drop_disturbed_leaves_the_disturbed_laps_out_and_says_how_many() {
    let dir = fixture("disturbed");
    let all = serverbench(&["report", dir.to_str().unwrap()]);
    assert!(all.status.success(), "{}", text(&all.stderr));
    let all = text(&all.stdout);
    assert!(all.contains("! 2 disturbed laps: other processes 32% of the CPUs, steal 4.2%\n"));
    let out = serverbench(&["report", dir.to_str().unwrap(), "--drop-disturbed"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dropped = text(&out.stdout);
    assert!(
        dropped.contains("(2 left out of the figures: --drop-disturbed)"),
        "{dropped}"
    );
    let row = |t: &str| {
        let line = t.lines().find(|l| l.contains("go/stdlib ?!"));
        line.unwrap_or_default().to_owned()
    };
    assert!(
        row(&all).contains(" 3/3 ") && row(&dropped).contains(" 2/2 "),
        "{dropped}"
    );
}
