//! autocannon (npm, pinned in `install.rs`), run with `--json`; latencies are reported in ms.

use super::{Target, Tool, ToolError};
use serde_json::Value;
use serverbench_results::record::{LatencySummary, LoadParams, Measurement};

/// Arguments after `autocannon`.
pub fn args(p: &LoadParams, target: &Target) -> Result<Vec<String>, ToolError> {
    let unsupported = |why: &str| ToolError::Unsupported {
        tool: Tool::Autocannon,
        why: why.to_string(),
    };
    if p.work.paths.len() != 1 {
        return Err(unsupported(
            "autocannon's command line requests a single path",
        ));
    }
    let mut a = vec![
        "--json".to_string(),
        "-c".into(),
        p.connections.to_string(),
        "-p".into(),
        p.pipeline.max(1).to_string(),
    ];
    match (p.requests, p.duration_s) {
        (Some(n), _) => a.extend(["-a".into(), n.to_string()]),
        (None, Some(d)) => a.extend(["-d".into(), format!("{}", d.max(1.0).round() as u64)]),
        (None, None) => return Err(unsupported("no duration and no request count")),
    }
    if p.threads > 1 {
        a.extend(["-w".into(), p.threads.to_string()]);
    }
    if let Some(r) = p.rate {
        // autocannon's -R is per connection.
        a.extend([
            "-R".into(),
            format!("{}", (r / p.connections.max(1) as f64).ceil()),
        ]);
    }
    a.push(format!("{}{}", target.base_url(), p.work.paths[0]));
    Ok(a)
}

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_f64()
}

/// Parses `autocannon --json` output (the last JSON object on stdout).
pub fn parse(stdout: &str) -> Result<Measurement, ToolError> {
    let err = |why: String| ToolError::Parse {
        tool: Tool::Autocannon,
        why,
    };
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| err("no JSON object in the output".into()))?;
    let v: Value = serde_json::from_str(line).map_err(|e| err(e.to_string()))?;
    let ms = |k: &str| num(&v, &["latency", k]).map(|x| x * 1000.0);
    let requests = num(&v, &["requests", "total"]).map(|x| x as u64);
    let secs = num(&v, &["duration"]);
    let non_2xx = num(&v, &["non2xx"]).map(|x| x as u64);
    let errors = num(&v, &["errors"]).unwrap_or(0.0) as u64;
    let timeouts = num(&v, &["timeouts"]).unwrap_or(0.0) as u64;
    let bytes = num(&v, &["throughput", "total"]).map(|x| x as u64);
    Ok(Measurement {
        requests,
        duration_s: secs,
        rps: match (requests, secs) {
            (Some(r), Some(s)) if s > 0.0 => Some(r as f64 / s),
            _ => None,
        },
        bytes_read: bytes,
        latency_us: LatencySummary {
            p50: ms("p50"),
            p75: ms("p75"),
            p90: ms("p90"),
            p99: ms("p99"),
            p999: ms("p99_9"),
            p9999: ms("p99_99"),
            max: ms("max"),
            mean: ms("mean"),
            stdev: ms("stddev"),
        },
        errors_total: Some(errors + timeouts + non_2xx.unwrap_or(0)),
        non_2xx,
        mbps_down: super::mbps(bytes, secs),
        ..Measurement::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::Mode;

    #[test]
    fn real_autocannon_json_parses_into_a_measurement() {
        let m = parse(include_str!(
            "../tests/fixtures/tools/autocannon-hello.json"
        ))
        .unwrap();
        assert_eq!((m.requests, m.duration_s), (Some(2575), Some(1.05)));
        assert_eq!(m.bytes_read, Some(386_250));
        assert_eq!(
            (m.latency_us.p99, m.latency_us.max),
            (Some(11_000.0), Some(26_000.0))
        );
        assert_eq!((m.errors_total, m.non_2xx), (Some(0), Some(0)));
        // autocannon does not report its own CPU: it stays unknown.
        assert_eq!(m.client_cpu_s, None);
    }

    #[test]
    fn several_paths_are_refused() {
        let p = LoadParams {
            work: serverbench_model::spec::Work {
                mode: Mode::Http,
                paths: vec!["/hey".into(), "/hell".into()],
                ..Default::default()
            },
            connections: 10,
            duration_s: Some(10.0),
            ..LoadParams::default()
        };
        let t = Target {
            host: "127.0.0.1".into(),
            port: 1,
            echo_port: None,
            tls_port: None,
            h3_port: None,
            ca_file: None,
        };
        assert!(args(&p, &t).is_err());
    }
}
