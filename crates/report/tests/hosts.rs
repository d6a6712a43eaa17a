//! Reports of a run over several machines (the `hosts` fixture: two servers, three laps each,
//! load from two client hosts): the per-host tables under each summary table in every format,
//! as `insta` snapshots in `tests/snapshots/` (after a deliberate change:
//! `INSTA_UPDATE=always cargo test -p serverbench-report --test hosts`, then review the diff).

use serverbench_model::histo::{self, latency_of};
use serverbench_report::{full_summary, render, Format};
use serverbench_results::{read_records, record::LapRecord};
use std::path::Path;

fn laps() -> Vec<LapRecord> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/results.jsonl");
    read_records(&path).unwrap()
}

fn report(format: Format) -> String {
    render(format, &full_summary(&laps(), None, None), None)
}

/// Asserts `actual` equals the named text snapshot.
fn check_snapshot(name: &str, actual: &str) {
    assert!(actual.ends_with('\n'), "{name}: no final newline");
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s.bind(|| insta::assert_snapshot!(name, actual));
}

#[test]
fn the_terminal_shows_each_client_hosts_share_under_the_table_within_120_columns() {
    let out = report(Format::Term);
    check_snapshot("hosts-term", &out);
    for line in out.lines() {
        assert!(line.chars().count() <= 120, "too wide: {line}");
    }
    let (_, hosts) = out
        .split_once("per client host:")
        .expect("a per-host table");
    let (hosts, _) = hosts.split_once("Warnings:").unwrap();
    let rows = hosts
        .lines()
        .filter(|l| l.contains(" sb-client1 ") || l.contains(" sb-client2 "))
        .count();
    assert_eq!(rows, 12, "2 servers x 3 laps x 2 hosts: {out}");
    assert!(hosts.contains("per lap:") && hosts.contains("start skew ms"));
    assert!(out.contains("client host sb-client2 saturated"), "{out}");
    assert!(out.contains("more than 1 ms apart"), "{out}");
    assert!(out.contains("read from the exact merge of every lap's latency histogram"));
}

#[test]
fn markdown_json_and_csv_carry_the_per_host_breakdown() {
    let md = report(Format::Markdown);
    check_snapshot("hosts-markdown", &md);
    assert!(
        md.contains("Per client host:") && md.contains("| sb-client2 "),
        "{md}"
    );
    let json = report(Format::Json);
    check_snapshot("hosts-json", &json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["summary"]["hosts"].as_array().map(Vec::len), Some(6));
    let csv = report(Format::Csv);
    check_snapshot("hosts-csv", &csv);
    let (_, hosts) = csv.split_once("\n\n").expect("a second table");
    assert!(hosts.starts_with("scenario,profile,server,lap,status,server_host,host,"));
    assert_eq!(hosts.lines().count(), 13, "a header and 12 rows");
}

#[test]
fn the_html_page_has_a_per_host_table_in_the_section_of_its_table() {
    let summary = full_summary(&laps(), None, None);
    let html =
        serverbench_report::render_with(Format::Html, &summary, None, &laps(), Default::default());
    assert_eq!(
        html.matches("<h3>Per client host</h3>").count(),
        1,
        "one table"
    );
    assert_eq!(html.matches("<td class=\"l\">sb-client2</td>").count(), 6);
    assert!(html.contains(">SATURATED</td>"));
}

#[test]
fn a_cells_latency_comes_from_the_merged_histograms_of_its_laps() {
    let records = laps();
    let summary = full_summary(&records, None, None);
    let row = summary.tables[0]
        .servers
        .iter()
        .find(|s| s.server == "node/http")
        .unwrap();
    let texts = records.iter().filter(|r| r.server == "node/http").map(|r| {
        r.load
            .as_ref()
            .unwrap()
            .histograms
            .as_ref()
            .unwrap()
            .latency_us
            .as_str()
    });
    let all = latency_of(&histo::merge(texts).unwrap());
    assert_eq!(
        (row.latency_p50_us, row.latency_p99_us),
        (Some(all.p50), Some(all.p99))
    );
    assert_eq!(row.latency_max_us, Some(all.max));
}
