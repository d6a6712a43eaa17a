//! HTTP/3 laps in every format: the `protocols` fixture (a real run of c/nginx and go/net-http
//! over HTTP/1.1, TLS and HTTP/2) with c/nginx's two `h2-hello` laps copied as `h3-hello` laps
//! (protocol `h3`, 16 streams, ALPN `h3`, an `http3` block instead of `http2`, 0.8 times the
//! req/s) and as `h2-hello-m16` laps (h2 at 16 streams, the h3 laps' partner): the
//! HTTP/3 table stands beside HTTP/2 and HTTP/1.1 over TLS of the same server, paths and profile
//! in the terminal, Markdown, HTML, CSV and JSON.

use serde_json::{json, Value};
use serverbench_report::{full_summary, render_with, Format, Options};
use serverbench_results::record::LapRecord;
use std::path::Path;

fn laps() -> Vec<LapRecord> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/protocols/results.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let h2: Vec<Value> = (lines.iter())
        .filter(|v| v["server"] == "c/nginx" && v["scenario"] == "h2-hello")
        .cloned()
        .collect();
    assert_eq!(h2.len(), 2, "the fixture's two h2-hello laps of c/nginx");
    for (i, mut v) in h2.into_iter().enumerate() {
        // The same lap at 16 streams over h2: the h3 laps' partner (h3 stands beside h2 at
        // as many streams per connection).
        let mut h2_16 = v.clone();
        h2_16["scenario"] = "h2-hello-m16".into();
        h2_16["params"]["streams"] = 16.into();
        lines.push(h2_16);
        v["scenario"] = "h3-hello".into();
        v["params"]["protocol"] = "h3".into();
        v["params"]["streams"] = 16.into();
        let load = v["load"].as_object_mut().unwrap();
        load.remove("http2");
        let rps = load["rps"].as_f64().unwrap() * 0.8;
        load.insert("rps".into(), rps.into());
        load["tls"]["alpn"] = "h3".into();
        load.insert("http3".into(), http3_block(i as u64 + 1));
        lines.push(v);
    }
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    text.iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Lap `n`'s HTTP/3 block: 9n of 10n requests accepted in 0-RTT, n - 1 packets lost, GRO on lap 1
/// only.
fn http3_block(n: u64) -> Value {
    json!({
        "streams": 16, "connection_mode": "keep-alive", "max_streams_bidi": 100,
        "qpack_max_table_capacity": 0, "goaways": 0,
        "zero_rtt": {"attempted": 10 * n, "accepted": 9 * n},
        "quic": {
            "datagrams_sent": 4000 * n, "datagrams_received": 6000 * n,
            "send_calls": 1000 * n, "recv_calls": 3000 * n,
            "bytes_sent": 1_000_000 * n, "bytes_received": 2_000_000 * n,
            "packets_lost": n - 1, "bytes_lost": 1200 * (n - 1), "congestion_events": 0,
            "gso": true, "gro": n == 1, "socket": "per-connection"
        },
        "transport_errors": {},
        "h3_errors": {"H3_REQUEST_REJECTED": n},
        "stream_resets": n
    })
}

fn render(format: Format) -> String {
    let laps = laps();
    let summary = full_summary(&laps, Some("c/nginx"), None);
    render_with(format, &summary, None, &laps, Options::default())
}

#[test]
fn the_terminal_shows_http3_beside_http2_and_http11_over_tls_within_120_columns() {
    let term = render(Format::Term);
    for line in term.lines() {
        assert!(line.chars().count() <= 120, "{line}");
    }
    let at = term
        .find("HTTP/3 beside HTTP/2 and HTTP/1.1 over TLS, 20conn/2s")
        .unwrap_or_else(|| panic!("{term}"));
    let row = term[at..].lines().find(|l| l.contains("h3-hello")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..3], ["c/nginx", "h3-hello", "h3"], "{row}");
    assert!(row.contains("0.80x"), "h3/h2 is 0.8: {row}");
    assert!(row.contains("90.0%") && row.ends_with(" 1"), "{row}");
    assert!(
        row.contains("  4.0  "),
        "12,000 datagrams in 3,000 sends: {row}"
    );
    assert!(
        term.contains("dg/send, dg/recv: UDP datagrams per send"),
        "{term}"
    );
    assert!(
        term.contains("h3-hello / 20conn/2s (h3 m16, 20 connections)"),
        "{term}"
    );
}

#[test]
fn markdown_html_csv_and_json_carry_the_http3_table() {
    let md = render(Format::Markdown);
    assert!(
        md.contains("HTTP/3 beside HTTP/2 and HTTP/1.1 over TLS, 20conn/2s"),
        "{md}"
    );
    let html = render(Format::Html);
    assert!(
        html.contains("HTTP/3 beside HTTP/2 and HTTP/1.1 over TLS, 20conn/2s"),
        "the HTML page has the table"
    );
    let csv = render(Format::Csv);
    let block = (csv.split("\n\n"))
        .find(|b| {
            b.starts_with("server,scenario,profile,transport,streams,server_max_streams_bidi")
        })
        .unwrap_or_else(|| panic!("{csv}"));
    let row = block.lines().nth(1).unwrap();
    assert!(
        row.starts_with("c/nginx,h3-hello,20conn/2s,h3 m16,16,100,"),
        "{row}"
    );
    assert!(row.contains(",27/30,"), "0-RTT accepted/attempted: {row}");
    assert!(
        row.contains(",true,false,1,"),
        "GSO, not GRO on every lap, 1 lost: {row}"
    );
    assert!(row.ends_with(",H3_REQUEST_REJECTED=3,3"), "{row}");
    let json: Value = serde_json::from_str(&render(Format::Json)).unwrap();
    let rows = json["summary"]["protocols"].as_array().unwrap();
    let h3 = rows.iter().find(|r| r["scenario"] == "h3-hello").unwrap();
    assert_eq!(
        h3["h3"]["zero_rtt"],
        json!({"attempted": 30, "accepted": 27})
    );
    assert_eq!(h3["h3"]["max_streams_bidi"], json!({"max": 100}));
    assert_eq!(h3["protocol"], "h3");
}
