//! What the columns of the tables mean, one sentence each, for the formats with room for a
//! legend (Markdown, HTML), and where the latency figures come from (the terminal shows that
//! line too).

use serverbench_analysis::disturbed;
use serverbench_analysis::summary::DisturbedLap;
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
    if summary
        .tables
        .iter()
        .any(|t| t.servers.iter().any(|s| s.off_contract.is_some()))
    {
        out.push(
            "✗: the row's database laps broke the contract's statement rules at the N they ran \
             (the query audit of verify on the lap's requests): not ranked; the warnings say how."
                .to_owned(),
        );
    }
    out.extend(latency_note(summary));
    out.extend(super::protocol_legend(summary));
    out.extend(super::database_legend(summary));
    out.extend(super::scaling_legend(summary));
    out.extend(super::hosts_legend(summary));
    out
}

/// Under a table in the terminal: its disturbed laps in one line (`! 2 disturbed laps: steal
/// 4.0%, other processes 30% of the CPUs`); `None` without any.
pub fn disturbed_line(summary: &Summary, scenario: &str, profile: &str) -> Option<String> {
    let laps: Vec<&DisturbedLap> = summary
        .disturbed
        .iter()
        .filter(|l| l.scenario == scenario && l.profile == profile)
        .collect();
    let line = disturbed::summary_line(&laps)?;
    let dropped = laps.iter().filter(|l| l.dropped).count();
    let left_out = match dropped {
        0 => String::new(),
        n => format!(" ({n} left out of the figures: --drop-disturbed)"),
    };
    Some(format!("! {line}{left_out}"))
}

/// `run --until-ci`: the rule and which cells got there (laps taken, half-width).
pub fn until_ci_lines(summary: &Summary) -> Vec<String> {
    summary
        .until_ci
        .as_ref()
        .map_or_else(Vec::new, |r| r.lines())
}

/// The per-lap detail the formats with room keep (Markdown, HTML): each disturbed lap with
/// its causes, and the `--until-ci` outcome.
pub fn noisy_lines(summary: &Summary) -> Vec<String> {
    let mut out = until_ci_lines(summary);
    for l in &summary.disturbed {
        out.push(format!(
            "disturbed: {} ({} / {}) lap {}: {}{}",
            l.server,
            l.scenario,
            l.profile,
            l.lap,
            l.why(),
            if l.dropped {
                " (left out of the figures)"
            } else {
                ""
            }
        ));
    }
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
