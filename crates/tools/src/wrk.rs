//! wrk 4.x. A generated Lua script rotates the paths, pipelines when asked, and prints wrk's own
//! summary and latency percentiles as one JSON line (`SERVERBENCH_WRK {...}`) from `done()`.
//! An https lap goes to the TLS port: wrk speaks TLS through OpenSSL and checks no certificate.

use super::{mbps, Target, Tool, ToolError};
use serde::Deserialize;
use serverbench_model::result::Latency;
use serverbench_results::record::{LatencySummary, LoadParams, Measurement};
use std::path::Path;

const MARKER: &str = "SERVERBENCH_WRK ";

const DONE: &str = r#"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'SERVERBENCH_WRK {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency":{"max":%d,"mean":%.3f,"stdev":%.3f,"p50":%d,"p75":%d,"p90":%d,"p99":%d,' ..
    '"p999":%d,"p9999":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.max, latency.mean, latency.stdev,
    latency:percentile(50), latency:percentile(75), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9), latency:percentile(99.99)))
end
"#;

/// The Lua script: `paths` in rotation, `pipeline` requests per write.
pub fn script(paths: &[String], pipeline: u32) -> String {
    let quoted: Vec<String> = paths.iter().map(|p| format!("{p:?}")).collect();
    format!(
        "local paths = {{{}}}\nlocal pipeline = {}\nlocal batches = {{}}\nlocal i = 0\n\
         init = function(args)\n  local reqs = {{}}\n  for k, p in ipairs(paths) do reqs[k] = wrk.format(nil, p) end\n\
         \x20 for k = 1, #paths do\n    local b = {{}}\n    for j = 0, pipeline - 1 do b[#b + 1] = reqs[((k - 1 + j) % #paths) + 1] end\n\
         \x20   batches[k] = table.concat(b)\n  end\nend\n\
         request = function()\n  i = (i % #batches) + 1\n  return batches[i]\nend\n{DONE}",
        quoted.join(", "),
        pipeline.max(1)
    )
}

/// Arguments after `wrk`; writes the Lua script into `scratch`.
pub fn args(p: &LoadParams, target: &Target, scratch: &Path) -> Result<Vec<String>, ToolError> {
    let unsupported = |why: &str| ToolError::Unsupported {
        tool: Tool::Wrk,
        why: why.to_string(),
    };
    let secs = p
        .duration_s
        .ok_or_else(|| unsupported("wrk runs for a duration, not a request count"))?;
    if p.rate.is_some() {
        return Err(unsupported("wrk has no constant rate (that is wrk2)"));
    }
    let threads = if p.threads > 0 { p.threads } else { 2 }.min(p.connections.max(1));
    let script_path = scratch.join(format!("wrk-{}.lua", std::process::id()));
    std::fs::create_dir_all(scratch)
        .and_then(|_| std::fs::write(&script_path, script(&p.work.paths, p.pipeline)))
        .map_err(|e| unsupported(&format!("cannot write {}: {e}", script_path.display())))?;
    let first = p.work.paths.first().map(String::as_str).unwrap_or("/");
    Ok(vec![
        "-c".into(),
        p.connections.to_string(),
        "-t".into(),
        threads.to_string(),
        "-d".into(),
        format!("{}s", (secs.max(1.0)).round() as u64),
        "-s".into(),
        script_path.display().to_string(),
        format!("{}{first}", target.base_url_for(p, Tool::Wrk)?),
    ])
}

#[derive(Deserialize)]
struct Done {
    requests: u64,
    duration_us: u64,
    bytes: u64,
    errors: DoneErrors,
    latency: Latency,
}

#[derive(Deserialize)]
struct DoneErrors {
    connect: u64,
    read: u64,
    write: u64,
    status: u64,
    timeout: u64,
}

/// Parses wrk's output (the `done()` JSON line written by [`script`]).
pub fn parse(stdout: &str) -> Result<Measurement, ToolError> {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(MARKER))
        .ok_or_else(|| ToolError::Parse {
            tool: Tool::Wrk,
            why: format!(
                "no `{}` line (was wrk run with serverbench's script?)",
                MARKER.trim()
            ),
        })?;
    let d: Done = serde_json::from_str(line).map_err(|e| ToolError::Parse {
        tool: Tool::Wrk,
        why: e.to_string(),
    })?;
    let secs = d.duration_us as f64 / 1e6;
    let e = &d.errors;
    Ok(Measurement {
        requests: Some(d.requests),
        duration_s: Some(secs),
        rps: (secs > 0.0).then(|| d.requests as f64 / secs),
        bytes_read: Some(d.bytes),
        latency_us: LatencySummary::from(&d.latency),
        // wrk's `status` counts responses >= 400; it is part of the total, not `non_2xx`.
        errors_total: Some(e.connect + e.read + e.write + e.status + e.timeout),
        mbps_down: mbps(Some(d.bytes), Some(secs)),
        ..Measurement::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::Mode;
    use serverbench_model::Transport;

    #[test]
    fn script_rotates_paths_and_batches_pipelined_requests() {
        let s = script(&["/hey".into(), "/hell".into()], 16);
        assert!(s.contains("local paths = {\"/hey\", \"/hell\"}"), "{s}");
        assert!(s.contains("local pipeline = 16"), "{s}");
        assert!(s.contains("done = function"), "{s}");
    }

    #[test]
    fn real_wrk_output_parses_into_a_measurement() {
        let text = include_str!("../tests/fixtures/tools/wrk-hello.txt");
        let m = parse(text).unwrap();
        assert_eq!(m.requests, Some(100));
        assert_eq!(m.duration_s, Some(1.10463));
        assert_eq!(m.bytes_read, Some(15552));
        assert_eq!(m.latency_us.p50, Some(43946.0));
        assert_eq!(m.latency_us.max, Some(48088.0));
        assert_eq!(m.errors_total, Some(0));
        assert!((m.rps.unwrap() - 90.53).abs() < 0.01);
        // wrk does not report these: they stay unknown.
        assert_eq!(
            (m.bytes_written, m.non_2xx, m.client_cpu_s),
            (None, None, None)
        );
    }

    #[test]
    fn output_without_the_script_line_is_an_error() {
        assert!(parse("Requests/sec: 10\n").is_err());
    }

    #[test]
    fn a_request_count_is_refused() {
        let p = LoadParams {
            work: serverbench_model::spec::Work {
                mode: Mode::Http,
                ..Default::default()
            },
            requests: Some(100),
            connections: 1,
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
        assert!(args(&p, &t, &std::env::temp_dir()).is_err());
    }

    #[test]
    fn an_https_lap_goes_to_the_tls_port_and_its_output_parses() {
        let p = LoadParams {
            work: serverbench_model::spec::Work {
                paths: vec!["/hello".into()],
                ..Default::default()
            },
            connections: 10,
            threads: 1,
            duration_s: Some(2.0),
            pipeline: 1,
            transport: Transport {
                tls: true,
                ..Transport::default()
            },
            ..LoadParams::default()
        };
        let t = Target {
            host: "127.0.0.1".into(),
            port: 8080,
            echo_port: None,
            tls_port: Some(8443),
            h3_port: None,
            ca_file: None,
        };
        let a = args(&p, &t, &std::env::temp_dir()).unwrap();
        assert_eq!(a.last().unwrap(), "https://127.0.0.1:8443/hello");
        let m = parse(include_str!("../tests/fixtures/tools/wrk-https.txt")).unwrap();
        assert_eq!((m.requests, m.bytes_read), (Some(88_896), Some(13_601_088)));
        assert_eq!(
            (m.latency_us.p99, m.errors_total),
            (Some(226_539.0), Some(0))
        );
    }
}
