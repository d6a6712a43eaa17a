//! gRPC laps in every format (`fixtures/grpc`): a real 2-lap run of go/grpc-go and rust/tonic
//! (`run` of `grpc-sum`, `grpcs-sum` and `grpc-echo-1k`, 4 connections x 4 streams, 1 s;
//! the suite of `crates/cli/tests/run_grpc_cli.rs` with both servers and 2 laps), histograms,
//! timelines and disturbance dropped, then edited so failed calls show: 50 of each of tonic's
//! echo laps fail, 30 with 8 RESOURCE_EXHAUSTED and 20 without trailers. Snapshots in
//! `tests/snapshots/` (`INSTA_UPDATE=always cargo test -p serverbench-report --test grpc`).

use serverbench_report::{full_summary, render_with, Format, Options};
use serverbench_results::{read_records, record::LapRecord};
use std::path::Path;

fn laps() -> Vec<LapRecord> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/grpc");
    read_records(&dir.join("results.jsonl")).unwrap()
}

fn render(format: Format) -> String {
    let laps = laps();
    let summary = full_summary(&laps, Some("go/grpc-go"), None);
    render_with(format, &summary, None, &laps, Options::default())
}

fn check_snapshot(name: &str, actual: &str) {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s.bind(|| insta::assert_snapshot!(name, actual));
}

#[test]
fn grpc_tables_head_calls_per_second_and_name_failed_calls_by_status_in_the_terminal() {
    let term = render(Format::Term);
    check_snapshot("grpc-term", &term);
    for line in term.lines() {
        assert!(line.chars().count() <= 120, "{line}");
    }
    assert!(
        term.contains("grpc-sum / 4conn/1s (grpc m4, 4 connections)"),
        "{term}"
    );
    assert!(
        term.contains("grpcs-sum / 4conn/1s (grpcs m4, 4 connections)"),
        "{term}"
    );
    let heads: Vec<&str> = term.lines().filter(|l| l.contains("  #  server")).collect();
    assert!(
        heads.len() == 3
            && heads
                .iter()
                .all(|h| h.contains("calls/s") && !h.contains("req/s"))
    );
    assert!(
        term.contains("gRPC calls by how they ended, 4conn/1s"),
        "{term}"
    );
    assert!(
        term.contains("8 RESOURCE_EXHAUSTED ×60, no trailers ×40"),
        "{term}"
    );
    assert!(
        !term.contains("mean"),
        "a mean is never a gRPC figure: {term}"
    );
    assert!(term.contains("of calls failed (100 errors)"), "{term}");
}

#[test]
fn grpc_laps_in_markdown_json_and_csv_match_their_snapshots() {
    let md = render(Format::Markdown);
    check_snapshot("grpc-markdown", &md);
    assert!(
        md.contains("### gRPC calls by how they ended, 4conn/1s"),
        "{md}"
    );
    let csv = render(Format::Csv);
    check_snapshot("grpc-csv", &csv);
    let block = csv
        .split("\n\n")
        .find(|b| b.starts_with("server,scenario,profile,transport,method"));
    let block = block.expect("a gRPC block");
    assert!(
        block.contains("8 RESOURCE_EXHAUSTED=60;no trailers=40"),
        "{block}"
    );
    let json: serde_json::Value = serde_json::from_str(&render(Format::Json)).unwrap();
    let rows = json["summary"]["protocols"].as_array().unwrap();
    let echo = rows
        .iter()
        .find(|r| r["server"] == "rust/tonic" && r["scenario"] == "grpc-echo-1k")
        .unwrap();
    assert_eq!(echo["grpc"]["statuses"]["RESOURCE_EXHAUSTED"], 60, "{echo}");
    assert_eq!(echo["grpc"]["failures"]["no trailers"], 40, "{echo}");
    let tables = json["summary"]["tables"].as_array().unwrap();
    assert!(tables.iter().all(|t| t["mode"] == "grpc"));
}

#[test]
fn the_html_page_carries_the_grpc_table() {
    let html = render(Format::Html);
    assert!(html.contains("gRPC calls by how they ended, 4conn/1s"));
    assert!(html.contains("8 RESOURCE_EXHAUSTED ×60, no trailers ×40"));
    assert!(html.contains("calls/s"));
}
