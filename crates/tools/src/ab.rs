//! ApacheBench (`ab`, Debian `apache2-utils`): HTTP/1.0 without keep-alive, one path, one thread,
//! exactly as the "Simple HTTP Benchmark" experiment ran it. Latencies are whole milliseconds.

use super::{mbps, Target, Tool, ToolError};
use serverbench_results::record::{LatencySummary, LoadParams, Measurement};

/// Request cap for a timed run (`-t` alone would stop at 50,000 requests).
const TIMED_REQUEST_CAP: u64 = 5_000_000;

/// Arguments after `ab`.
pub fn args(p: &LoadParams, target: &Target) -> Result<Vec<String>, ToolError> {
    let unsupported = |why: &str| ToolError::Unsupported {
        tool: Tool::Ab,
        why: why.to_string(),
    };
    if p.work.paths.len() != 1 {
        return Err(unsupported(
            "ab requests a single path; this scenario rotates several",
        ));
    }
    if p.pipeline > 1 || p.rate.is_some() {
        return Err(unsupported("ab has no pipelining and no constant rate"));
    }
    let mut a = vec!["-c".to_string(), p.connections.to_string()];
    match (p.requests, p.duration_s) {
        (Some(n), _) => a.extend(["-n".into(), n.to_string()]),
        (None, Some(d)) => a.extend([
            "-t".into(),
            (d.max(1.0).round() as u64).to_string(),
            "-n".into(),
            TIMED_REQUEST_CAP.to_string(),
        ]),
        (None, None) => return Err(unsupported("no duration and no request count")),
    }
    a.push(format!("{}{}", target.base_url(), p.work.paths[0]));
    Ok(a)
}

/// The number after `label` on the line that starts with it (`Complete requests:      10000`).
fn field(text: &str, label: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.trim_start().starts_with(label))?;
    line[line.find(label)? + label.len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `(mean, sd, max)` in ms of the `Total:` row of "Connection Times (ms)".
fn total_row(text: &str) -> Option<(f64, f64, f64)> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Total:"))?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // min mean [+/-sd] median max
    (v.len() == 5).then(|| (v[1], v[2], v[4]))
}

/// `"  99%     34"` -> ms for that percentile.
fn percentile(text: &str, pct: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let mut it = l.split_whitespace();
        (it.next()? == pct).then_some(())?;
        it.next()?.parse().ok()
    })
}

/// Parses ab's report.
pub fn parse(stdout: &str) -> Result<Measurement, ToolError> {
    let requests = field(stdout, "Complete requests:").ok_or_else(|| ToolError::Parse {
        tool: Tool::Ab,
        why: "no `Complete requests:` line".into(),
    })? as u64;
    let secs = field(stdout, "Time taken for tests:");
    let failed = field(stdout, "Failed requests:").unwrap_or(0.0) as u64;
    // ab prints these two lines only when they are not zero.
    let non_2xx = field(stdout, "Non-2xx responses:").unwrap_or(0.0) as u64;
    let write_errors = field(stdout, "Write errors:").unwrap_or(0.0) as u64;
    let bytes = field(stdout, "Total transferred:").map(|b| b as u64);
    let ms = |v: Option<f64>| v.map(|x| x * 1000.0);
    let (mean, sd, max) = match total_row(stdout) {
        Some((m, s, x)) => (Some(m), Some(s), Some(x)),
        None => (None, None, None),
    };
    Ok(Measurement {
        requests: Some(requests),
        duration_s: secs,
        rps: field(stdout, "Requests per second:"),
        bytes_read: bytes,
        latency_us: LatencySummary {
            p50: ms(percentile(stdout, "50%")),
            p75: ms(percentile(stdout, "75%")),
            p90: ms(percentile(stdout, "90%")),
            p99: ms(percentile(stdout, "99%")),
            max: ms(percentile(stdout, "100%").or(max)),
            mean: ms(mean),
            stdev: ms(sd),
            ..LatencySummary::default()
        },
        errors_total: Some(failed + non_2xx + write_errors),
        non_2xx: Some(non_2xx),
        mbps_down: mbps(bytes, secs),
        ..Measurement::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::Mode;

    fn params(paths: &[&str]) -> LoadParams {
        LoadParams {
            work: serverbench_model::spec::Work {
                mode: Mode::Http,
                paths: paths.iter().map(|p| p.to_string()).collect(),
                ..Default::default()
            },
            connections: 100,
            requests: Some(10_000),
            pipeline: 1,
            ..LoadParams::default()
        }
    }

    fn target() -> Target {
        Target {
            host: "127.0.0.1".into(),
            port: 8080,
            echo_port: None,
            tls_port: None,
            h3_port: None,
            ca_file: None,
        }
    }

    #[test]
    fn request_count_profile_becomes_dash_n() {
        let a = args(&params(&["/payload"]), &target()).unwrap().join(" ");
        assert_eq!(a, "-c 100 -n 10000 http://127.0.0.1:8080/payload");
    }

    #[test]
    fn real_ab_output_parses_into_a_measurement() {
        let m = parse(include_str!("../tests/fixtures/tools/ab-hello.txt")).unwrap();
        assert_eq!(
            (m.requests, m.rps, m.duration_s),
            (Some(200), Some(582.31), Some(0.343))
        );
        assert_eq!(m.bytes_read, Some(30000));
        assert_eq!(
            (m.latency_us.p50, m.latency_us.p99, m.latency_us.max),
            (Some(6000.0), Some(16000.0), Some(18000.0))
        );
        assert_eq!(
            (m.latency_us.mean, m.latency_us.stdev),
            (Some(7000.0), Some(4100.0))
        );
        assert_eq!((m.errors_total, m.non_2xx), (Some(0), Some(0)));
        // ab reports no p99.9 and no client CPU: they stay unknown.
        assert_eq!((m.latency_us.p999, m.client_cpu_s), (None, None));
    }

    #[test]
    fn non_2xx_responses_count_as_errors() {
        let m = parse(include_str!("../tests/fixtures/tools/ab-404.txt")).unwrap();
        assert_eq!(
            (m.requests, m.non_2xx, m.errors_total),
            (Some(50), Some(50), Some(50))
        );
    }

    #[test]
    fn several_paths_are_refused() {
        assert!(args(&params(&["/hey", "/hell"]), &target()).is_err());
    }
}
