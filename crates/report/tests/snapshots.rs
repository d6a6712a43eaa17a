//! Snapshot tests: every exporter over the fixture results folder, compared byte for byte with
//! `tests/snapshots/` (the SVG charts with `tests/snapshots/svg/`, one file per chart, viewable
//! in a browser). Run with `UPDATE_SNAPSHOTS=1` to rewrite the snapshots after a deliberate
//! change, then review the diff.

use serverbench_analysis::compare::compare;
use serverbench_analysis::summary::Summary;
use serverbench_report::env::suite_baseline;
use serverbench_report::{full_summary, render, render_comparison, render_with_laps, svg, Format};
use serverbench_results::env::Env;
use serverbench_results::{read_records, record::LapRecord};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn laps(name: &str) -> Vec<LapRecord> {
    read_records(&fixture(name).join("results.jsonl")).unwrap()
}

fn env_json() -> Env {
    let text = std::fs::read_to_string(fixture("basic").join("env.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Compares `actual` with the snapshot file, or rewrites it when UPDATE_SNAPSHOTS is set.
fn check_snapshot(file: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(file);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_SNAPSHOTS=1)", path.display()));
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .map_or(expected.lines().count().min(actual.lines().count()), |i| i);
        panic!(
            "{} differs from the output at line {}:\nexpected: {:?}\nactual:   {:?}\n\
             (UPDATE_SNAPSHOTS=1 rewrites it)",
            path.display(),
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line)
        );
    }
}

fn basic_summary() -> Summary {
    let env = env_json();
    full_summary(
        &laps("basic"),
        suite_baseline(Some(&env)).as_deref(),
        Some(&env),
    )
}

fn render_basic(format: Format) -> String {
    render_with_laps(format, &basic_summary(), Some(&env_json()), &laps("basic"))
}

#[test]
fn terminal_table_matches_the_snapshot() {
    check_snapshot("basic.txt", &render_basic(Format::Term));
}

#[test]
fn markdown_table_matches_the_snapshot() {
    check_snapshot("basic.md", &render_basic(Format::Markdown));
}

#[test]
fn json_summary_matches_the_snapshot() {
    check_snapshot("basic.json", &render_basic(Format::Json));
}

#[test]
fn csv_rows_match_the_snapshot() {
    check_snapshot("basic.csv", &render_basic(Format::Csv));
}

#[test]
fn markdown_shows_the_diagnostics_of_the_laps() {
    let md = render_basic(Format::Markdown);
    assert!(md.contains("p99.9 is 5040 µs, 10.5x the p50"), "{md}");
    assert!(md.contains("node/express (hello, c50): the server's RSS kept growing"));
}

#[test]
fn svg_charts_match_the_snapshots_one_file_each() {
    let files = svg::files(&basic_summary(), &laps("basic"));
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"hello-c50-latency.svg") && names.contains(&"echo-mbps.svg"));
    assert!(names.contains(&"hello-c50-node-express-timeline.svg"));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/svg");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
    }
    for (name, svg) in &files {
        assert!(
            svg.starts_with("<svg xmlns=") && svg.ends_with("</svg>\n"),
            "{name}"
        );
        check_snapshot(&format!("svg/{name}"), svg);
    }
    let mut stored: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    stored.sort();
    let mut expected: Vec<&str> = names.clone();
    expected.sort();
    assert_eq!(
        stored,
        expected,
        "stale or missing files in {}",
        dir.display()
    );
    check_snapshot("basic-svg.md", &render_basic(Format::Svg));
}

#[test]
fn html_page_holds_every_table_row_and_chart_and_nothing_external() {
    let html = render_basic(Format::Html);
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
    for server in [
        "node/uws",
        "rust/hyper",
        "go/stdlib",
        "node/http",
        "node/express",
    ] {
        assert!(
            html.contains(&format!("<td class=\"l\">{server}</td>")),
            "{server}"
        );
    }
    assert_eq!(html.matches("<table class=\"sortable\">").count(), 2);
    assert_eq!(
        html.matches("<svg ").count(),
        20,
        "8 charts and 5 x 2 + 2 x 1 timelines (an echo stream has no latency)"
    );
    assert_eq!(html.matches("<details>").count(), 7);
    let without_xmlns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!without_xmlns.contains("http://") && !without_xmlns.contains("https://"));
    assert!(!html.contains("<link") && !html.contains(" src="));
}

#[test]
fn markdown_without_env_has_no_configuration_and_dashes_for_versions() {
    let summary = full_summary(&laps("basic"), None, None);
    check_snapshot("basic-no-env.md", &render(Format::Markdown, &summary, None));
}

#[test]
fn comparison_of_the_regressed_folder_matches_the_snapshot() {
    let c = compare(&laps("basic"), &laps("regressed"));
    check_snapshot(
        "compare.txt",
        &render_comparison(Format::Term, &c, "basic", "regressed"),
    );
    check_snapshot(
        "compare.md",
        &render_comparison(Format::Markdown, &c, "basic", "regressed"),
    );
}
