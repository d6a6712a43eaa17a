//! The per-host tables of laps run over several machines, defined once: under each summary
//! table, one row per lap x client host (its requests, req/s, p50/p99 from its own histogram,
//! errors, CPU, saturation and start offset), then one row per lap (the server host, the start
//! skew and the controller's CPU). The CSV file has one row per lap x client host with the
//! lap's figures repeated.

use super::{build, Align, Cell, ColumnDef, Grid, View};
use crate::text::{grouped, num};
use serverbench_analysis::hosts::{HostSummary, HostsLapSummary};
use serverbench_analysis::summary::{Summary, Table};
use serverbench_results::record::LapStatus;

/// One row: a lap, and one of its client hosts (none in the per-lap table).
struct HostRow<'a> {
    lap: &'a HostsLapSummary,
    host: Option<&'a HostSummary>,
}

/// Every column of the per-host tables and their CSV rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HostCol {
    Scenario,
    Profile,
    Server,
    Lap,
    Status,
    ServerHost,
    Host,
    Connections,
    Requests,
    Rps,
    P50,
    P99,
    Errors,
    ClientCpu,
    Saturated,
    StartOffset,
    StartSkew,
    ControllerCpu,
}

/// The CSV columns, in order: only ever append.
const CSV: [HostCol; 18] = {
    use HostCol::*;
    [
        Scenario,
        Profile,
        Server,
        Lap,
        Status,
        ServerHost,
        Host,
        Connections,
        Requests,
        Rps,
        P50,
        P99,
        Errors,
        ClientCpu,
        Saturated,
        StartOffset,
        StartSkew,
        ControllerCpu,
    ]
};

impl ColumnDef<HostRow<'_>> for HostCol {
    fn key(&self) -> &'static str {
        use HostCol::*;
        match self {
            Scenario => "scenario",
            Profile => "profile",
            Server => "server",
            Lap => "lap",
            Status => "status",
            ServerHost => "server_host",
            Host => "host",
            Connections => "connections",
            Requests => "requests",
            Rps => "rps",
            P50 => "latency_p50_us",
            P99 => "latency_p99_us",
            Errors => "errors",
            ClientCpu => "client_cpu_s",
            Saturated => "client_saturated",
            StartOffset => "start_offset_ms",
            StartSkew => "start_skew_ms",
            ControllerCpu => "controller_cpu_s",
        }
    }

    fn label(&self) -> &'static str {
        use HostCol::*;
        match self {
            ServerHost => "server host",
            Host => "client host",
            Connections => "conns",
            Rps => "req/s",
            P50 => "p50 µs",
            P99 => "p99 µs",
            ClientCpu => "CPU s",
            Saturated => "saturated",
            StartOffset => "start ms",
            StartSkew => "start skew ms",
            ControllerCpu => "controller CPU s",
            other => other.key(),
        }
    }

    fn align(&self) -> Align {
        use HostCol::*;
        match self {
            Scenario | Profile | Server | Status | ServerHost | Host | Saturated => Align::Left,
            _ => Align::Right,
        }
    }

    fn cell(&self, r: &HostRow) -> Cell {
        let (l, h) = (r.lap, r.host);
        let host = |f: fn(&HostSummary) -> Option<f64>| h.and_then(f);
        let fig = |v: Option<f64>| Cell::number(v, |x| num(Some(x)));
        match self {
            HostCol::Scenario => Cell::plain(&l.scenario),
            HostCol::Profile => Cell::plain(&l.profile),
            HostCol::Server => Cell::plain(&l.server),
            HostCol::Lap => Cell::plain(l.lap.to_string()),
            HostCol::Status => Cell::plain(match l.status {
                LapStatus::Ok => "ok",
                LapStatus::Failed => "failed",
            }),
            HostCol::ServerHost => Cell::plain(&l.server_host),
            HostCol::Host => Cell::plain(h.map_or("", |h| h.host.as_str())),
            HostCol::Connections => fig(host(|h| h.connections.map(f64::from))),
            HostCol::Requests => Cell::number(host(|h| h.requests.map(|n| n as f64)), grouped),
            HostCol::Rps => Cell::number(host(|h| h.rps), grouped),
            HostCol::P50 => fig(host(|h| h.latency_p50_us)),
            HostCol::P99 => fig(host(|h| h.latency_p99_us)),
            HostCol::Errors => Cell::number(host(|h| Some(h.errors as f64)), grouped),
            HostCol::ClientCpu => fig(host(|h| h.client_cpu_s)),
            HostCol::Saturated => saturated(h.is_some_and(|h| h.client_saturated)),
            HostCol::StartOffset => fig(host(|h| h.start_offset_ms)),
            HostCol::StartSkew => fig(l.start_skew_ms),
            HostCol::ControllerCpu => Cell::number(Some(l.controller_cpu_s), |v| format!("{v:.3}")),
        }
    }
}

/// `SATURATED` for people, `true`/`false` for machines.
fn saturated(yes: bool) -> Cell {
    Cell {
        text: if yes { "SATURATED" } else { "" }.to_owned(),
        raw: yes.to_string(),
        hint: yes.then(|| "its load generator used at least 90% of its CPUs".to_owned()),
    }
}

/// The laps of `table` over several machines, in the order of the table's rows, then by lap.
fn laps_of<'a>(summary: &'a Summary, table: &Table) -> Vec<&'a HostsLapSummary> {
    let mut laps: Vec<&HostsLapSummary> = summary
        .hosts
        .iter()
        .filter(|l| l.scenario == table.scenario && l.profile == table.profile)
        .collect();
    let order = |l: &HostsLapSummary| table.servers.iter().position(|s| s.server == l.server);
    laps.sort_by_key(|l| (order(l), l.lap));
    laps
}

/// The per-host table under `table`: one row per lap x client host; `None` when none of its
/// laps ran over several machines.
pub fn hosts_grid(summary: &Summary, table: &Table, view: View) -> Option<Grid> {
    use HostCol::*;
    let laps = laps_of(summary, table);
    if laps.is_empty() {
        return None;
    }
    let rows: Vec<HostRow> = laps
        .iter()
        .flat_map(|lap| {
            lap.clients
                .iter()
                .map(move |h| HostRow { lap, host: Some(h) })
        })
        .collect();
    let mut cols = vec![Server, Lap, Host];
    if view != View::Ranking {
        cols.push(Connections);
    }
    cols.extend([
        Requests,
        Rps,
        P50,
        P99,
        Errors,
        ClientCpu,
        Saturated,
        StartOffset,
    ]);
    Some(build(&cols, &rows, |_| (None, false)))
}

/// The per-lap table under the per-host one: the server host, the start skew and the
/// controller's CPU of each lap; `None` when none of `table`'s laps ran over several machines.
pub fn host_laps_grid(summary: &Summary, table: &Table) -> Option<Grid> {
    use HostCol::*;
    let laps = laps_of(summary, table);
    if laps.is_empty() {
        return None;
    }
    let rows: Vec<HostRow> = laps.iter().map(|lap| HostRow { lap, host: None }).collect();
    let cols = [Server, Lap, Status, ServerHost, StartSkew, ControllerCpu];
    Some(build(&cols, &rows, |_| (None, false)))
}

/// The CSV rows of every lap over several machines: one per lap x client host; `None` when
/// there is none.
pub fn hosts_csv(summary: &Summary) -> Option<Grid> {
    let rows: Vec<HostRow> = summary
        .tables
        .iter()
        .flat_map(|t| laps_of(summary, t))
        .flat_map(|lap| {
            lap.clients
                .iter()
                .map(move |h| HostRow { lap, host: Some(h) })
        })
        .collect();
    (!rows.is_empty()).then(|| build(&CSV, &rows, |_| (None, false)))
}

/// What the per-host tables show, one sentence each; empty without laps over several machines.
pub fn hosts_legend(summary: &Summary) -> Vec<String> {
    if summary.hosts.is_empty() {
        return Vec::new();
    }
    vec![
        "Per client host: its share of each lap, p50/p99 from its own histogram (the table \
         above reads them from the merge of every host's); CPU s: its load generator's CPU \
         time; start ms: when it started measuring after the first host. Per lap: start skew \
         ms is the spread of the hosts' starts (goal under 1 ms); controller CPU s is this \
         serverbench and its ssh clients."
            .to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_csv_column_names_are_unique() {
        let keys: std::collections::BTreeSet<&str> = CSV.iter().map(|c| c.key()).collect();
        assert_eq!(keys.len(), CSV.len());
    }
}
