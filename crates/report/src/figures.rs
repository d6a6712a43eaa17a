//! The charts of a report, built from a [`Summary`] and the laps behind it. The HTML page embeds
//! them inline; `--format svg` writes each one to its own file.

use serverbench_analysis::stats;
use serverbench_analysis::summary::{ServerSummary, Summary, Table};
use serverbench_charts::{Bar, BarChart, LineChart, Series, XAxis};
use serverbench_model::result::TimelinePoint;
use serverbench_results::record::{LapRecord, LapStatus, LatencySummary};

/// One chart: a file-name-safe id, a title and the SVG document.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub id: String,
    pub title: String,
    pub svg: String,
}

/// Width of the charts drawn two abreast on the HTML page (req/s beside latency, RSS beside CPU).
pub const HALF_WIDTH: f64 = 550.0;
/// The latency curve gets a log y axis when its largest value is more than this many times its
/// smallest: a linear axis would flatten every curve but the slowest server's tail.
pub const LOG_Y_SPREAD: f64 = 20.0;

/// Percentiles of the latency curve, with the accessor of each in a [`LatencySummary`].
type PercentileOf = (f64, fn(&LatencySummary) -> Option<f64>);
const CURVE: [PercentileOf; 6] = [
    (50.0, |l| l.p50),
    (75.0, |l| l.p75),
    (90.0, |l| l.p90),
    (99.0, |l| l.p99),
    (99.9, |l| l.p999),
    (99.99, |l| l.p9999),
];

/// A lowercase id made of letters, digits and dashes.
pub fn slug(parts: &[&str]) -> String {
    let joined = parts.join("-").to_ascii_lowercase();
    let mut out = String::with_capacity(joined.len());
    for c in joined.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// The successful laps of `server` in `table`.
pub fn laps_of<'a>(records: &'a [LapRecord], table: &Table, server: &str) -> Vec<&'a LapRecord> {
    records
        .iter()
        .filter(|r| r.status == LapStatus::Ok && r.server == server)
        .filter(|r| r.scenario == table.scenario && r.profile == table.profile)
        .collect()
}

/// Req/s with intervals, latency percentile curves, peak RSS and CPU µs/request for one table.
pub fn for_table(table: &Table, records: &[LapRecord]) -> Vec<Figure> {
    let id = |kind: &str| slug(&[&table.scenario, &table.profile, kind]);
    let label = format!("{} · {}", table.scenario, table.profile);
    let bars = |f: fn(&ServerSummary) -> Option<f64>, color| {
        let bars = table
            .servers
            .iter()
            .filter_map(|s| {
                f(s).map(|v| Bar {
                    color,
                    ..Bar::new(&s.server, v)
                })
            })
            .collect::<Vec<_>>();
        bars
    };
    let stream = table.mode.is_stream();
    let rps = if stream {
        BarChart::new(
            format!("Mbps down: median, 95% interval ({label})"),
            "Mbps",
            table.servers.iter().filter_map(stream_bar).collect(),
        )
    } else {
        BarChart::new(
            format!("Requests/s: median, 95% interval ({label})"),
            "requests/s",
            table.servers.iter().filter_map(rps_bar).collect(),
        )
    };
    let rss = BarChart::new(
        format!("Peak RSS of the server ({label})"),
        "MB (process tree, max over laps)",
        bars(|s| s.rss_peak_mb, 1),
    );
    let cpu = if stream {
        BarChart::new(
            format!("Server CPU ({label})"),
            "CPU cores used (median of laps)",
            bars(|s| s.cores_used, 2),
        )
    } else {
        BarChart::new(
            format!("Server CPU per request ({label})"),
            "µs of CPU per request",
            bars(|s| s.cpu_us_per_request, 2),
        )
    };
    let series: Vec<Series> = table
        .servers
        .iter()
        .filter(|_| !stream)
        .map(|s| latency_series(&s.server, &laps_of(records, table, &s.server)))
        .filter(|s| !s.points.is_empty())
        .collect();
    let mut out = vec![bar_figure(id("rps"), rps)];
    if !series.is_empty() {
        let latency = latency_chart(format!("Latency by percentile ({label})"), series);
        out.push(figure(
            id("latency"),
            latency.title.clone(),
            latency.to_svg(),
        ));
    }
    out.push(bar_figure(id("rss"), rss));
    out.push(bar_figure(id("cpu"), cpu));
    out
}

/// The median req/s with its interval.
fn rps_bar(s: &ServerSummary) -> Option<Bar> {
    let bar = Bar::new(&s.server, s.rps?.median);
    Some(match s.rps_ci {
        Some(ci) => bar.with_interval(ci.low, ci.high),
        None => bar,
    })
}

/// The median Mbps down with the req/s interval scaled to it (both count the bytes echoed).
fn stream_bar(s: &ServerSummary) -> Option<Bar> {
    let down = s.mbps_down?;
    let bar = Bar::new(&s.server, down);
    Some(match (s.rps, s.rps_ci) {
        (Some(r), Some(ci)) if r.median > 0.0 => {
            let scale = down / r.median;
            bar.with_interval(ci.low * scale, ci.high * scale)
        }
        _ => bar,
    })
}

/// A percentile curve chart, half width, with a log y axis when the values spread widely.
fn latency_chart(title: String, series: Vec<Series>) -> LineChart {
    let values = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (lo, hi) = values.fold((f64::INFINITY, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let chart = LineChart::new(
        title,
        "percentile (median of laps)",
        "latency (µs)",
        XAxis::Percentile,
        series,
    )
    .with_width(HALF_WIDTH);
    if lo > 0.0 && hi / lo > LOG_Y_SPREAD {
        chart.with_log_y()
    } else {
        chart
    }
}

fn bar_figure(id: String, chart: BarChart) -> Figure {
    let chart = chart.with_width(HALF_WIDTH);
    figure(id, chart.title.clone(), chart.to_svg())
}

fn figure(id: String, title: String, svg: String) -> Figure {
    Figure { id, title, svg }
}

/// The median over laps of each percentile the laps report.
fn latency_series(server: &str, laps: &[&LapRecord]) -> Series {
    let points = CURVE
        .iter()
        .filter_map(|(p, get)| {
            let values: Vec<f64> = laps
                .iter()
                .filter_map(|r| r.load.as_ref().and_then(|m| get(&m.latency_us)))
                .collect();
            stats::median(&values).map(|v| (*p, v))
        })
        .collect();
    Series {
        name: server.to_owned(),
        points,
    }
}

/// For echo stream tables: Mbps received by the client against the number of connections, one
/// line per server and scenario.
pub fn echo_mbps(summary: &Summary) -> Option<Figure> {
    let tables: Vec<&Table> = summary
        .tables
        .iter()
        .filter(|t| t.mode.is_stream())
        .collect();
    if tables.is_empty() {
        return None;
    }
    let mut series: Vec<Series> = Vec::new();
    for t in &tables {
        for s in &t.servers {
            let Some(mbps) = s.mbps_down else { continue };
            let name = format!("{} ({})", s.server, t.scenario);
            match series.iter_mut().find(|x| x.name == name) {
                Some(x) => x.points.push((t.connections as f64, mbps)),
                None => series.push(Series {
                    name,
                    points: vec![(t.connections as f64, mbps)],
                }),
            }
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let chart = LineChart::new(
        "TCP echo: Mbps received by connection count",
        "connections",
        "Mbps (down)",
        XAxis::Log10,
        series,
    );
    Some(figure(
        "echo-mbps".into(),
        chart.title.clone(),
        chart.to_svg(),
    ))
}

/// For database laps with N queries per request: req/s against N, one line per server, one
/// chart per kind (`queries`, `updates`) x profile (id `<kind>-<profile>-per-request`).
pub fn queries(summary: &Summary) -> Vec<Figure> {
    let curves = serverbench_analysis::database::queries_curves(&summary.database);
    let mut charts: Vec<(String, String, Vec<Series>)> = Vec::new();
    for c in curves {
        let series = Series {
            name: c.server.clone(),
            points: c
                .points
                .iter()
                .map(|&(n, rps)| (f64::from(n), rps))
                .collect(),
        };
        match charts
            .iter_mut()
            .find(|(k, p, _)| (k, p) == (&c.kind, &c.profile))
        {
            Some((_, _, s)) => s.push(series),
            None => charts.push((c.kind, c.profile, vec![series])),
        }
    }
    charts
        .into_iter()
        .map(|(kind, profile, series)| {
            let chart = LineChart::new(
                format!("Requests/s by {kind} per request ({profile})"),
                "queries per request (N)",
                "requests/s (median of laps)",
                XAxis::Linear,
                series,
            );
            figure(
                slug(&[&kind, &profile, "per-request"]),
                chart.title.clone(),
                chart.to_svg(),
            )
        })
        .collect()
}

/// For a core sweep: req/s against the server's cores, one line per server, one chart per
/// scenario x base profile (id `<scenario>-<profile>-scaling`).
pub fn scaling(summary: &Summary) -> Vec<Figure> {
    crate::table::scaling_tables(summary)
        .iter()
        .map(|t| {
            let series = t
                .curves
                .iter()
                .map(|c| Series {
                    name: c.server.clone(),
                    points: c
                        .points
                        .iter()
                        .map(|p| (f64::from(p.cpus), p.rps))
                        .collect(),
                })
                .collect();
            let chart = LineChart::new(
                format!(
                    "Requests/s by server cores ({} · {})",
                    t.scenario, t.profile
                ),
                "server cores (WORKERS = cores)",
                "requests/s (median of laps)",
                XAxis::Linear,
                series,
            );
            figure(
                slug(&[t.scenario, t.profile, "scaling"]),
                chart.title.clone(),
                chart.to_svg(),
            )
        })
        .collect()
}

/// The per-second timeline of the lap whose req/s is the median of `server`'s laps: requests
/// and errors per second, and beside it the mean and p99 latency of each second. Empty when
/// the laps recorded no timeline.
pub fn timelines(table: &Table, records: &[LapRecord], server: &str) -> Vec<Figure> {
    let mut laps = laps_of(records, table, server);
    laps.retain(|r| r.load.as_ref().is_some_and(|m| !m.timeline.is_empty()));
    laps.sort_by(|a, b| rps_of(a).total_cmp(&rps_of(b)));
    let Some(lap) = laps.len().checked_sub(1).map(|i| laps[i / 2]) else {
        return Vec::new();
    };
    let points = lap.load.as_ref().map_or(&[][..], |m| &m.timeline[..]);
    let series = |name: &str, f: fn(&TimelinePoint) -> f64| Series {
        name: name.into(),
        points: points.iter().map(|p| (f64::from(p.second), f(p))).collect(),
    };
    let at = format!("lap {}, {} · {}", lap.lap, table.scenario, table.profile);
    let flow = LineChart::new(
        format!("{server}: per second ({at})"),
        "second of the lap",
        "per second",
        XAxis::Linear,
        vec![
            if table.mode.is_stream() {
                series("messages echoed", |p| p.requests as f64)
            } else {
                series("requests", |p| p.requests as f64)
            },
            series("errors", |p| p.errors as f64),
        ],
    )
    .with_width(HALF_WIDTH);
    let latency = LineChart::new(
        format!("{server}: latency per second ({at})"),
        "second of the lap",
        "latency (µs)",
        XAxis::Linear,
        vec![
            series("p99", |p| p.latency_p99_us),
            series("mean", |p| p.latency_mean_us),
        ],
    )
    .with_width(HALF_WIDTH);
    let id = |kind: &str| slug(&[&table.scenario, &table.profile, server, kind]);
    let mut out = vec![figure(id("timeline"), flow.title.clone(), flow.to_svg())];
    if !table.mode.is_stream() {
        out.push(figure(
            id("timeline-latency"),
            latency.title.clone(),
            latency.to_svg(),
        ));
    }
    out
}

fn rps_of(r: &LapRecord) -> f64 {
    r.load.as_ref().and_then(|m| m.rps).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_analysis::summary::summarize;

    fn fixture() -> Vec<LapRecord> {
        include_str!("../tests/fixtures/basic/results.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn each_table_gets_rps_latency_rss_and_cpu_charts() {
        let records = fixture();
        let summary = summarize(&records, None);
        let ids: Vec<String> = for_table(&summary.tables[0], &records)
            .into_iter()
            .map(|f| f.id)
            .collect();
        let want = [
            "hello-c50-rps",
            "hello-c50-latency",
            "hello-c50-rss",
            "hello-c50-cpu",
        ];
        assert_eq!(ids, want);
    }

    #[test]
    fn the_timeline_shown_is_the_lap_with_the_median_req_per_second() {
        let records = fixture();
        let summary = summarize(&records, None);
        // go/stdlib's laps: 90000, 120000, 100000 req/s: the median is lap 3.
        let figs = timelines(&summary.tables[0], &records, "go/stdlib");
        assert_eq!(figs.len(), 2);
        assert!(figs[0].title.contains("lap 3"), "{}", figs[0].title);
        assert_eq!(figs[1].id, "hello-c50-go-stdlib-timeline-latency");
    }

    #[test]
    fn no_timeline_is_drawn_for_laps_without_one() {
        let mut records = fixture();
        records.iter_mut().for_each(|r| {
            if let Some(m) = r.load.as_mut() {
                m.timeline.clear();
            }
        });
        let summary = summarize(&records, None);
        assert!(timelines(&summary.tables[0], &records, "go/stdlib").is_empty());
    }

    #[test]
    fn latency_curves_spread_over_decades_get_a_log_axis() {
        let curve = |k: f64| Series {
            name: "s".into(),
            points: vec![(50.0, k), (99.9, 30.0 * k)],
        };
        assert!(latency_chart("t".into(), vec![curve(100.0)]).y_log);
        let flat = Series {
            name: "s".into(),
            points: vec![(50.0, 100.0), (99.9, 300.0)],
        };
        assert!(!latency_chart("t".into(), vec![flat]).y_log);
    }

    #[test]
    fn slug_keeps_letters_and_digits_and_folds_the_rest_into_dashes() {
        assert_eq!(
            slug(&["hello", "c100", "node/http"]),
            "hello-c100-node-http"
        );
        assert_eq!(slug(&["100conn/10s", "rps"]), "100conn-10s-rps");
    }
}
