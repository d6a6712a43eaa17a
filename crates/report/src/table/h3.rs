//! The table of HTTP/3 laps, from [`serverbench_analysis::h3_figures`], one per load profile:
//! req/s beside HTTP/2 and HTTP/1.1 over TLS on the same server, paths and profile (h3/h2,
//! h3/h1), the share of 0-RTT requests accepted, datagrams per send and receive call (GSO and
//! GRO at work) and the packets lost. The CSV form ([`h3_csv`]) adds the profile, the streams
//! and the server's limit, the partners' req/s, GSO and GRO, and the closes and resets by code
//! as `name=count` lists.

use super::protocol::{counts_cell, max_streams, rows_by_profile, rows_with};
use super::{build, Align, Cell, ColumnDef, Grid};
use crate::text::grouped;
use serverbench_analysis::h3_figures::H3Figures;
use serverbench_analysis::protocol::ProtocolRow;
use serverbench_analysis::summary::Summary;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Server,
    Scenario,
    Profile,
    Transport,
    Streams,
    MaxStreams,
    Rps,
    H2Rps,
    RatioH2,
    H1Rps,
    RatioH1,
    ZeroRtt,
    PerSend,
    PerRecv,
    Gso,
    Gro,
    Lost,
    TransportErrors,
    H3Errors,
    Resets,
}

/// The terminal's: within 120 columns at the catalog's longest server ids.
const TABLE: [Col; 10] = {
    use Col::*;
    [
        Server, Scenario, Transport, Rps, RatioH2, RatioH1, ZeroRtt, PerSend, PerRecv, Lost,
    ]
};

const CSV: [Col; 20] = {
    use Col::*;
    [
        Server,
        Scenario,
        Profile,
        Transport,
        Streams,
        MaxStreams,
        Rps,
        H2Rps,
        RatioH2,
        H1Rps,
        RatioH1,
        ZeroRtt,
        PerSend,
        PerRecv,
        Gso,
        Gro,
        Lost,
        TransportErrors,
        H3Errors,
        Resets,
    ]
};

impl ColumnDef<(ProtocolRow, H3Figures)> for Col {
    fn key(&self) -> &'static str {
        match self {
            Col::Server => "server",
            Col::Scenario => "scenario",
            Col::Profile => "profile",
            Col::Transport => "transport",
            Col::Streams => "streams",
            Col::MaxStreams => "server_max_streams_bidi",
            Col::Rps => "rps_median",
            Col::H2Rps => "h2_rps_median",
            Col::RatioH2 => "h3_h2_ratio",
            Col::H1Rps => "h1_tls_rps_median",
            Col::RatioH1 => "h3_h1_ratio",
            Col::ZeroRtt => "zero_rtt_accepted_of_attempted",
            Col::PerSend => "datagrams_per_send",
            Col::PerRecv => "datagrams_per_recv",
            Col::Gso => "gso",
            Col::Gro => "gro",
            Col::Lost => "packets_lost",
            Col::TransportErrors => "quic_transport_errors",
            Col::H3Errors => "h3_errors",
            Col::Resets => "stream_resets",
        }
    }

    fn label(&self) -> &'static str {
        match self {
            Col::Transport => "protocol",
            Col::MaxStreams => "max streams",
            Col::Rps => "req/s",
            Col::RatioH2 => "h3/h2",
            Col::RatioH1 => "h3/h1",
            Col::ZeroRtt => "0-RTT ok",
            Col::PerSend => "dg/send",
            Col::PerRecv => "dg/recv",
            Col::Lost => "lost",
            other => other.key(),
        }
    }

    fn align(&self) -> Align {
        match self {
            Col::Server
            | Col::Scenario
            | Col::Profile
            | Col::Transport
            | Col::TransportErrors
            | Col::H3Errors => Align::Left,
            _ => Align::Right,
        }
    }

    fn cell(&self, (r, h): &(ProtocolRow, H3Figures)) -> Cell {
        let count = |n: u64| Cell::number(Some(n as f64), grouped);
        let ratio = |v: Option<f64>| Cell::number(v, |v| format!("{v:.2}x"));
        let per = |v: Option<f64>| Cell::number(v, |v| format!("{v:.1}"));
        match self {
            Col::Server => Cell::plain(&r.server),
            Col::Scenario => Cell::plain(&r.scenario),
            Col::Profile => Cell::plain(&r.profile),
            Col::Transport => Cell::plain(&r.transport),
            Col::Streams => count(u64::from(h.streams)),
            Col::MaxStreams => max_streams(Some(h.max_streams_bidi)),
            Col::Rps => Cell::number(r.rps, grouped),
            Col::H2Rps => Cell::number(h.h2_rps, grouped),
            Col::RatioH2 => ratio(h.ratio_to_h2),
            Col::H1Rps => Cell::number(h.h1_rps, grouped),
            Col::RatioH1 => ratio(h.ratio_to_h1),
            Col::ZeroRtt => zero_rtt(h),
            Col::PerSend => per(h.datagrams_per_send),
            Col::PerRecv => per(h.datagrams_per_recv),
            Col::Gso => Cell::plain(h.gso.to_string()),
            Col::Gro => Cell::plain(h.gro.to_string()),
            Col::Lost => count(h.packets_lost),
            Col::TransportErrors => by_code(&h.transport_errors),
            Col::H3Errors => by_code(&h.h3_errors),
            Col::Resets => count(h.stream_resets),
        }
    }
}

/// The share of 0-RTT requests the server accepted for people (`99.5%`, the counts on hover),
/// `accepted/attempted` for machines; `-` without `--0rtt`.
fn zero_rtt(h: &H3Figures) -> Cell {
    let Some(z) = h.zero_rtt.filter(|z| z.attempted > 0) else {
        return Cell::number(None, grouped);
    };
    let share = z.accepted as f64 / z.attempted as f64 * 100.0;
    Cell {
        text: format!("{share:.1}%"),
        raw: format!("{}/{}", z.accepted, z.attempted),
        hint: Some(format!(
            "{} accepted of {} sent in 0-RTT",
            z.accepted, z.attempted
        )),
    }
}

/// `H3_MESSAGE_ERROR ×3` for people (`-` for none), `H3_MESSAGE_ERROR=3` for machines.
fn by_code(m: &BTreeMap<String, u64>) -> Cell {
    counts_cell(m.iter().map(|(c, n)| (c.clone(), *n)))
}

/// The HTTP/3 tables, one per load profile, each with its heading; none without HTTP/3 laps.
pub fn h3_tables(summary: &Summary) -> Vec<(String, Grid)> {
    rows_by_profile(rows_with(summary, |r| r.h3.clone()), |(r, _)| {
        r.profile.clone()
    })
    .into_iter()
    .map(|(profile, rows)| {
        let grid = build(&TABLE, &rows, |_| (None, false));
        let heading = format!("HTTP/3 beside HTTP/2 and HTTP/1.1 over TLS, {profile}");
        (heading, grid)
    })
    .collect()
}

/// The HTTP/3 rows for CSV; `None` without an HTTP/3 lap.
pub fn h3_csv(summary: &Summary) -> Option<Grid> {
    let rows = rows_with(summary, |r| r.h3.clone());
    (!rows.is_empty()).then(|| build(&CSV, &rows, |_| (None, false)))
}

/// What the HTTP/3 table's columns mean; `None` without an HTTP/3 lap.
pub fn h3_legend(summary: &Summary) -> Option<String> {
    summary.protocols.iter().any(|r| r.h3.is_some()).then(|| {
        "HTTP/3: QUIC on the server's UDP H3_PORT (its handshakes are in the TLS tables, timed \
         from the first Initial sent). h3/h2 and h3/h1: its median req/s over HTTP/2's and \
         HTTP/1.1's over TLS (keep-alive; same server, paths and profile). 0-RTT ok: the share \
         of requests sent in 0-RTT (--0rtt) that the server accepted. dg/send, dg/recv: UDP \
         datagrams per send and receive call (above 1: GSO and GRO at work). lost: packets QUIC \
         declared lost. Summed over the laps; the CSV adds the server's \
         initial_max_streams_bidi, GSO and GRO, the closes by QUIC transport error, and the \
         stream resets and closes by HTTP/3 error."
            .to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_analysis::protocol::StreamLimit;
    use serverbench_model::result::ZeroRttResult;
    use serverbench_model::Protocol;

    fn summary(h: H3Figures) -> Summary {
        let mut summary = crate::full_summary(&[], None, None);
        summary.protocols = vec![ProtocolRow {
            scenario: "hello-h3".into(),
            profile: "64conn/5s".into(),
            server: "rust/quinn-h3".into(),
            transport: "h3 m16".into(),
            protocol: Protocol::H3,
            new_conn: false,
            rps: Some(90_000.0),
            tls: None,
            h2: None,
            grpc: None,
            h3: Some(h),
        }];
        summary
    }

    fn figures() -> H3Figures {
        H3Figures {
            streams: 16,
            max_streams_bidi: StreamLimit::Max(100),
            h2_rps: Some(120_000.0),
            ratio_to_h2: Some(0.75),
            h1_rps: Some(60_000.0),
            ratio_to_h1: Some(1.5),
            zero_rtt: Some(ZeroRttResult {
                attempted: 2000,
                accepted: 1990,
            }),
            datagrams_per_send: Some(3.25),
            datagrams_per_recv: Some(1.0),
            gso: true,
            packets_lost: 4,
            h3_errors: [("H3_REQUEST_REJECTED".to_string(), 2)].into(),
            ..H3Figures::default()
        }
    }

    #[test]
    fn the_h3_table_stands_beside_h2_and_h1_with_0rtt_datagrams_per_call_and_losses() {
        let s = summary(figures());
        let (heading, grid) = h3_tables(&s).pop().unwrap();
        assert_eq!(
            heading,
            "HTTP/3 beside HTTP/2 and HTTP/1.1 over TLS, 64conn/5s"
        );
        let text: Vec<&str> = grid.rows[0].cells.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            text,
            [
                "rust/quinn-h3",
                "hello-h3",
                "h3 m16",
                "90,000",
                "0.75x",
                "1.50x",
                "99.5%",
                "3.2",
                "1.0",
                "4"
            ]
        );
        let csv = h3_csv(&s).unwrap();
        let at = |key: &str| csv.columns.iter().position(|c| c.key == key).unwrap();
        let row = &csv.rows[0].cells;
        assert_eq!(row[at("h3_errors")].raw, "H3_REQUEST_REJECTED=2");
        assert_eq!(row[at("zero_rtt_accepted_of_attempted")].raw, "1990/2000");
        assert_eq!(row[at("server_max_streams_bidi")].raw, "100");
        assert_eq!(row[at("quic_transport_errors")].text, "-");
        assert_eq!(
            (row[at("gso")].raw.as_str(), row[at("gro")].raw.as_str()),
            ("true", "false")
        );
        assert!(h3_legend(&s).unwrap().contains("initial_max_streams_bidi"));
    }

    #[test]
    fn the_h3_table_fits_120_columns_at_the_catalogs_longest_server_id() {
        let mut s = summary(figures());
        s.protocols[0].server = "java/jdk-httpserver-vthreads".into();
        s.protocols[0].scenario = "static-h3-payload".into();
        let (_, grid) = h3_tables(&s).pop().unwrap();
        let text = crate::term::grid(&grid);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= 120, "{widest} columns:\n{text}");
    }

    #[test]
    fn a_run_without_http3_laps_has_no_h3_table_csv_or_legend() {
        let none = crate::full_summary(&[], None, None);
        assert!(h3_tables(&none).is_empty() && h3_csv(&none).is_none());
        assert!(h3_legend(&none).is_none());
    }
}
