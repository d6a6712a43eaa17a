//! A database lap outside the statement rules (its record's `database.off_contract`) in every
//! report format: the row marked `✗` and unranked in the tables, the reason in a warning, an
//! `off_contract` column in the CSV and a field in the JSON.

use serverbench_report::{full_summary, render_with, Format, Options};
use serverbench_results::env::Env;
use serverbench_results::{read_records, record::LapRecord};
use std::path::Path;

const WHY: &str =
    "single-row SELECTs on world (top level): expected 88 (±4), got PostgreSQL ran 4 (a cache?)";

/// The database fixture (two psql-backed servers) with psql-b's `/db` c4 laps outside the rules.
fn render(format: Format) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/database");
    let mut laps: Vec<LapRecord> = read_records(&dir.join("results.jsonl")).unwrap();
    for r in laps
        .iter_mut()
        .filter(|r| r.server == "psql-b" && r.scenario == "db" && r.profile == "c4")
    {
        r.database.as_mut().unwrap().off_contract = vec![WHY.to_owned()];
    }
    let text = std::fs::read_to_string(dir.join("env.json")).unwrap();
    let env: Env = serde_json::from_str(&text).unwrap();
    let summary = full_summary(&laps, None, Some(&env));
    render_with(format, &summary, Some(&env), &laps, Options::default())
}

#[test]
fn a_lap_outside_the_statement_rules_is_marked_and_unranked_in_every_format() {
    let term = render(Format::Term);
    let marked = |text: &str| {
        text.lines()
            .any(|l| l.contains("psql-b !✗") && !l.trim_start().starts_with('1'))
    };
    assert!(marked(&term), "unranked and marked: {term}");
    assert!(
        term.contains("psql-b (db, c4): left out of the ranks: 2 of 2 laps outside the"),
        "{term}"
    );
    let md = render(Format::Markdown);
    assert!(md.contains("psql-b !✗") && md.contains(WHY), "{md}");
    let html = render(Format::Html);
    assert!(
        html.contains("psql-b !✗") && html.contains("(a cache?)"),
        "{html}"
    );
    let csv = render(Format::Csv);
    let row = csv
        .lines()
        .find(|l| l.contains(",db,c4,") && l.contains("psql-b"))
        .unwrap();
    assert!(row.contains("outside the statement rules"), "{row}");
    let json: serde_json::Value = serde_json::from_str(&render(Format::Json)).unwrap();
    let tables = json["summary"]["tables"]
        .as_array()
        .or(json["tables"].as_array())
        .unwrap();
    let c4 = tables
        .iter()
        .find(|t| t["scenario"] == "db" && t["profile"] == "c4")
        .unwrap();
    let b = c4["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["server"] == "psql-b")
        .unwrap();
    assert!(b["rank"].is_null(), "{b}");
    assert!(b["off_contract"].as_str().unwrap().contains(WHY), "{b}");
}
