//! CSV: one row per server x scenario x profile, stable column names, RFC 4180 quoting.

use crate::env::server_version;
use crate::Exporter;
use serverbench_analysis::summary::{ServerSummary, Summary, Table};
use serverbench_results::env::Env;

/// The column names, in order. Scripts rely on them: only ever append.
pub const COLUMNS: [&str; 40] = [
    "suite",
    "scenario",
    "profile",
    "mode",
    "connections",
    "server",
    "version",
    "tool",
    "rank",
    "laps",
    "failed_laps",
    "rps_median",
    "rps_ci_low",
    "rps_ci_high",
    "rps_ci_method",
    "rps_min",
    "rps_max",
    "rps_mean",
    "rps_stdev",
    "rps_cv",
    "rps_best",
    "noisy",
    "latency_p50_us",
    "latency_p99_us",
    "throughput_mb_s",
    "mbps_down",
    "mbps_up",
    "requests",
    "errors",
    "error_rate",
    "non_2xx",
    "rss_peak_mb",
    "cores_used",
    "cpu_us_per_request",
    "ctx_switches_per_request",
    "client_saturated",
    "speed_factor",
    "speed_factor_low",
    "speed_factor_high",
    "first_failure",
];

/// The CSV exporter.
pub struct CsvExporter;

impl Exporter for CsvExporter {
    fn render(&self, summary: &Summary, env: Option<&Env>) -> String {
        let mut out = COLUMNS.join(",") + "\n";
        for t in &summary.tables {
            for s in &t.servers {
                let mut cells = cells(summary, t, s, env);
                cells.push(s.first_failure.clone().unwrap_or_default());
                let quoted: Vec<String> = cells.iter().map(|c| quote(c)).collect();
                out.push_str(&quoted.join(","));
                out.push('\n');
            }
        }
        out
    }
}

/// Quotes a field when it holds a comma, a quote or a line break (RFC 4180).
pub fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

/// A number as full-precision text; empty when absent.
fn f(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite())
        .map_or_else(String::new, |v| v.to_string())
}

fn cells(summary: &Summary, t: &Table, s: &ServerSummary, env: Option<&Env>) -> Vec<String> {
    let r = s.rps;
    let ci = s.rps_ci;
    let sf = s.speed_factor;
    let sfi = sf.and_then(|x| x.interval);
    vec![
        summary.suite.clone().unwrap_or_default(),
        t.scenario.clone(),
        t.profile.clone(),
        t.mode.to_string(),
        t.connections.to_string(),
        s.server.clone(),
        server_version(env, &s.server),
        s.tool.to_string(),
        s.rank.map_or_else(String::new, |x| x.to_string()),
        s.laps.to_string(),
        s.failed_laps.to_string(),
        f(r.map(|x| x.median)),
        f(ci.map(|x| x.low)),
        f(ci.map(|x| x.high)),
        ci.map_or_else(String::new, |x| format!("{:?}", x.method).to_lowercase()),
        f(r.map(|x| x.min)),
        f(r.map(|x| x.max)),
        f(r.map(|x| x.mean)),
        f(r.map(|x| x.stdev)),
        f(r.map(|x| x.cv)),
        f(s.rps_best),
        s.noisy.to_string(),
        f(s.latency_p50_us),
        f(s.latency_p99_us),
        f(s.throughput_mb_s),
        f(s.mbps_down),
        f(s.mbps_up),
        s.requests.to_string(),
        s.errors.to_string(),
        f(s.error_rate),
        s.non_2xx.to_string(),
        f(s.rss_peak_mb),
        f(s.cores_used),
        f(s.cpu_us_per_request),
        f(s.ctx_switches_per_request),
        s.client_saturated.to_string(),
        f(sf.map(|x| x.ratio)),
        f(sfi.map(|x| x.low)),
        f(sfi.map(|x| x.high)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_quotes_or_newlines_are_quoted() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quote("two\nlines"), "\"two\nlines\"");
    }
}
