//! The columns of a summary table (one scenario x profile) and of the CSV file, defined once:
//! the machine name, the heading, the alignment and the cell of each.

use super::cells::{
    failed, mbps_interval, method_name, rank, rps, rps_interval, speed_with_interval,
};
use super::{build, Align, Cell, ColumnDef, Grid};
use crate::env::server_version;
use crate::text::{self, grouped, num};
use serverbench_analysis::disturbed;
use serverbench_analysis::stats::IntervalMethod;
use serverbench_analysis::summary::{ServerSummary, Summary, Table};
use serverbench_results::env::Env;

/// Which columns a summary table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The ranking that fits a 120-column terminal: the headline figure with its interval,
    /// latency, memory, CPU, errors, laps and the speed factor.
    Ranking,
    /// Everything, versions included (`--wide`).
    Wide,
    /// Everything but versions, which the page shows in its environment section (HTML).
    Page,
}

/// What a cell is computed from.
pub(crate) struct Ctx<'a> {
    summary: &'a Summary,
    table: &'a Table,
    s: &'a ServerSummary,
    env: Option<&'a Env>,
}

/// Every column a summary table or the CSV file can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Suite,
    Scenario,
    Profile,
    Mode,
    Connections,
    Server,
    Version,
    Tool,
    Rank,
    Laps,
    FailedLaps,
    RpsMedian,
    /// `rps_median` where the unit is a message (WebSocket, TCP ping-pong): headed `msg/s`.
    MsgMedian,
    /// `rps_median` of gRPC laps: headed `calls/s`.
    CallMedian,
    RpsCiLow,
    RpsCiHigh,
    RpsCiMethod,
    RpsMin,
    RpsMax,
    RpsMean,
    RpsStdev,
    RpsCv,
    RpsBest,
    Noisy,
    P50,
    P99,
    Throughput,
    MbpsDown,
    MbpsUp,
    Requests,
    Errors,
    ErrorRate,
    Non2xx,
    Rss,
    Cores,
    CpuPerRequest,
    /// `cpu_us_per_request` of gRPC laps: headed `µs/call`.
    CpuPerCall,
    CtxPerRequest,
    ClientSaturated,
    Speed,
    SpeedLow,
    SpeedHigh,
    FirstFailure,
    // Only in the tables people read:
    /// `±3,000`: the larger half of the req/s interval.
    RpsInterval,
    /// `2/3`: successful laps of all laps.
    LapsDone,
    /// Errors plus non-2xx responses.
    Failures,
    /// A stream's headline: Mbps down, `failed` when no lap succeeded.
    MbpsHeadline,
    /// The req/s interval carried over to Mbps down.
    MbpsInterval,
    MbpsPerConnection,
    /// `16.63x (16.21–16.78)`.
    SpeedWithInterval,
    // Appended to the CSV file:
    P90,
    P999,
    LatencyMax,
    LatencySource,
    /// `http`, `https new-conn resume=off`, `h2 m16`: as the table titles say.
    Transport,
    /// Why a row is left out of the ranks: its database laps broke the statement rules.
    OffContract,
}

/// The CSV columns, in order. Scripts rely on them: only ever append.
const CSV: [Col; 46] = {
    use Col::*;
    [
        Suite,
        Scenario,
        Profile,
        Mode,
        Connections,
        Server,
        Version,
        Tool,
        Rank,
        Laps,
        FailedLaps,
        RpsMedian,
        RpsCiLow,
        RpsCiHigh,
        RpsCiMethod,
        RpsMin,
        RpsMax,
        RpsMean,
        RpsStdev,
        RpsCv,
        RpsBest,
        Noisy,
        P50,
        P99,
        Throughput,
        MbpsDown,
        MbpsUp,
        Requests,
        Errors,
        ErrorRate,
        Non2xx,
        Rss,
        Cores,
        CpuPerRequest,
        CtxPerRequest,
        ClientSaturated,
        Speed,
        SpeedLow,
        SpeedHigh,
        FirstFailure,
        P90,
        P999,
        LatencyMax,
        LatencySource,
        Transport,
        OffContract,
    ]
};

/// The columns of `table` (by its mode) in `view`.
fn columns(table: &Table, view: View) -> Vec<Col> {
    use Col::*;
    let wide = view != View::Ranking;
    let mut cols = vec![Rank, Server];
    if view == View::Wide {
        cols.push(Version);
    }
    if table.mode.is_stream() {
        cols.extend([MbpsHeadline, MbpsInterval, MbpsUp, MbpsPerConnection]);
        if wide {
            cols.extend([RpsCv, Throughput]);
        }
        cols.extend([Rss, Cores]);
    } else {
        let median = match table.mode {
            serverbench_model::Mode::Grpc => CallMedian,
            m if m.counts_messages() => MsgMedian,
            _ => RpsMedian,
        };
        cols.extend([median, RpsInterval]);
        if wide {
            cols.extend([RpsBest, RpsCv]);
        }
        cols.extend([P50, P99]);
        if wide {
            cols.push(Throughput);
        }
        if wide && table.mode.is_tcp() {
            cols.extend([MbpsDown, MbpsUp]);
        }
        let cpu = match table.mode {
            serverbench_model::Mode::Grpc => CpuPerCall,
            _ => CpuPerRequest,
        };
        cols.extend([Rss, Cores, cpu]);
        if wide {
            cols.push(CtxPerRequest);
        }
    }
    cols.extend([
        Failures,
        LapsDone,
        if wide { SpeedWithInterval } else { Speed },
    ]);
    cols
}

impl Col {
    /// The cells only the CSV file has; `None` for the others.
    fn machine_cell(self, c: &Ctx) -> Option<Cell> {
        let (s, ci) = (c.s, c.s.rps_ci);
        let stat = |f: fn(&serverbench_analysis::stats::Stats) -> f64| {
            Cell::number(s.rps.map(|r| f(&r)), grouped)
        };
        let speed_bound = |high: bool| {
            let i = s.speed_factor.and_then(|f| f.interval);
            Cell::number(i.map(|i| if high { i.high } else { i.low }), |v| {
                format!("{v:.2}")
            })
        };
        Some(match self {
            Col::Suite => Cell::plain(c.summary.suite.clone().unwrap_or_default()),
            Col::Scenario => Cell::plain(&c.table.scenario),
            Col::Profile => Cell::plain(&c.table.profile),
            Col::Mode => Cell::plain(c.table.mode.to_string()),
            Col::Transport => Cell::plain(super::transport(c.table)),
            Col::OffContract => Cell::plain(s.off_contract.clone().unwrap_or_default()),
            Col::Connections => Cell::plain(c.table.connections.to_string()),
            Col::Tool => Cell::plain(s.tool.to_string()),
            Col::Laps => Cell::plain(s.laps.to_string()),
            Col::FailedLaps => Cell::plain(s.failed_laps.to_string()),
            Col::RpsCiLow => Cell::number(ci.map(|i| i.low), grouped),
            Col::RpsCiHigh => Cell::number(ci.map(|i| i.high), grouped),
            Col::RpsCiMethod => Cell::plain(ci.map_or_else(String::new, |i| method_name(i.method))),
            Col::RpsMin => stat(|r| r.min),
            Col::RpsMax => stat(|r| r.max),
            Col::RpsMean => stat(|r| r.mean),
            Col::RpsStdev => stat(|r| r.stdev),
            Col::Noisy => Cell::plain(s.noisy.to_string()),
            Col::Requests => Cell::plain(s.requests.to_string()),
            Col::Errors => Cell::plain(s.errors.to_string()),
            Col::ErrorRate => Cell::number(s.error_rate, |v| format!("{:.2}%", v * 100.0)),
            Col::Non2xx => Cell::plain(s.non_2xx.to_string()),
            Col::ClientSaturated => Cell::plain(s.client_saturated.to_string()),
            Col::SpeedLow => speed_bound(false),
            Col::SpeedHigh => speed_bound(true),
            Col::FirstFailure => Cell::plain(
                s.first_failure
                    .as_ref()
                    .map(|f| f.to_string())
                    .unwrap_or_default(),
            ),
            Col::P90 => Cell::number(s.latency_p90_us, |v| num(Some(v))),
            Col::P999 => Cell::number(s.latency_p999_us, |v| num(Some(v))),
            Col::LatencyMax => Cell::number(s.latency_max_us, |v| num(Some(v))),
            Col::LatencySource => Cell {
                text: s.latency_source.map_or("", |l| l.label()).to_owned(),
                raw: s.latency_source.map_or("", |l| l.name()).to_owned(),
                hint: None,
            },
            _ => return None,
        })
    }

    /// The cells of the tables people read (the CSV file takes their raw values).
    fn human_cell(self, c: &Ctx) -> Cell {
        let s = c.s;
        match self {
            Col::Server => server_cell(c),
            Col::Version => Cell::plain(server_version(c.env, &s.server)),
            Col::Rank => rank(c.table, s),
            Col::RpsMedian | Col::MsgMedian | Col::CallMedian => rps(s),
            Col::RpsInterval => rps_interval(s),
            Col::RpsCv => Cell::number(s.rps.map(|r| r.cv), |v| format!("{:.1}", v * 100.0)),
            Col::RpsBest => Cell::number(s.rps_best, grouped),
            Col::P50 => Cell::number(s.latency_p50_us, |v| num(Some(v))),
            Col::P99 => Cell::number(s.latency_p99_us, |v| num(Some(v))),
            Col::Throughput => Cell::number(s.throughput_mb_s, |v| num(Some(v))),
            Col::MbpsDown => Cell::number(s.mbps_down, |v| num(Some(v))),
            Col::MbpsUp => Cell::number(s.mbps_up, |v| num(Some(v))),
            Col::MbpsHeadline => match s.mbps_down {
                None if s.rps.is_none() => failed(),
                d => Cell::number(d, |v| num(Some(v))),
            },
            Col::MbpsInterval => mbps_interval(s),
            Col::MbpsPerConnection => {
                Cell::number(text::mbps_per_connection(c.table, s), |v| num(Some(v)))
            }
            Col::Rss => Cell::number(s.rss_peak_mb, |v| num(Some(v))),
            Col::Cores => Cell::number(s.cores_used, |v| num(Some(v))),
            Col::CpuPerRequest | Col::CpuPerCall => {
                Cell::number(s.cpu_us_per_request, |v| num(Some(v)))
            }
            Col::CtxPerRequest => Cell::number(s.ctx_switches_per_request, |v| num(Some(v))),
            Col::Failures => {
                let n = s.errors + s.non_2xx;
                Cell {
                    text: grouped(n as f64),
                    raw: n.to_string(),
                    hint: None,
                }
            }
            Col::LapsDone => Cell {
                text: format!("{}/{}", s.laps - s.failed_laps, s.laps),
                raw: (s.laps - s.failed_laps).to_string(),
                hint: None,
            },
            Col::Speed => Cell::number(s.speed_factor.map(|f| f.ratio), |v| format!("{v:.2}x")),
            Col::SpeedWithInterval => speed_with_interval(s),
            other => other.machine_cell(c).unwrap_or_default(),
        }
    }
}

impl ColumnDef<Ctx<'_>> for Col {
    fn key(&self) -> &'static str {
        key(*self)
    }

    fn label(&self) -> &'static str {
        label(*self)
    }

    fn align(&self) -> Align {
        match self {
            Col::Server | Col::Version => Align::Left,
            _ => Align::Right,
        }
    }

    fn cell(&self, c: &Ctx) -> Cell {
        self.human_cell(c)
    }

    fn interval(&self, c: &Ctx) -> Option<IntervalMethod> {
        match self {
            Col::RpsInterval | Col::MbpsInterval => c.s.rps_ci.map(|i| i.method),
            _ => None,
        }
    }

    fn headline(&self) -> bool {
        matches!(
            self,
            Col::RpsMedian | Col::MsgMedian | Col::CallMedian | Col::MbpsHeadline
        )
    }
}

fn key(col: Col) -> &'static str {
    use Col::*;
    match col {
        Suite => "suite",
        Scenario => "scenario",
        Profile => "profile",
        Mode => "mode",
        Connections => "connections",
        Server => "server",
        Version => "version",
        Tool => "tool",
        Rank => "rank",
        Laps => "laps",
        FailedLaps => "failed_laps",
        RpsMedian | MsgMedian | CallMedian => "rps_median",
        RpsCiLow => "rps_ci_low",
        RpsCiHigh => "rps_ci_high",
        RpsCiMethod => "rps_ci_method",
        RpsMin => "rps_min",
        RpsMax => "rps_max",
        RpsMean => "rps_mean",
        RpsStdev => "rps_stdev",
        RpsCv => "rps_cv",
        RpsBest => "rps_best",
        Noisy => "noisy",
        P50 => "latency_p50_us",
        P99 => "latency_p99_us",
        Throughput => "throughput_mb_s",
        MbpsDown | MbpsHeadline => "mbps_down",
        MbpsUp => "mbps_up",
        Requests => "requests",
        Errors => "errors",
        ErrorRate => "error_rate",
        Non2xx => "non_2xx",
        Rss => "rss_peak_mb",
        Cores => "cores_used",
        CpuPerRequest | CpuPerCall => "cpu_us_per_request",
        CtxPerRequest => "ctx_switches_per_request",
        ClientSaturated => "client_saturated",
        Speed | SpeedWithInterval => "speed_factor",
        SpeedLow => "speed_factor_low",
        SpeedHigh => "speed_factor_high",
        FirstFailure => "first_failure",
        RpsInterval => "rps_ci",
        LapsDone => "laps_ok",
        Failures => "failures",
        MbpsInterval => "mbps_down_ci",
        MbpsPerConnection => "mbps_per_connection",
        P90 => "latency_p90_us",
        P999 => "latency_p999_us",
        LatencyMax => "latency_max_us",
        LatencySource => "latency_source",
        Transport => "transport",
        OffContract => "off_contract",
    }
}

/// The heading people read; the machine name for columns only the CSV file has.
fn label(col: Col) -> &'static str {
    use Col::*;
    match col {
        Server => "server",
        Version => "version",
        Rank => "#",
        RpsMedian => "req/s",
        MsgMedian => "msg/s",
        CallMedian => "calls/s",
        RpsInterval | MbpsInterval => "95% CI",
        RpsCv => "cv%",
        RpsBest => "best",
        P50 => "p50 µs",
        P99 => "p99 µs",
        Throughput => "MB/s",
        MbpsDown | MbpsHeadline => "Mbps down",
        MbpsUp => "Mbps up",
        MbpsPerConnection => "Mbps/conn",
        Rss => "RSS MB",
        Cores => "cores",
        CpuPerRequest => "µs/req",
        CpuPerCall => "µs/call",
        CtxPerRequest => "ctx sw/req",
        Failures => "errors",
        LapsDone => "laps",
        Speed | SpeedWithInterval => "speed",
        other => key(other),
    }
}

/// Medal (ranks 1-3 held alone) and noisy flag of a row.
fn decorate(c: &Ctx) -> (Option<u32>, bool) {
    let medal =
        c.s.rank
            .filter(|&r| r <= 3 && !text::shared_rank(c.table, r));
    (medal, c.s.noisy)
}

/// The grid of one summary table in `view`.
pub fn summary_grid(summary: &Summary, table: &Table, env: Option<&Env>, view: View) -> Grid {
    let rows: Vec<Ctx> = table
        .servers
        .iter()
        .map(|s| Ctx {
            summary,
            table,
            s,
            env,
        })
        .collect();
    build(&columns(table, view), &rows, decorate)
}

/// The server's name, marked `~` when it declares deviations (as verify marks them; the
/// warnings say which), `?` when its req/s is noisy (its rank is uncertain), `!` when a lap was
/// disturbed and `✗` when its database laps broke the statement rules (it is not ranked).
fn server_cell(c: &Ctx) -> Cell {
    let s = c.s;
    let deviations = c.env.and_then(|e| e.deviations(&s.server));
    let mut marks = String::new();
    let mut hints = Vec::new();
    if let Some(d) = deviations {
        marks.push('~');
        let keys = d.keys().cloned().collect::<Vec<_>>().join(", ");
        hints.push(format!("declares deviations from the contract: {keys}"));
    }
    if s.noisy {
        marks.push_str(crate::term_warnings::NOISY_MARK);
        hints.push("noisy: req/s varies between laps, its rank is uncertain".to_owned());
    }
    // `!`: a lap of this row was disturbed (the line under the table says how).
    let disturbed = disturbed::of_row(c.summary, &c.table.scenario, &c.table.profile, &s.server);
    if let Some(line) = disturbed::summary_line(&disturbed) {
        marks.push('!');
        hints.push(line);
    }
    // `✗`: its database laps broke the statement rules; it is not ranked (a warning says how).
    if let Some(why) = &s.off_contract {
        marks.push('✗');
        hints.push(format!("left out of the ranks: {why}"));
    }
    if marks.is_empty() {
        return Cell::plain(&s.server);
    }
    Cell {
        text: format!("{} {marks}", s.server),
        raw: s.server.clone(),
        hint: Some(hints.join("; ")),
    }
}

/// The CSV grid: one row per server x scenario x profile, the cells' raw values are the fields.
pub fn csv_grid(summary: &Summary, env: Option<&Env>) -> Grid {
    let rows: Vec<Ctx> = summary
        .tables
        .iter()
        .flat_map(|table| {
            table.servers.iter().map(move |s| Ctx {
                summary,
                table,
                s,
                env,
            })
        })
        .collect();
    build(&CSV, &rows, |_| (None, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::Mode;

    fn table(mode: Mode) -> Table {
        Table {
            scenario: "hello".into(),
            profile: "c50".into(),
            mode,
            connections: 50,
            transport: String::new(),
            body: String::new(),
            baseline: None,
            servers: Vec::new(),
        }
    }

    #[test]
    fn the_ranking_leaves_versions_to_the_wide_view() {
        let t = table(Mode::Http);
        assert!(!columns(&t, View::Ranking).contains(&Col::Version));
        assert!(!columns(&t, View::Page).contains(&Col::Version));
        assert!(columns(&t, View::Wide).contains(&Col::Version));
    }

    #[test]
    fn a_stream_table_shows_mbps_instead_of_requests() {
        let cols = columns(&table(Mode::TcpStream), View::Ranking);
        assert!(cols.contains(&Col::MbpsHeadline) && !cols.contains(&Col::RpsMedian));
        assert!(!cols.contains(&Col::P50));
    }

    #[test]
    fn csv_column_names_are_unique() {
        let keys: std::collections::BTreeSet<&str> = CSV.iter().map(|c| key(*c)).collect();
        assert_eq!(keys.len(), CSV.len());
    }
}
