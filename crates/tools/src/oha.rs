//! oha (crates.io, `cargo install` into the cache), run with `--no-tui -j`: one URL, no
//! pipelining, times in seconds in its JSON summary.

use super::{Target, Tool, ToolError};
use serde_json::Value;
use serverbench_results::record::{LatencySummary, LoadParams, Measurement};

/// Arguments after `oha`.
pub fn args(p: &LoadParams, target: &Target) -> Result<Vec<String>, ToolError> {
    let unsupported = |why: &str| ToolError::Unsupported {
        tool: Tool::Oha,
        why: why.to_string(),
    };
    if p.work.paths.len() != 1 {
        return Err(unsupported(
            "oha requests a single URL; this scenario rotates several",
        ));
    }
    if p.pipeline > 1 {
        return Err(unsupported("oha has no HTTP/1.1 pipelining"));
    }
    let mut a = vec![
        "--no-tui".to_string(),
        "-j".into(),
        "-c".into(),
        p.connections.to_string(),
    ];
    match (p.requests, p.duration_s) {
        (Some(n), _) => a.extend(["-n".into(), n.to_string()]),
        (None, Some(d)) => a.extend(["-z".into(), super::serverbench::millis(d)]),
        (None, None) => return Err(unsupported("no duration and no request count")),
    }
    if let Some(r) = p.rate {
        a.extend(["-q".into(), r.to_string()]);
    }
    a.push(format!("{}{}", target.base_url(), p.work.paths[0]));
    Ok(a)
}

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_f64()
}

/// Parses oha's JSON report.
pub fn parse(stdout: &str) -> Result<Measurement, ToolError> {
    let err = |why: String| ToolError::Parse {
        tool: Tool::Oha,
        why,
    };
    let start = stdout
        .find('{')
        .ok_or_else(|| err("no JSON object".into()))?;
    let v: Value = serde_json::from_str(stdout[start..].trim()).map_err(|e| err(e.to_string()))?;
    let us = |path: &[&str]| num(&v, path).map(|s| s * 1e6);
    let status: std::collections::BTreeMap<String, u64> = v
        .get("statusCodeDistribution")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default();
    let errors: u64 = v
        .get("errorDistribution")
        .and_then(Value::as_object)
        // Requests cut off by the end of `-z` are not errors (oha's success rate ignores them).
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.as_str() != "aborted due to deadline")
                .filter_map(|(_, n)| n.as_u64())
                .sum()
        })
        .unwrap_or(0);
    let responses: u64 = status.values().sum();
    let non_2xx: u64 = status
        .iter()
        .filter(|(k, _)| !k.starts_with('2'))
        .map(|(_, n)| n)
        .sum();
    let secs = num(&v, &["summary", "total"]);
    Ok(Measurement {
        requests: Some(responses),
        duration_s: secs,
        rps: num(&v, &["summary", "requestsPerSec"]),
        latency_us: LatencySummary {
            p50: us(&["latencyPercentiles", "p50"]),
            p75: us(&["latencyPercentiles", "p75"]),
            p90: us(&["latencyPercentiles", "p90"]),
            p99: us(&["latencyPercentiles", "p99"]),
            p999: us(&["latencyPercentiles", "p99.9"]),
            p9999: us(&["latencyPercentiles", "p99.99"]),
            max: us(&["summary", "slowest"]),
            mean: us(&["summary", "average"]),
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
    fn real_oha_json_parses_into_a_measurement() {
        let m = parse(include_str!("../tests/fixtures/tools/oha-hello.json")).unwrap();
        assert_eq!((m.requests, m.duration_s), (Some(5340), Some(1.001625138)));
        let close = |v: Option<f64>, want: f64| (v.unwrap() - want).abs() < 1e-6;
        assert!(close(m.latency_us.p50, 700.684), "{:?}", m.latency_us);
        assert!(close(m.latency_us.p999, 2784.814), "{:?}", m.latency_us);
        // Four requests cut off by the deadline are not errors.
        assert_eq!((m.errors_total, m.non_2xx), (Some(0), Some(0)));
        // oha's totalData counts bodies only: bytes_read stays unknown.
        assert_eq!(m.bytes_read, None);
    }

    #[test]
    fn non_2xx_responses_count_as_errors() {
        let m = parse(include_str!("../tests/fixtures/tools/oha-404.json")).unwrap();
        assert_eq!(
            (m.requests, m.non_2xx, m.errors_total),
            (Some(40), Some(40), Some(40))
        );
    }
}
