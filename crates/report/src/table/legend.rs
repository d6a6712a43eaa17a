//! What the columns of the tables mean, one sentence each, for the formats with room for a
//! legend (Markdown, HTML), and where the latency figures come from (the terminal shows that
//! line too).

use serverbench_analysis::summary::{LatencySource, Summary};

/// What the columns of the tables mean, one sentence each, for the formats with room for a
/// legend (Markdown, HTML).
pub fn legend(summary: &Summary) -> Vec<String> {
    let mut out = vec![
        format!(
            "req/s: median of the laps. 95% CI: ± the larger half of the 95% bootstrap interval \
             of the median; range: ± the larger half of the min..max of the laps, when fewer \
             than {} laps succeeded.",
            serverbench_analysis::stats::MIN_LAPS_FOR_BOOTSTRAP
        ),
        "speed: ratio of medians to the baseline, with its 95% interval where shown; `=` marks \
         a rank shared with a server whose interval overlaps."
            .to_owned(),
        "errors: failed requests plus non-2xx responses. µs/req: server CPU time per request. \
         RSS MB: peak of the server's process tree."
            .to_owned(),
    ];
    if summary.tables.iter().any(|t| t.mode.is_stream()) {
        out.push(
            "Mbps/conn: Mbps down plus up, divided by the connections (tcpkali's \
             \"Bandwidth per channel\")."
                .to_owned(),
        );
    }
    out.extend(latency_note(summary));
    out.extend(super::protocol_legend(summary));
    out.extend(super::scaling_legend(summary));
    out.extend(super::hosts_legend(summary));
    out
}

/// Where the tables' p50/p99 come from: the merge of every lap's histogram, or (for cells
/// with a lap that has none, e.g. an external tool's) the median of the laps' figures; `None`
/// without latency figures.
pub fn latency_note(summary: &Summary) -> Option<String> {
    let rows: Vec<(&str, LatencySource)> = summary
        .tables
        .iter()
        .flat_map(|t| &t.servers)
        .filter_map(|s| Some((s.server.as_str(), s.latency_source?)))
        .collect();
    let mut medians: Vec<&str> = Vec::new();
    for (server, _) in rows
        .iter()
        .filter(|(_, l)| *l == LatencySource::PerLapMedian)
    {
        if !medians.contains(server) {
            medians.push(server);
        }
    }
    let merged = rows.iter().any(|(_, l)| *l == LatencySource::Merged);
    Some(match (merged, medians.is_empty()) {
        (false, true) => return None,
        (true, true) => "p50/p99 µs: read from the exact merge of every lap's latency histogram \
                         (never an average of per-lap percentiles)."
            .to_owned(),
        (false, false) => "p50/p99 µs: the median of the laps' figures (the laps carry no \
                           latency histograms)."
            .to_owned(),
        (true, false) => format!(
            "p50/p99 µs: read from the exact merge of every lap's latency histogram, except for \
             {}: the median of the laps' figures (a lap without a histogram).",
            medians.join(", ")
        ),
    })
}
