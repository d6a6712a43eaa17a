//! Snapshot tests with `insta`: every exporter over the fixture results folder, compared with
//! the `.snap` files in `tests/snapshots/` (the SVG charts as binary snapshots in
//! `tests/snapshots/svg/`, each chart a plain `.snap.svg` file viewable in a browser). After a
//! deliberate change, run `INSTA_UPDATE=always cargo test -p serverbench-report --test snapshots`
//! (or `cargo insta review`, when cargo-insta is installed) and review the diff.

use serverbench_analysis::compare::compare;
use serverbench_analysis::summary::Summary;
use serverbench_report::env::suite_baseline;
use serverbench_report::{
    full_summary, render, render_comparison, render_with, svg, Format, Options,
};
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

/// Snapshots named after the test's subject alone (`basic-term.snap`), in `tests/snapshots/`.
fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s
}

/// Asserts `actual` equals the named text snapshot.
fn check_snapshot(name: &str, actual: &str) {
    assert!(actual.ends_with('\n'), "{name}: no final newline");
    settings().bind(|| insta::assert_snapshot!(name, actual));
}

fn basic_summary() -> Summary {
    let env = env_json();
    full_summary(
        &laps("basic"),
        suite_baseline(Some(&env)).as_deref(),
        Some(&env),
    )
}

fn render_basic_with(format: Format, options: Options) -> String {
    render_with(
        format,
        &basic_summary(),
        Some(&env_json()),
        &laps("basic"),
        options,
    )
}

fn render_basic(format: Format) -> String {
    render_basic_with(format, Options::default())
}

#[test]
fn terminal_table_matches_the_snapshot() {
    check_snapshot("basic-term", &render_basic(Format::Term));
}

#[test]
fn wide_terminal_table_shows_versions_and_every_column() {
    let wide = render_basic_with(
        Format::Term,
        Options {
            wide: true,
            ..Default::default()
        },
    );
    check_snapshot("basic-term-wide", &wide);
    let header = wide
        .lines()
        .find(|l| l.trim_start().starts_with("# "))
        .unwrap();
    for column in ["version", "best", "cv%", "MB/s", "ctx sw/req"] {
        assert!(header.contains(column), "{column} missing from {header}");
    }
    assert!(wide.contains("16.63x (16.21–16.78)"), "{wide}");
}

#[test]
fn the_default_terminal_report_fits_120_columns_with_versions_above_the_tables() {
    let report = render_basic(Format::Term);
    for line in report.lines() {
        let width = line.chars().count();
        assert!(width <= 120, "{width} columns: {line}");
    }
    let (config, tables) = report.split_once("\nhello / c50").unwrap();
    assert!(config.contains("rust/hyper    hyper 1.4.1"), "{config}");
    assert!(!tables.contains("hyper 1.4.1") && !tables.contains("version"));
}

#[test]
fn the_interval_column_says_whether_it_is_a_bootstrap_interval_or_a_range() {
    let report = render_basic(Format::Term);
    let hello = report.lines().find(|l| l.contains("req/s")).unwrap();
    assert!(hello.contains("95% CI/range"), "mixed table: {hello}");
    assert!(
        report.contains("±250 range"),
        "node/http has 2 laps: {report}"
    );
    let two_laps: Vec<LapRecord> = laps("basic").into_iter().filter(|r| r.lap <= 2).collect();
    let summary = full_summary(&two_laps, None, None);
    let report = render(Format::Term, &summary, None);
    let hello = report.lines().find(|l| l.contains("req/s")).unwrap();
    assert!(
        hello.contains(" range ") && !hello.contains("CI"),
        "{hello}"
    );
    assert!(!report.contains("±250 range"), "{report}");
}

#[test]
fn markdown_table_matches_the_snapshot() {
    check_snapshot("basic-markdown", &render_basic(Format::Markdown));
}

#[test]
fn json_summary_matches_the_snapshot() {
    check_snapshot("basic-json", &render_basic(Format::Json));
}

#[test]
fn csv_rows_match_the_snapshot() {
    check_snapshot("basic-csv", &render_basic(Format::Csv));
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
    let mut settings = settings();
    settings.set_snapshot_path("snapshots/svg");
    for (name, svg) in &files {
        assert!(
            svg.starts_with("<svg xmlns=") && svg.ends_with("</svg>\n"),
            "{name}"
        );
        settings.bind(|| insta::assert_binary_snapshot!(name.as_str(), svg.clone().into_bytes()));
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/svg");
    let mut stored: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".snap.svg").map(|n| format!("{n}.svg")))
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
    check_snapshot("basic-svg-markdown", &render_basic(Format::Svg));
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
    let diagnostics = html.find("<h2 id=\"diagnostics\">").unwrap();
    let last_chart = html.rfind("<svg ").unwrap();
    assert!(
        html.find("<table class=\"sortable\">").unwrap() < diagnostics && last_chart < diagnostics,
        "the page leads with its tables and charts, the diagnostics follow"
    );
    let without_xmlns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!without_xmlns.contains("http://") && !without_xmlns.contains("https://"));
    assert!(!html.contains("<link") && !html.contains(" src="));
}

#[test]
fn markdown_without_env_has_no_configuration_nor_versions() {
    let summary = full_summary(&laps("basic"), None, None);
    let md = render(Format::Markdown, &summary, None);
    check_snapshot("basic-no-env-markdown", &md);
    assert!(
        !md.contains("Configuration") && !md.contains("Versions"),
        "{md}"
    );
}

#[test]
fn wide_markdown_without_env_shows_a_dash_for_each_version() {
    let summary = full_summary(&laps("basic"), None, None);
    let md = render_with(
        Format::Markdown,
        &summary,
        None,
        &[],
        Options {
            wide: true,
            ..Default::default()
        },
    );
    assert!(
        md.contains("| version |") || md.contains("| version "),
        "{md}"
    );
    assert!(md.contains("| node/uws     | -       |"), "{md}");
}

#[test]
fn comparison_of_the_regressed_folder_matches_the_snapshot() {
    let c = compare(&laps("basic"), &laps("regressed"));
    check_snapshot(
        "compare-term",
        &render_comparison(Format::Term, &c, "basic", "regressed").unwrap(),
    );
    check_snapshot(
        "compare-markdown",
        &render_comparison(Format::Markdown, &c, "basic", "regressed").unwrap(),
    );
}

fn sweep_env() -> Env {
    let text = std::fs::read_to_string(fixture("sweep").join("env.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The core sweep fixture (1, 2 and 4 cores), rendered in `format`.
fn render_sweep(format: Format, options: Options) -> String {
    let env = sweep_env();
    let records = laps("sweep");
    let summary = full_summary(&records, suite_baseline(Some(&env)).as_deref(), Some(&env));
    render_with(format, &summary, Some(&env), &records, options)
}

#[test]
fn a_core_sweep_gets_a_scaling_table_in_the_terminal_within_120_columns() {
    let report = render_sweep(Format::Term, Options::default());
    check_snapshot("sweep-term", &report);
    for line in report.lines() {
        assert!(line.chars().count() <= 120, "too wide: {line}");
    }
    let scaling = report
        .split_once("hello / 10conn/10s: req/s by server cores")
        .expect("a scaling table")
        .1;
    let header = scaling.lines().nth(1).unwrap();
    for column in [
        "1 core req/s",
        "2 cores req/s",
        "4 cores req/s",
        "eff.",
        "95% CI",
    ] {
        assert!(header.contains(column), "{column} missing from {header}");
    }
    let effects = scaling
        .lines()
        .find(|l| l.trim_start().starts_with("ocaml/effects"))
        .unwrap();
    assert!(effects.contains("110,000*"), "client saturated: {effects}");
    assert!(report.contains("node/http (hello, 10conn/10s): stops scaling at 2 CPUs"));
}

#[test]
fn a_core_sweep_gets_a_scaling_table_in_markdown() {
    let md = render_sweep(Format::Markdown, Options::default());
    check_snapshot("sweep-markdown", &md);
    assert!(
        md.contains("### hello · 10conn/10s: req/s by server cores"),
        "{md}"
    );
    assert!(
        md.contains("scaling efficiency rps(N) / (N/m x rps(m))"),
        "{md}"
    );
    let wide = render_sweep(
        Format::Markdown,
        Options {
            wide: true,
            ..Default::default()
        },
    );
    let effects = wide
        .lines()
        .rfind(|l| l.starts_with("| ocaml/effects"))
        .unwrap();
    assert!(
        effects.contains("| 0.64–0.68 |"),
        "intervals as bounds: {effects}"
    );
}

#[test]
fn a_core_sweep_gets_a_line_chart_of_req_per_second_against_cores() {
    let env = sweep_env();
    let records = laps("sweep");
    let summary = full_summary(&records, None, Some(&env));
    let files = svg::files(&summary, &records);
    let (name, chart) = files
        .iter()
        .find(|(n, _)| n == "hello-10conn-10s-scaling.svg")
        .expect("a scaling chart");
    assert_eq!(chart.matches("<polyline").count(), 4, "one line per server");
    let mut settings = settings();
    settings.set_snapshot_path("snapshots/svg-sweep");
    settings.bind(|| insta::assert_binary_snapshot!(name.as_str(), chart.clone().into_bytes()));
    let html = render_sweep(Format::Html, Options::default());
    let section = html
        .split_once("<h2 id=\"scaling\">")
        .expect("a scaling section")
        .1;
    assert!(
        section.contains("id=\"hello-10conn-10s-scaling\""),
        "the chart"
    );
    assert!(section.contains("<th>95% CI</th>") && section.contains("<th>eff.</th>"));
    assert!(
        html.contains("<a href=\"#hello-10conn-10s-scaling\">see chart</a>"),
        "where a server stops scaling links to the chart"
    );
}

#[test]
fn the_json_summary_of_a_core_sweep_carries_the_curves() {
    let json = render_sweep(Format::Json, Options::default());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let curves = v["summary"]["scaling"].as_array();
    assert_eq!(curves.map(Vec::len), Some(4), "{json}");
}

/// Laps over TLS and HTTP/2 (`fixtures/protocols`): a real 2-lap run of c/nginx and go/net-http
/// (`run --scenario hello,https-hello,https-handshake,https-resume,h2-hello,h2c-hello -c 20
/// -d 2s`), histograms and timelines dropped, then edited so every diagnostic shows:
/// `node/no-tickets` is nginx's https-resume laps with no handshake resumed, go's
/// https-handshake laps are marked client-saturated, nginx's h2 laps carry 12 refused streams
/// and a GOAWAY.
fn render_protocols(format: Format) -> String {
    let laps = laps("protocols");
    let summary = full_summary(&laps, None, None);
    render_with(format, &summary, None, &laps, Options::default())
}

#[test]
fn tls_and_http2_laps_get_their_tables_and_diagnostics_in_markdown() {
    let md = render_protocols(Format::Markdown);
    check_snapshot("protocols-markdown", &md);
    for needle in [
        "### https-resume · 20conn/2s (https new-conn resume=tickets, 20 connections)",
        "### TLS: what the handshakes negotiated, 20conn/2s",
        "TLS\\_AES\\_128\\_GCM\\_SHA256",
        "### TLS handshakes, a new connection per request, 20conn/2s",
        "### HTTP/2 against HTTP/1.1 on the same transport, 20conn/2s",
        "resumed none of its",
        "bound by the client",
        "refused 24 streams",
    ] {
        assert!(md.contains(needle), "{needle}: {md}");
    }
}

#[test]
fn tls_and_http2_tables_fit_the_terminal_snapshot() {
    check_snapshot("protocols-term", &render_protocols(Format::Term));
}

#[test]
fn csv_carries_the_tls_and_http2_tables_each_under_its_own_header() {
    let csv = render_protocols(Format::Csv);
    check_snapshot("protocols-csv", &csv);
    let blocks: Vec<&str> = csv.split("\n\n").collect();
    assert_eq!(blocks.len(), 3, "summary, TLS and HTTP/2: {csv}");
    let header = |b: &str| b.lines().next().unwrap().to_owned();
    assert!(
        header(blocks[0]).ends_with(",latency_source,transport,off_contract"),
        "appended, so the columns before keep their places"
    );
    let mode_and_transport = |line: &str| {
        let f: Vec<&str> = line.split(',').collect();
        (f[3].to_owned(), f[f.len() - 2].to_owned())
    };
    let handshake = blocks[0]
        .lines()
        .find(|l| l.contains(",https-handshake,"))
        .unwrap();
    assert_eq!(
        mode_and_transport(handshake),
        ("http".into(), "https new-conn resume=off".into())
    );
    let h2c = blocks[0]
        .lines()
        .find(|l| l.contains(",h2c-hello,"))
        .unwrap();
    assert_eq!(mode_and_transport(h2c), ("http".into(), "h2c".into()));
    assert!(header(blocks[1]).starts_with("server,scenario,profile,transport,tls_version,"));
    assert!(header(blocks[2]).contains(",server_max_streams,"));
    let resumed = blocks[1]
        .lines()
        .find(|l| l.starts_with("node/no-tickets,https-resume,"))
        .unwrap();
    assert!(
        resumed.contains(",tickets,8208,0,"),
        "asked for tickets, none of 8208 handshakes resumed: {resumed}"
    );
    assert_eq!(blocks[2].lines().count(), 4, "a header and 3 HTTP/2 rows");
}

#[test]
fn the_json_summary_carries_the_protocol_rows_and_the_h2_to_h1_ratio() {
    let laps = laps("protocols");
    let json: serde_json::Value = serde_json::from_str(&render(
        Format::Json,
        &full_summary(&laps, None, None),
        None,
    ))
    .unwrap();
    let rows = json["summary"]["protocols"].as_array().unwrap();
    let h2c = rows
        .iter()
        .find(|r| r["server"] == "go/net-http" && r["protocol"] == "h2c")
        .unwrap();
    let (rps, h1) = (
        h2c["rps"].as_f64().unwrap(),
        h2c["h2"]["h1_rps"].as_f64().unwrap(),
    );
    let ratio = h2c["h2"]["ratio_to_h1"].as_f64().unwrap();
    assert!((ratio - rps / h1).abs() < 1e-9, "{h2c}");
}

fn disturbed(drop_disturbed: bool, format: Format) -> String {
    let text = std::fs::read_to_string(fixture("disturbed").join("env.json")).unwrap();
    let env: Env = serde_json::from_str(&text).unwrap();
    let records = laps("disturbed");
    let summary = serverbench_analysis::analyze_with(
        &records,
        suite_baseline(Some(&env)).as_deref(),
        Some(&env),
        serverbench_analysis::Options { drop_disturbed },
    );
    render_with(format, &summary, Some(&env), &records, Options::default())
}

#[test]
fn disturbed_laps_are_marked_in_the_terminal_and_detailed_in_markdown() {
    let term = disturbed(false, Format::Term);
    assert!(term.contains("go/stdlib ?!"), "noisy and disturbed: {term}");
    assert!(term.contains("! 2 disturbed laps: other processes 32% of the CPUs, steal 4.2%"));
    check_snapshot("disturbed-term", &term);
    let md = disturbed(false, Format::Markdown);
    assert!(md.contains("go/stdlib (hello / c50) lap 2: other processes 32% of the CPUs"));
    check_snapshot("disturbed-markdown", &md);
}

#[test]
fn drop_disturbed_computes_the_figures_from_the_remaining_laps_and_says_so() {
    let term = disturbed(true, Format::Term);
    assert!(
        term.contains("(2 left out of the figures: --drop-disturbed)"),
        "{term}"
    );
    check_snapshot("disturbed-dropped-term", &term);
    let json: serde_json::Value = serde_json::from_str(&disturbed(true, Format::Json)).unwrap();
    let rows = json["summary"]["tables"][0]["servers"].as_array().unwrap();
    let stdlib = rows.iter().find(|r| r["server"] == "go/stdlib").unwrap();
    assert_eq!(stdlib["laps"], 2, "{stdlib}");
    assert_eq!(json["summary"]["disturbed"][0]["dropped"], true);
    assert!(json["summary"]["until_ci"]["cells"].is_array());
}

/// Database laps (`fixtures/database`): a real 2-lap run of two psql-backed Python servers
/// (crates/cli/tests/run_database_cli.rs's) on /db at 4 and 16 connections and queries-5 at 16,
/// pool 16, 1 s laps, with the database's floor pgbench measured at the end of the run (4 and 16
/// sessions) in env.json; histograms and timelines dropped.
fn render_database(format: Format) -> String {
    let laps = laps("database");
    let text = std::fs::read_to_string(fixture("database").join("env.json")).unwrap();
    let env: Env = serde_json::from_str(&text).unwrap();
    let summary = full_summary(&laps, None, Some(&env));
    render_with(format, &summary, Some(&env), &laps, Options::default())
}

#[test]
fn database_laps_read_as_a_share_of_the_floor_in_the_terminal() {
    let term = render_database(Format::Term);
    check_snapshot("database-term", &term);
    for needle in ["of floor", "db CPU", "27,525 selects/s at 4 sessions"] {
        assert!(term.contains(needle), "{needle}: {term}");
    }
}

#[test]
fn database_laps_read_as_a_share_of_the_floor_in_markdown_and_csv() {
    let md = render_database(Format::Markdown);
    check_snapshot("database-markdown", &md);
    assert!(
        md.contains("of floor") && md.contains("selects/s at 4 sessions"),
        "{md}"
    );
    let csv = render_database(Format::Csv);
    check_snapshot("database-csv", &csv);
    let block = csv
        .split("\n\n")
        .find(|b| b.contains("of_floor"))
        .expect("the db block");
    let header: Vec<&str> = block.lines().next().unwrap().split(',').collect();
    let col = |k: &str| header.iter().position(|h| *h == k).unwrap();
    let row = block
        .lines()
        .find(|l| l.starts_with("psql-a,db,c16,"))
        .unwrap();
    let f: Vec<&str> = row.split(',').collect();
    let (rps, floor, share): (f64, f64, f64) = (
        f[col("rps")].parse().unwrap(),
        f[col("floor_selects_per_s")].parse().unwrap(),
        f[col("of_floor")].trim_end_matches('x').parse().unwrap(),
    );
    assert!((share - rps / floor).abs() < 0.01, "{row}");
}

#[test]
fn database_laps_carry_the_floor_in_json_and_html() {
    let json: serde_json::Value = serde_json::from_str(&render_database(Format::Json)).unwrap();
    let rows = json["summary"]["database"].as_array().unwrap();
    let db = rows
        .iter()
        .find(|r| r["scenario"] == "db" && r["profile"] == "c16")
        .unwrap();
    let share = db["of_floor"].as_f64().unwrap();
    let expected = db["rps"].as_f64().unwrap() / db["floor_selects_per_s"].as_f64().unwrap();
    assert!((share - expected).abs() < 1e-9, "{db}");
    assert!(db["db_cpu_share"].as_f64().is_some(), "{db}");
    let queries = rows.iter().find(|r| r["scenario"] == "queries-5").unwrap();
    assert!(queries["of_floor"].is_null(), "{queries}");
    assert_eq!(json["env"]["database_floor"].as_array().unwrap().len(), 2);
    let html = render_database(Format::Html);
    assert!(
        html.contains("of floor") && html.contains("db CPU"),
        "the HTML table"
    );
}
