//! hey (Debian `hey`): one URL, no pipelining. Latencies come from its distribution (10..99%);
//! it reports body bytes only, so `bytes_read` (headers included elsewhere) stays unknown.

use super::{Target, Tool, ToolError};
use serverbench_results::record::{LatencySummary, LoadParams, Measurement};
use std::collections::BTreeMap;

/// Arguments after `hey`.
pub fn args(p: &LoadParams, target: &Target) -> Result<Vec<String>, ToolError> {
    let unsupported = |why: &str| ToolError::Unsupported {
        tool: Tool::Hey,
        why: why.to_string(),
    };
    if p.work.paths.len() != 1 {
        return Err(unsupported(
            "hey requests a single URL; this scenario rotates several",
        ));
    }
    if p.pipeline > 1 || p.rate.is_some() {
        return Err(unsupported(
            "hey has no pipelining and only a per-worker rate",
        ));
    }
    let mut a = vec!["-c".to_string(), p.connections.to_string()];
    match (p.requests, p.duration_s) {
        (Some(n), _) => a.extend(["-n".into(), n.max(u64::from(p.connections)).to_string()]),
        (None, Some(d)) => a.extend(["-z".into(), super::serverbench::millis(d)]),
        (None, None) => return Err(unsupported("no duration and no request count")),
    }
    a.push(format!("{}{}", target.base_url(), p.work.paths[0]));
    Ok(a)
}

/// `  Average:\t0.0009 secs` -> seconds.
fn secs(text: &str, label: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.trim_start().starts_with(label))?;
    line.trim_start()[label.len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `  99% in 0.0032 secs` -> microseconds.
fn pct(text: &str, p: &str) -> Option<f64> {
    let prefix = format!("{p}% in ");
    text.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix(&prefix)?;
        rest.split_whitespace()
            .next()?
            .parse::<f64>()
            .ok()
            .map(|s| s * 1e6)
    })
}

/// `[code]\tN responses` lines after "Status code distribution:", and the error counts after
/// "Error distribution:".
fn distributions(text: &str) -> (BTreeMap<String, u64>, u64) {
    let (mut status, mut errors, mut section) = (BTreeMap::new(), 0, "");
    for line in text.lines() {
        let t = line.trim();
        if t.ends_with("distribution:") {
            section = t;
            continue;
        }
        let Some(rest) = t.strip_prefix('[') else {
            continue;
        };
        let Some((key, tail)) = rest.split_once(']') else {
            continue;
        };
        match section {
            "Status code distribution:" => {
                let n = tail
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                status.insert(key.to_string(), n);
            }
            "Error distribution:" => errors += key.parse::<u64>().unwrap_or(0),
            _ => {}
        }
    }
    (status, errors)
}

/// Parses hey's report.
pub fn parse(stdout: &str) -> Result<Measurement, ToolError> {
    let total = secs(stdout, "Total:").ok_or_else(|| ToolError::Parse {
        tool: Tool::Hey,
        why: "no `Total:` line in the summary".into(),
    })?;
    let (status, errors) = distributions(stdout);
    let responses: u64 = status.values().sum();
    let non_2xx = status
        .iter()
        .filter(|(k, _)| !k.starts_with('2'))
        .map(|(_, n)| n)
        .sum::<u64>();
    let us = |v: Option<f64>| v.map(|s| s * 1e6);
    Ok(Measurement {
        requests: Some(responses),
        duration_s: Some(total),
        rps: secs(stdout, "Requests/sec:"),
        latency_us: LatencySummary {
            p50: pct(stdout, "50"),
            p75: pct(stdout, "75"),
            p90: pct(stdout, "90"),
            p99: pct(stdout, "99"),
            max: us(secs(stdout, "Slowest:")),
            mean: us(secs(stdout, "Average:")),
            ..LatencySummary::default()
        },
        errors_total: Some(errors + non_2xx),
        non_2xx: Some(non_2xx),
        status,
        ..Measurement::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_hey_output_parses_into_a_measurement() {
        let m = parse(include_str!("../tests/fixtures/tools/hey-hello.txt")).unwrap();
        assert_eq!((m.requests, m.duration_s), (Some(4476), Some(1.0011)));
        assert_eq!(m.rps, Some(4471.1193));
        assert_eq!(
            (m.latency_us.p50, m.latency_us.p99),
            (Some(800.0), Some(3200.0))
        );
        assert_eq!(
            (m.errors_total, m.status.get("200")),
            (Some(0), Some(&4476))
        );
        // hey counts body bytes only and no p99.9: they stay unknown.
        assert_eq!((m.bytes_read, m.latency_us.p999), (None, None));
    }

    #[test]
    fn non_2xx_responses_count_as_errors() {
        let m = parse(include_str!("../tests/fixtures/tools/hey-404.txt")).unwrap();
        assert_eq!(
            (m.requests, m.non_2xx, m.errors_total),
            (Some(40), Some(40), Some(40))
        );
    }
}
