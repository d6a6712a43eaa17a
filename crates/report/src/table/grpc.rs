//! The table of gRPC laps, from [`serverbench_analysis::grpc_calls`], one per load profile:
//! the protocol and streams (`grpcs m16`), the server's stream limit, the calls answered per
//! second (failed ones included; the summary's calls/s counts those that ended OK), and every
//! call of the laps by how it ended: OK, or failed by its `grpc-status` code (`13 INTERNAL ×12`) or
//! by another cause (`no trailers ×3`). The CSV form ([`grpc_csv`]) adds the profile, the
//! method and the streams, with the statuses and causes as `name=count` lists.

use super::protocol::{counts_cell, max_streams, rows_by_profile, rows_with};
use super::{build, Align, Cell, ColumnDef, Grid};
use crate::text::grouped;
use serverbench_analysis::grpc_calls::GrpcCalls;
use serverbench_analysis::protocol::ProtocolRow;
use serverbench_analysis::summary::Summary;
use serverbench_wire::grpc::Code;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Server,
    Scenario,
    Profile,
    Transport,
    Method,
    Streams,
    MaxStreams,
    Calls,
    Ok,
    Failed,
    Why,
}

/// The terminal's: the failed calls' count is the sum of the `failed by` list (the CSV keeps it).
const TABLE: [Col; 7] = {
    use Col::*;
    [Server, Scenario, Transport, MaxStreams, Calls, Ok, Why]
};

const CSV: [Col; 11] = {
    use Col::*;
    [
        Server, Scenario, Profile, Transport, Method, Streams, MaxStreams, Calls, Ok, Failed, Why,
    ]
};

impl ColumnDef<(ProtocolRow, GrpcCalls)> for Col {
    fn key(&self) -> &'static str {
        match self {
            Col::Server => "server",
            Col::Scenario => "scenario",
            Col::Profile => "profile",
            Col::Transport => "transport",
            Col::Method => "method",
            Col::Streams => "streams",
            Col::MaxStreams => "server_max_streams",
            Col::Calls => "answered_per_s_median",
            Col::Ok => "calls_ok",
            Col::Failed => "calls_failed",
            Col::Why => "failed_by",
        }
    }

    fn label(&self) -> &'static str {
        match self {
            Col::Transport => "protocol",
            Col::MaxStreams => "max streams",
            Col::Calls => "answered/s",
            Col::Ok => "OK calls",
            Col::Failed => "failed",
            Col::Why => "failed by",
            other => other.key(),
        }
    }

    fn align(&self) -> Align {
        match self {
            Col::Server
            | Col::Scenario
            | Col::Profile
            | Col::Transport
            | Col::Method
            | Col::Why => Align::Left,
            _ => Align::Right,
        }
    }

    fn cell(&self, (r, g): &(ProtocolRow, GrpcCalls)) -> Cell {
        let count = |n: u64| Cell::number(Some(n as f64), grouped);
        match self {
            Col::Server => Cell::plain(&r.server),
            Col::Scenario => Cell::plain(&r.scenario),
            Col::Profile => Cell::plain(&r.profile),
            Col::Transport => Cell::plain(&r.transport),
            Col::Method => Cell::plain(&g.method),
            Col::Streams => count(u64::from(g.streams)),
            Col::MaxStreams => max_streams(Some(g.max_concurrent_streams)),
            Col::Calls => Cell::number(r.rps, grouped),
            Col::Ok => count(g.ok),
            Col::Failed => count(g.failed()),
            Col::Why => failed_by(g),
        }
    }
}

/// `13 INTERNAL`: a status code's name with its number (an unknown one as sent).
pub fn status_name(name: &str) -> String {
    match Code::ALL.iter().find(|c| c.name() == name) {
        Some(code) => code.to_string(),
        None => name.to_owned(),
    }
}

/// A status code's number, by its name or as sent (`u64::MAX` for neither), to list them in
/// order.
fn status_number(name: &str) -> u64 {
    match Code::ALL.iter().find(|c| c.name() == name) {
        Some(code) => u64::from(code.number()),
        None => name.parse().unwrap_or(u64::MAX),
    }
}

/// What the failed calls ended with: `13 INTERNAL ×12, no trailers ×3` for people (`-` when
/// none failed), `13 INTERNAL=12;no trailers=3` for machines.
fn failed_by(g: &GrpcCalls) -> Cell {
    let mut statuses: Vec<(u64, String, u64)> = (g.statuses.iter())
        .map(|(c, n)| (status_number(c), status_name(c), *n))
        .collect();
    statuses.sort();
    let statuses = statuses.into_iter().map(|(_, c, n)| (c, n));
    let causes = g.failures.iter().map(|(c, n)| (c.clone(), *n));
    counts_cell(statuses.chain(causes))
}

/// The gRPC tables, one per load profile, each with its heading; none without gRPC laps.
pub fn grpc_tables(summary: &Summary) -> Vec<(String, Grid)> {
    let rows = rows_with(summary, |r| r.grpc.clone());
    rows_by_profile(rows, |(r, _)| r.profile.clone())
        .into_iter()
        .map(|(profile, rows)| {
            let grid = build(&TABLE, &rows, |_| (None, false));
            (format!("gRPC calls by how they ended, {profile}"), grid)
        })
        .collect()
}

/// The gRPC rows for CSV; `None` without a gRPC lap.
pub fn grpc_csv(summary: &Summary) -> Option<Grid> {
    let rows = rows_with(summary, |r| r.grpc.clone());
    (!rows.is_empty()).then(|| build(&CSV, &rows, |_| (None, false)))
}

/// What the gRPC table's columns mean; `None` without a gRPC lap.
pub fn grpc_legend(summary: &Summary) -> Option<String> {
    summary.protocols.iter().any(|r| r.grpc.is_some()).then(|| {
        "gRPC: every call judged (HTTP status 200, content-type application/grpc, the message \
         framing, a grpc-status trailer); the summary's calls/s counts the calls that ended OK, \
         answered/s every call answered, failed ones included (medians of the laps). OK calls \
         and failed by: summed over the laps, the failed ones by the grpc-status code of a call \
         that ended with one, else by the cause (no trailers, http status, content-type, framing, \
         a reset stream, a timeout, a failed connection). protocol: grpc is h2c on PORT, grpcs h2 over TLS on TLS_PORT, mN N calls in \
         flight per connection."
            .to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::Protocol;

    fn summary(g: GrpcCalls) -> Summary {
        let mut summary = crate::full_summary(&[], None, None);
        summary.protocols = vec![ProtocolRow {
            scenario: "grpc-sum".into(),
            profile: "16conn/2s".into(),
            server: "go/grpc-go".into(),
            transport: "grpc m16".into(),
            protocol: Protocol::H1,
            new_conn: false,
            rps: Some(21_000.0),
            tls: None,
            h2: None,
            grpc: Some(g),
            h3: None,
        }];
        summary
    }

    #[test]
    fn failed_calls_are_named_by_their_status_code_and_number_then_by_cause() {
        let s = summary(GrpcCalls {
            method: "/serverbench.Bench/Sum".into(),
            streams: 16,
            ok: 1000,
            statuses: [("INTERNAL".to_string(), 12), ("99".to_string(), 1)].into(),
            failures: [("no trailers".to_string(), 3)].into(),
            ..GrpcCalls::default()
        });
        let (heading, grid) = grpc_tables(&s).pop().unwrap();
        assert_eq!(heading, "gRPC calls by how they ended, 16conn/2s");
        let why = grid.rows[0].cells.last().unwrap();
        assert_eq!(why.text, "13 INTERNAL ×12, 99 ×1, no trailers ×3");
        assert_eq!(why.raw, "13 INTERNAL=12;99=1;no trailers=3");
        let csv = grpc_csv(&s).unwrap();
        let failed = csv
            .columns
            .iter()
            .position(|c| c.key == "calls_failed")
            .unwrap();
        assert_eq!(csv.rows[0].cells[failed].raw, "16");
        assert!(grpc_legend(&s)
            .unwrap()
            .contains("failed ones by the grpc-status code"));
    }

    #[test]
    fn a_run_whose_calls_all_ended_ok_shows_a_dash_and_no_grpc_table_without_grpc_laps() {
        let s = summary(GrpcCalls {
            ok: 5,
            ..GrpcCalls::default()
        });
        let (_, grid) = grpc_tables(&s).pop().unwrap();
        assert_eq!(grid.rows[0].cells.last().unwrap().text, "-");
        let none = crate::full_summary(&[], None, None);
        assert!(grpc_tables(&none).is_empty() && grpc_csv(&none).is_none());
        assert!(grpc_legend(&none).is_none());
    }
}
