//! The tables of laps over TLS and HTTP/2, from [`serverbench_analysis::protocol`]: what the
//! TLS handshakes negotiated and cost (version, cipher, handshakes/s, resumption rate, server
//! and client CPU per handshake), and HTTP/2 beside HTTP/1.1 on the same transport (streams,
//! the server's stream limit, the h2/h1 ratio, GOAWAYs and refused streams). The CSV forms
//! ([`tls_csv`], [`h2_csv`]) add the columns a table leaves to its hints or its title: the
//! profile, the resumption asked for, the handshake counts, streams and protocol errors.

use super::{build, Align, Cell, ColumnDef, Grid};
use crate::text::{grouped, num, MISSING};
use serverbench_analysis::protocol::{H2Figures, ProtocolRow, StreamLimit, TlsFigures};
use serverbench_analysis::summary::Summary;
use serverbench_results::TlsResume;

/// The columns of both tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Server,
    Scenario,
    Profile,
    Transport,
    Rps,
    // TLS
    Version,
    Cipher,
    HandshakesPerS,
    Resumed,
    ServerCpuPerHandshake,
    ClientCpuPerHandshake,
    ResumeAsked,
    Handshakes,
    HandshakesResumed,
    // HTTP/2
    Streams,
    MaxStreams,
    H1Rps,
    Ratio,
    Goaways,
    Refused,
    ProtocolErrors,
}

const TLS: [Col; 10] = {
    use Col::*;
    [
        Server,
        Scenario,
        Transport,
        Version,
        Cipher,
        HandshakesPerS,
        Resumed,
        ServerCpuPerHandshake,
        ClientCpuPerHandshake,
        Rps,
    ]
};

const H2: [Col; 10] = {
    use Col::*;
    [
        Server, Scenario, Profile, Transport, MaxStreams, Rps, H1Rps, Ratio, Goaways, Refused,
    ]
};

const TLS_CSV: [Col; 14] = {
    use Col::*;
    [
        Server,
        Scenario,
        Profile,
        Transport,
        Version,
        Cipher,
        ResumeAsked,
        Handshakes,
        HandshakesResumed,
        HandshakesPerS,
        Resumed,
        ServerCpuPerHandshake,
        ClientCpuPerHandshake,
        Rps,
    ]
};

const H2_CSV: [Col; 12] = {
    use Col::*;
    [
        Server,
        Scenario,
        Profile,
        Transport,
        Streams,
        MaxStreams,
        Rps,
        H1Rps,
        Ratio,
        Goaways,
        Refused,
        ProtocolErrors,
    ]
};

/// A name, or `-` for people and empty for machines.
fn text(v: Option<&String>) -> Cell {
    match v {
        Some(v) => Cell::plain(v),
        None => missing(MISSING),
    }
}

impl ColumnDef<ProtocolRow> for Col {
    fn key(&self) -> &'static str {
        use Col::*;
        match self {
            Server => "server",
            Scenario => "scenario",
            Profile => "profile",
            Transport => "transport",
            Rps => "rps_median",
            Version => "tls_version",
            Cipher => "cipher_suite",
            HandshakesPerS => "handshakes_per_s",
            Resumed => "resumption_rate",
            ServerCpuPerHandshake => "server_cpu_us_per_handshake",
            ClientCpuPerHandshake => "client_cpu_us_per_handshake",
            ResumeAsked => "tls_resume",
            Handshakes => "handshakes",
            HandshakesResumed => "handshakes_resumed",
            Streams => "streams",
            MaxStreams => "server_max_streams",
            H1Rps => "h1_rps_median",
            Ratio => "h2_h1_ratio",
            Goaways => "goaways",
            Refused => "refused_streams",
            ProtocolErrors => "h2_protocol_errors",
        }
    }

    fn label(&self) -> &'static str {
        use Col::*;
        match self {
            Server => "server",
            Scenario => "scenario",
            Profile => "profile",
            Transport => "protocol",
            Rps => "req/s",
            Version => "TLS",
            Cipher => "cipher",
            HandshakesPerS => "handshakes/s",
            Resumed => "resumed",
            ServerCpuPerHandshake => "server µs/hs",
            ClientCpuPerHandshake => "client µs/hs",
            ResumeAsked => "resume",
            Handshakes => "handshakes",
            HandshakesResumed => "resumed handshakes",
            Streams => "streams",
            MaxStreams => "server max streams",
            H1Rps => "h1 req/s",
            Ratio => "h2/h1",
            Goaways => "GOAWAYs",
            Refused => "refused",
            ProtocolErrors => "h2 errors",
        }
    }

    fn align(&self) -> Align {
        use Col::*;
        match self {
            Server | Scenario | Profile | Transport | Version | Cipher | ResumeAsked => Align::Left,
            _ => Align::Right,
        }
    }

    fn cell(&self, r: &ProtocolRow) -> Cell {
        let (t, h) = (r.tls.as_ref(), r.h2.as_ref());
        let n = |v: Option<f64>| Cell::number(v, |v| num(Some(v)));
        let reported = |f: fn(&H2Figures) -> Option<u64>| count(h.map(f));
        match self {
            Col::Server => Cell::plain(&r.server),
            Col::Scenario => Cell::plain(&r.scenario),
            Col::Profile => Cell::plain(&r.profile),
            Col::Transport => Cell::plain(&r.transport),
            Col::Rps => Cell::number(r.rps, grouped),
            Col::Version => text(t.and_then(|t| t.version.as_ref())),
            Col::Cipher => text(t.and_then(|t| t.cipher_suite.as_ref())),
            Col::HandshakesPerS => Cell::number(t.and_then(|t| t.handshakes_per_s), grouped),
            Col::Resumed => resumed(r),
            Col::ServerCpuPerHandshake => n(t.and_then(|t| t.server_cpu_us_per_handshake)),
            Col::ClientCpuPerHandshake => n(t.and_then(|t| t.client_cpu_us_per_handshake)),
            Col::ResumeAsked => text(t.and_then(|t| t.resume).map(|r| r.to_string()).as_ref()),
            Col::Handshakes => Cell::number(t.map(|t| t.handshakes as f64), grouped),
            Col::HandshakesResumed => Cell::number(t.map(|t| t.handshakes_resumed as f64), grouped),
            Col::Streams => Cell::number(h.map(|h| f64::from(h.streams)), grouped),
            Col::MaxStreams => max_streams(h.map(|h| h.max_concurrent_streams)),
            Col::H1Rps => Cell::number(h.and_then(|h| h.h1_rps), grouped),
            Col::Ratio => Cell::number(h.and_then(|h| h.ratio_to_h1), |v| format!("{v:.2}x")),
            Col::Goaways => reported(|h| h.goaways),
            Col::Refused => reported(|h| h.refused_streams),
            Col::ProtocolErrors => reported(|h| h.protocol_errors),
        }
    }
}

/// What a table shows where its laps reported nothing (an external tool's HTTP/2 laps).
pub const NOT_REPORTED: &str = "n/a";

/// No value: `text` for people, empty for machines.
fn missing(text: &str) -> Cell {
    Cell {
        text: text.to_owned(),
        ..Cell::default()
    }
}

/// A count, or [`NOT_REPORTED`] when the laps reported none (`-` without an HTTP/2 side).
fn count(v: Option<Option<u64>>) -> Cell {
    match v {
        Some(Some(n)) => Cell::number(Some(n as f64), grouped),
        Some(None) => missing(NOT_REPORTED),
        None => missing(MISSING),
    }
}

/// The server's stream limit: a number, `unlimited` when its SETTINGS set none, or
/// [`NOT_REPORTED`] when no lap saw them.
fn max_streams(limit: Option<StreamLimit>) -> Cell {
    match limit {
        Some(StreamLimit::Max(m)) => Cell::number(Some(f64::from(m)), grouped),
        Some(StreamLimit::Unlimited) => Cell::plain("unlimited"),
        Some(StreamLimit::NotReported) => missing(NOT_REPORTED),
        None => missing(MISSING),
    }
}

/// `87.5%` of the handshakes resumed; `-` when no handshake was counted or none was asked
/// (keep-alive laps handshake once per connection, new connections without resumption never).
fn resumed(r: &ProtocolRow) -> Cell {
    let asked = |t: &&TlsFigures| t.resume.is_some_and(|r| r != TlsResume::Off);
    let Some(t) = r.tls.as_ref().filter(asked) else {
        return Cell::number(None, grouped);
    };
    Cell::number(t.resumption_rate(), |v| format!("{:.1}%", v * 100.0)).with_hint(Some(format!(
        "{} of {} handshakes resumed",
        grouped(t.handshakes_resumed as f64),
        grouped(t.handshakes as f64)
    )))
}

/// Every row over TLS (HTTP/1.1 or h2).
fn tls_rows(summary: &Summary) -> Vec<ProtocolRow> {
    summary
        .protocols
        .iter()
        .filter(|r| r.tls.is_some())
        .cloned()
        .collect()
}

/// Every h2 and h2c row, by server and profile.
fn h2_rows(summary: &Summary) -> Vec<ProtocolRow> {
    let mut rows: Vec<ProtocolRow> = summary
        .protocols
        .iter()
        .filter(|r| r.h2.is_some())
        .cloned()
        .collect();
    rows.sort_by(|a, b| (&a.server, &a.profile).cmp(&(&b.server, &b.profile)));
    rows
}

fn grid_of(cols: &[Col], rows: Vec<ProtocolRow>) -> Option<Grid> {
    (!rows.is_empty()).then(|| build(cols, &rows, |_| (None, false)))
}

/// The TLS table: every row over TLS (HTTP/1.1 or h2); `None` without one.
pub fn tls_grid(summary: &Summary) -> Option<Grid> {
    grid_of(&TLS, tls_rows(summary))
}

/// The HTTP/2 table: every h2 and h2c row beside HTTP/1.1 on its transport; `None` without
/// one.
pub fn h2_grid(summary: &Summary) -> Option<Grid> {
    grid_of(&H2, h2_rows(summary))
}

/// The TLS table's rows for CSV, with the profile, the resumption asked for and the handshake
/// counts; `None` without a row over TLS.
pub fn tls_csv(summary: &Summary) -> Option<Grid> {
    grid_of(&TLS_CSV, tls_rows(summary))
}

/// The HTTP/2 table's rows for CSV, with the streams asked for and the protocol errors; `None`
/// without an h2 or h2c row.
pub fn h2_csv(summary: &Summary) -> Option<Grid> {
    grid_of(&H2_CSV, h2_rows(summary))
}

/// What the columns of the two tables mean, for the formats with a legend.
pub fn protocol_legend(summary: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    if summary.protocols.iter().any(|r| r.tls.is_some()) {
        out.push(
            "TLS: the version and cipher the handshakes negotiated. handshakes/s: median of the \
             laps with a new connection per request (keep-alive: -, one per connection). \
             resumed: the share of handshakes that resumed a session, where resumption was \
             asked. server µs/hs and client µs/hs: CPU time per handshake, its request included."
                .to_owned(),
        );
    }
    if summary.protocols.iter().any(|r| r.h2.is_some()) {
        let mut line = "h2/h1: HTTP/2's median req/s over HTTP/1.1's on the same transport (h2 \
                        against HTTPS, h2c against plain HTTP; same server, paths and profile). \
                        server max streams: its SETTINGS_MAX_CONCURRENT_STREAMS (unlimited: its \
                        SETTINGS set none). refused: streams reset with REFUSED_STREAM."
            .to_owned();
        if summary.protocols.iter().any(unreported) {
            line.push_str(&format!(
                " {NOT_REPORTED}: not reported by the laps (h2load reports no SETTINGS, GOAWAYs \
                 or refused streams; the merge of a run over several client hosts keeps no \
                 SETTINGS or GOAWAYs)."
            ));
        }
        out.push(line);
    }
    out
}

/// Whether an HTTP/2 row lacks a figure its laps did not report.
fn unreported(r: &ProtocolRow) -> bool {
    r.h2.as_ref().is_some_and(|h| {
        h.max_concurrent_streams == StreamLimit::NotReported
            || h.goaways.is_none()
            || h.refused_streams.is_none()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_results::Protocol;

    /// A summary with one h2 row whose figures are `h2`.
    fn h2_summary(h2: H2Figures) -> Summary {
        let mut summary = crate::full_summary(&[], None, None);
        summary.protocols = vec![ProtocolRow {
            scenario: "h2-hello".into(),
            profile: "c50".into(),
            server: "python/granian".into(),
            transport: "h2".into(),
            protocol: Protocol::H2,
            new_conn: false,
            rps: Some(1000.0),
            tls: None,
            h2: Some(h2),
        }];
        summary
    }

    /// The H2 table's cells of `column`, as people read them and as the CSV file has them.
    fn cell(summary: &Summary, column: &str) -> (String, String) {
        let grid = h2_grid(summary).unwrap();
        let c = grid.columns.iter().position(|c| c.label == column).unwrap();
        let text = grid.rows[0].cells[c].text.clone();
        let csv = h2_csv(summary).unwrap();
        let key = grid.columns[c].key;
        let k = csv.columns.iter().position(|c| c.key == key).unwrap();
        (text, csv.rows[0].cells[k].raw.clone())
    }

    #[test]
    fn an_h2load_lap_shows_its_stream_limit_as_not_reported_and_says_why() {
        let summary = h2_summary(H2Figures {
            streams: 16,
            ..H2Figures::default()
        });
        let not_reported = ("n/a".to_owned(), String::new());
        assert_eq!(cell(&summary, "server max streams"), not_reported);
        assert_eq!(cell(&summary, "GOAWAYs"), not_reported);
        assert_eq!(cell(&summary, "refused"), not_reported);
        let legend = protocol_legend(&summary).join("\n");
        assert!(
            legend.contains("n/a: not reported by the laps (h2load"),
            "{legend}"
        );
    }

    #[test]
    fn a_server_that_set_no_limit_is_unlimited_and_needs_no_not_reported_legend() {
        let summary = h2_summary(H2Figures {
            streams: 1,
            max_concurrent_streams: StreamLimit::Unlimited,
            goaways: Some(0),
            refused_streams: Some(3),
            protocol_errors: Some(0),
            ..H2Figures::default()
        });
        let unlimited = ("unlimited".to_owned(), "unlimited".to_owned());
        assert_eq!(cell(&summary, "server max streams"), unlimited);
        assert_eq!(cell(&summary, "refused"), ("3".into(), "3".into()));
        let legend = protocol_legend(&summary).join("\n");
        assert!(legend.contains("unlimited: its SETTINGS set none") && !legend.contains("n/a"));
    }
}
