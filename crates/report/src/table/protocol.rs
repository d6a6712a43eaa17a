//! The tables of laps over TLS and HTTP/2, from [`serverbench_analysis::protocol`], one of
//! each kind per load profile: what the TLS handshakes negotiated (ALPN, version, cipher,
//! group), what they cost where each request had its own connection (handshakes/s, resumption
//! rate, handshake latency, server and client CPU per handshake), and HTTP/2 beside HTTP/1.1 on
//! the same transport (the server's stream limit, the h2/h1 ratio, GOAWAYs and refused
//! streams). Two TLS tables rather than one keep each within a 120-column terminal at the
//! catalog's longest server ids. The CSV forms ([`tls_csv`], [`h2_csv`]) keep one table each
//! with the columns the tables leave to their hints or headings: the profile, the protocol,
//! the resumption asked for, the handshake counts, streams and protocol errors.

use super::{build, Align, Cell, ColumnDef, Grid};
use crate::text::{grouped, num, MISSING};
use serverbench_analysis::protocol::{H2Figures, ProtocolRow, StreamLimit, TlsFigures};
use serverbench_analysis::summary::Summary;
use serverbench_model::TlsResume;

/// The columns of the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Server,
    Scenario,
    Profile,
    Transport,
    Rps,
    // TLS
    Alpn,
    Version,
    Cipher,
    Group,
    ResumeAsked,
    HandshakesPerS,
    Resumed,
    HandshakeP50,
    HandshakeP99,
    ServerCpuPerHandshake,
    ClientCpuPerHandshake,
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

/// What the handshakes negotiated, every row over TLS.
const NEGOTIATED: [Col; 6] = {
    use Col::*;
    [Server, Scenario, Alpn, Version, Cipher, Group]
};

/// What the handshakes cost, the rows with a new connection per request (where req/s is
/// handshakes/s, so it is left to the summary table).
const HANDSHAKES: [Col; 9] = {
    use Col::*;
    [
        Server,
        Scenario,
        ResumeAsked,
        HandshakesPerS,
        Resumed,
        HandshakeP50,
        HandshakeP99,
        ServerCpuPerHandshake,
        ClientCpuPerHandshake,
    ]
};

const H2: [Col; 9] = {
    use Col::*;
    [
        Server, Scenario, Transport, MaxStreams, Rps, H1Rps, Ratio, Goaways, Refused,
    ]
};

const TLS_CSV: [Col; 18] = {
    use Col::*;
    [
        Server,
        Scenario,
        Profile,
        Transport,
        Version,
        Cipher,
        Group,
        Alpn,
        ResumeAsked,
        Handshakes,
        HandshakesResumed,
        HandshakesPerS,
        Resumed,
        HandshakeP50,
        HandshakeP99,
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

/// What a table shows where its laps reported nothing (an external tool's HTTP/2 laps).
pub const NOT_REPORTED: &str = "n/a";

impl ColumnDef<ProtocolRow> for Col {
    fn key(&self) -> &'static str {
        use Col::*;
        match self {
            Server => "server",
            Scenario => "scenario",
            Profile => "profile",
            Transport => "transport",
            Rps => "rps_median",
            Alpn => "alpn",
            Version => "tls_version",
            Cipher => "cipher_suite",
            Group => "key_exchange_group",
            ResumeAsked => "tls_resume",
            HandshakesPerS => "handshakes_per_s",
            Resumed => "resumption_rate",
            HandshakeP50 => "handshake_p50_us",
            HandshakeP99 => "handshake_p99_us",
            ServerCpuPerHandshake => "server_cpu_us_per_handshake",
            ClientCpuPerHandshake => "client_cpu_us_per_handshake",
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
            Alpn => "ALPN",
            Version => "TLS",
            Cipher => "cipher",
            Group => "group",
            ResumeAsked => "resume",
            HandshakesPerS => "hs/s",
            Resumed => "resumed",
            HandshakeP50 => "hs p50 µs",
            HandshakeP99 => "hs p99 µs",
            ServerCpuPerHandshake => "srv µs/hs",
            ClientCpuPerHandshake => "cli µs/hs",
            Handshakes => "handshakes",
            HandshakesResumed => "resumed handshakes",
            Streams => "streams",
            MaxStreams => "max streams",
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
            Server | Scenario | Profile | Transport | Alpn | Version | Cipher | Group
            | ResumeAsked => Align::Left,
            _ => Align::Right,
        }
    }

    fn cell(&self, r: &ProtocolRow) -> Cell {
        let (t, h) = (r.tls.as_ref(), r.h2.as_ref());
        let n = |v: Option<f64>| Cell::number(v, |v| num(Some(v)));
        let name = |f: fn(&TlsFigures) -> &Option<String>| text(t.and_then(|t| f(t).as_ref()));
        let reported = |f: fn(&H2Figures) -> Option<u64>| count(h.map(f));
        match self {
            Col::Server => Cell::plain(&r.server),
            Col::Scenario => Cell::plain(&r.scenario),
            Col::Profile => Cell::plain(&r.profile),
            Col::Transport => Cell::plain(&r.transport),
            Col::Rps => Cell::number(r.rps, grouped),
            Col::Alpn => name(|t| &t.alpn),
            Col::Version => name(|t| &t.version),
            Col::Cipher => name(|t| &t.cipher_suite),
            Col::Group => name(|t| &t.key_exchange_group),
            Col::ResumeAsked => resume_asked(t),
            Col::HandshakesPerS => Cell::number(t.and_then(|t| t.handshakes_per_s), grouped),
            Col::Resumed => resumed(r),
            Col::HandshakeP50 => n(t.and_then(|t| t.handshake_p50_us)),
            Col::HandshakeP99 => n(t.and_then(|t| t.handshake_p99_us)),
            Col::ServerCpuPerHandshake => n(t.and_then(|t| t.server_cpu_us_per_handshake)),
            Col::ClientCpuPerHandshake => n(t.and_then(|t| t.client_cpu_us_per_handshake)),
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

/// A name, or `-` for people and empty for machines.
fn text(v: Option<&String>) -> Cell {
    match v {
        Some(v) => Cell::plain(v),
        None => missing(MISSING),
    }
}

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
pub(super) fn max_streams(limit: Option<StreamLimit>) -> Cell {
    match limit {
        Some(StreamLimit::Max(m)) => Cell::number(Some(f64::from(m)), grouped),
        Some(StreamLimit::Unlimited) => Cell::plain("unlimited"),
        Some(StreamLimit::NotReported) => missing(NOT_REPORTED),
        None => missing(MISSING),
    }
}

/// `--tls-resume` as asked: `tickets`, `ids` or `off`; people read `off` where none was asked
/// (every handshake is then full), machines an empty field.
fn resume_asked(t: Option<&TlsFigures>) -> Cell {
    match t.and_then(|t| t.resume) {
        Some(r) => Cell::plain(r.to_string()),
        None => missing(&TlsResume::Off.to_string()),
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

/// `rows` split by load profile, in first-seen order.
fn by_profile(rows: Vec<ProtocolRow>) -> Vec<(String, Vec<ProtocolRow>)> {
    rows_by_profile(rows, |r| r.profile.clone())
}

/// `rows` split by the load profile `profile` reads, in first-seen order.
pub(super) fn rows_by_profile<R>(
    rows: Vec<R>,
    profile: impl Fn(&R) -> String,
) -> Vec<(String, Vec<R>)> {
    let mut out: Vec<(String, Vec<R>)> = Vec::new();
    for r in rows {
        let p = profile(&r);
        match out.iter_mut().find(|(q, _)| *q == p) {
            Some((_, g)) => g.push(r),
            None => out.push((p, vec![r])),
        }
    }
    out
}

/// The tables of the laps over TLS, HTTP/2, gRPC and HTTP/3, each with its heading: what TLS
/// negotiated, what its handshakes cost where each request had its own connection, HTTP/2
/// against HTTP/1.1, gRPC calls by how they ended ([`super::grpc`]) and HTTP/3 beside HTTP/2
/// and HTTP/1.1 ([`super::h3`]); one of each kind per load profile, none of a kind without its
/// rows.
pub fn protocol_tables(summary: &Summary) -> Vec<(String, Grid)> {
    let kinds: [(&str, &[Col], Vec<ProtocolRow>); 3] = [
        (
            "TLS: what the handshakes negotiated",
            &NEGOTIATED,
            tls_rows(summary),
        ),
        (
            "TLS handshakes, a new connection per request",
            &HANDSHAKES,
            tls_rows(summary)
                .into_iter()
                .filter(|r| r.new_conn)
                .collect(),
        ),
        (
            "HTTP/2 against HTTP/1.1 on the same transport",
            &H2,
            h2_rows(summary),
        ),
    ];
    let mut out = Vec::new();
    for (heading, cols, rows) in kinds {
        for (profile, rows) in by_profile(rows) {
            let grid = grid_of(cols, rows).expect("a profile has rows");
            out.push((format!("{heading}, {profile}"), grid));
        }
    }
    out.extend(super::grpc::grpc_tables(summary));
    out.extend(super::h3::h3_tables(summary));
    out
}

/// The TLS rows for CSV, with the profile, the protocol, the resumption asked for and the
/// handshake counts; `None` without a row over TLS.
pub fn tls_csv(summary: &Summary) -> Option<Grid> {
    grid_of(&TLS_CSV, tls_rows(summary))
}

/// The HTTP/2 table's rows for CSV, with the streams asked for and the protocol errors; `None`
/// without an h2 or h2c row.
pub fn h2_csv(summary: &Summary) -> Option<Grid> {
    grid_of(&H2_CSV, h2_rows(summary))
}

/// Whether an HTTP/2 row lacks a figure its laps did not report.
fn unreported(r: &ProtocolRow) -> bool {
    r.h2.as_ref().is_some_and(|h| {
        h.max_concurrent_streams == StreamLimit::NotReported
            || h.goaways.is_none()
            || h.refused_streams.is_none()
    })
}

/// What the columns of the tables mean, one line per table kind shown.
pub fn protocol_legend(summary: &Summary) -> Vec<String> {
    let rows = &summary.protocols;
    let mut out = Vec::new();
    if rows.iter().any(|r| r.tls.is_some()) {
        out.push(
            "ALPN, TLS, cipher, group: what the handshakes negotiated (the first lap that says; \
             ALPN -: none agreed)."
                .to_owned(),
        );
    }
    if rows.iter().any(|r| r.tls.is_some() && r.new_conn) {
        out.push(
            "hs/s: handshakes per second, median of the laps (one per request: the summary's \
             req/s). resume: the resumption asked for (--tls-resume); resumed: the share of \
             handshakes that resumed a session. hs p50/p99 µs: from TCP connected to handshake \
             done, the median of the laps' figures. srv/cli µs/hs: server/client CPU time per \
             handshake, its request included."
                .to_owned(),
        );
    }
    if rows.iter().any(|r| r.h2.is_some()) {
        let mut line = "h2/h1: HTTP/2's median req/s over HTTP/1.1's on the same transport (h2 \
                        against HTTPS, h2c against plain HTTP; same server, paths and profile). \
                        max streams: the server's SETTINGS_MAX_CONCURRENT_STREAMS (unlimited: \
                        its SETTINGS set none). refused: streams reset with REFUSED_STREAM."
            .to_owned();
        if rows.iter().any(unreported) {
            line.push_str(&format!(
                " {NOT_REPORTED}: not reported by the laps (h2load reports no SETTINGS, GOAWAYs \
                 or refused streams)."
            ));
        }
        out.push(line);
    }
    out.extend(super::grpc::grpc_legend(summary));
    out.extend(super::h3::h3_legend(summary));
    out
}

/// Each row of `summary` that `pick` finds a block in, with that block, by profile and server.
pub(super) fn rows_with<T>(
    summary: &Summary,
    pick: impl Fn(&ProtocolRow) -> Option<T>,
) -> Vec<(ProtocolRow, T)> {
    let mut rows: Vec<(ProtocolRow, T)> = (summary.protocols.iter())
        .filter_map(|r| Some((r.clone(), pick(r)?)))
        .collect();
    rows.sort_by(|(a, _), (b, _)| (&a.profile, &a.server).cmp(&(&b.profile, &b.server)));
    rows
}

/// Counts by name: `H3_MESSAGE_ERROR ×3, …` for people (`-` for none), `H3_MESSAGE_ERROR=3;…`
/// for machines.
pub(super) fn counts_cell(counts: impl Iterator<Item = (String, u64)>) -> Cell {
    let all: Vec<(String, u64)> = counts.filter(|(_, n)| *n > 0).collect();
    if all.is_empty() {
        return Cell {
            text: "-".into(),
            ..Cell::default()
        };
    }
    let text: Vec<String> = all.iter().map(|(w, n)| format!("{w} ×{n}")).collect();
    let raw: Vec<String> = all.iter().map(|(w, n)| format!("{w}={n}")).collect();
    Cell {
        text: text.join(", "),
        raw: raw.join(";"),
        hint: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::Protocol;

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
            grpc: None,
            h3: None,
        }];
        summary
    }

    /// The H2 table's cells of `column`, as people read them and as the CSV file has them.
    fn cell(summary: &Summary, column: &str) -> (String, String) {
        let (heading, grid) = protocol_tables(summary).pop().unwrap();
        assert_eq!(
            heading,
            "HTTP/2 against HTTP/1.1 on the same transport, c50"
        );
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
        assert_eq!(cell(&summary, "max streams"), ("n/a".into(), String::new()));
        assert_eq!(cell(&summary, "GOAWAYs"), ("n/a".into(), String::new()));
        assert_eq!(cell(&summary, "refused"), ("n/a".into(), String::new()));
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
        assert_eq!(cell(&summary, "max streams"), unlimited);
        assert_eq!(cell(&summary, "refused"), ("3".into(), "3".into()));
        let legend = protocol_legend(&summary).join("\n");
        assert!(legend.contains("unlimited: its SETTINGS set none") && !legend.contains("n/a"));
    }

    #[test]
    fn each_load_profile_gets_tables_of_its_own() {
        let mut summary = h2_summary(H2Figures::default());
        let mut other = summary.protocols[0].clone();
        other.profile = "c1".into();
        summary.protocols.push(other);
        let headings: Vec<String> = protocol_tables(&summary).into_iter().map(|t| t.0).collect();
        assert_eq!(
            headings,
            [
                "HTTP/2 against HTTP/1.1 on the same transport, c1",
                "HTTP/2 against HTTP/1.1 on the same transport, c50"
            ]
        );
    }
}
