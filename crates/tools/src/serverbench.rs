//! The built-in engine: `serverbench load ... --json`, whose stdout is a `LoadResult`.

use super::{Target, Tool, ToolError};
use serverbench_model::result::LoadResult;
use serverbench_results::record::{LoadParams, Measurement};
use serverbench_results::Mode;

/// Duration as whole milliseconds (`2500ms`): the one spelling `serverbench load -d`, hey, oha and
/// h2load all accept (h2load takes no decimals, so not `config::format_duration`'s `2.5s`).
pub(crate) fn millis(secs: f64) -> String {
    format!("{}ms", (secs * 1000.0).round().max(1.0) as u64)
}

/// Arguments after the executable: `load --json ... URL...` or `load --tcp HOST:PORT ...`.
/// The lap's protocol becomes the engine's own flags (`--http2 -m`, `--new-conn`,
/// `--tls-resume`, `--cacert`), so every mode runs through the one `load` code path.
pub fn args(
    p: &LoadParams,
    target: &Target,
    client_cpus: &[usize],
) -> Result<Vec<String>, ToolError> {
    let mut a: Vec<String> = vec!["load".into(), "--json".into()];
    a.extend(["-c".into(), p.connections.to_string()]);
    if p.threads > 0 {
        a.extend(["-t".into(), p.threads.to_string()]);
    }
    if let Some(d) = p.duration_s {
        a.extend(["-d".into(), millis(d)]);
    }
    if let Some(n) = p.requests {
        a.extend(["-n".into(), n.to_string()]);
    }
    if !client_cpus.is_empty() {
        let cpus: Vec<String> = client_cpus.iter().map(|c| c.to_string()).collect();
        a.extend(["--cpus".into(), cpus.join(",")]);
    }
    match p.mode {
        Mode::TcpStream | Mode::TcpPingpong => {
            let port = target.echo_port.unwrap_or(target.port);
            a.extend(["--tcp".into(), format!("{}:{port}", target.host_for_url())]);
            if p.mode.is_stream() {
                a.extend(["--mode".into(), "stream".into()]);
                a.extend(["--message".into(), p.message.clone().unwrap_or_default()]);
            } else {
                a.extend(["--mode".into(), "pingpong".into()]);
                a.extend(["--size".into(), p.size.unwrap_or(64).to_string()]);
            }
        }
        Mode::Http => {
            if p.pipeline > 1 {
                a.extend(["-p".into(), p.pipeline.to_string()]);
            }
            if let Some(r) = p.rate {
                a.extend(["-R".into(), r.to_string()]);
            }
            a.extend(protocol_flags(p, target));
            let base = target.base_url_for(p, Tool::Serverbench)?;
            a.extend(p.paths.iter().map(|path| format!("{base}{path}")));
        }
    }
    Ok(a)
}

/// `--http2 -m N`, `--new-conn`, `--tls-resume HOW` and the trust (`--cacert` with the run's
/// certificate, else `-k`), as the lap asks.
fn protocol_flags(p: &LoadParams, target: &Target) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    if p.transport.protocol.is_h2() {
        a.push("--http2".into());
        if let Some(m) = p.transport.streams {
            a.extend(["-m".into(), m.to_string()]);
        }
    }
    if p.transport.new_conn {
        a.push("--new-conn".into());
    }
    if let Some(r) = p.transport.tls_resume {
        a.extend(["--tls-resume".into(), r.to_string()]);
    }
    if p.transport.tls {
        match &target.ca_file {
            Some(ca) => a.extend(["--cacert".into(), ca.display().to_string()]),
            None => a.push("-k".into()),
        }
    }
    a
}

/// Parses `serverbench load --json` output.
pub fn parse(stdout: &str) -> Result<Measurement, ToolError> {
    let start = stdout.find('{').ok_or_else(|| ToolError::Parse {
        tool: Tool::Serverbench,
        why: "no JSON object in the output".into(),
    })?;
    let result: LoadResult =
        serde_json::from_str(stdout[start..].trim()).map_err(|e| ToolError::Parse {
            tool: Tool::Serverbench,
            why: e.to_string(),
        })?;
    Ok(Measurement::from(&result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_results::{Protocol, TlsResume, Transport};

    fn target() -> Target {
        Target {
            host: "127.0.0.1".into(),
            port: 8080,
            echo_port: Some(9000),
            tls_port: None,
            ca_file: None,
        }
    }

    #[test]
    fn http_lap_rotates_every_path_as_urls() {
        let p = LoadParams {
            mode: Mode::Http,
            paths: vec!["/hey".into(), "/hell".into()],
            connections: 100,
            duration_s: Some(10.0),
            pipeline: 1,
            ..LoadParams::default()
        };
        let a = args(&p, &target(), &[1]).unwrap().join(" ");
        assert_eq!(
            a,
            "load --json -c 100 -d 10000ms --cpus 1 http://127.0.0.1:8080/hey http://127.0.0.1:8080/hell"
        );
    }

    #[test]
    fn tcp_stream_lap_targets_the_echo_port() {
        let p = LoadParams {
            mode: Mode::TcpStream,
            connections: 1,
            duration_s: Some(0.5),
            message: Some("hello world".into()),
            ..LoadParams::default()
        };
        let a = args(&p, &target(), &[]).unwrap();
        assert!(
            a.windows(2).any(|w| w == ["--tcp", "127.0.0.1:9000"]),
            "{a:?}"
        );
        assert!(
            a.windows(2).any(|w| w == ["--message", "hello world"]),
            "{a:?}"
        );
    }

    fn https_target() -> Target {
        Target {
            tls_port: Some(8443),
            ca_file: Some("/run/tls/cert.pem".into()),
            ..target()
        }
    }

    fn hello(protocol: Protocol, tls: bool) -> LoadParams {
        LoadParams {
            paths: vec!["/hello".into()],
            connections: 10,
            duration_s: Some(2.0),
            pipeline: 1,
            transport: Transport {
                protocol,
                tls,
                ..Transport::default()
            },
            ..LoadParams::default()
        }
    }

    #[test]
    fn a_tls_lap_goes_to_the_tls_port_trusting_the_runs_certificate() {
        let a = args(&hello(Protocol::H1, true), &https_target(), &[]).unwrap();
        assert_eq!(
            a[a.len() - 3..],
            [
                "--cacert",
                "/run/tls/cert.pem",
                "https://127.0.0.1:8443/hello"
            ]
        );
    }

    #[test]
    fn handshake_laps_ask_for_a_new_connection_and_their_resumption() {
        let mut p = hello(Protocol::H1, true);
        p.transport.new_conn = true;
        p.transport.tls_resume = Some(TlsResume::Tickets);
        let a = args(&p, &https_target(), &[]).unwrap().join(" ");
        assert!(
            a.contains("--new-conn --tls-resume tickets --cacert"),
            "{a}"
        );
    }

    #[test]
    fn h2_goes_over_tls_and_h2c_over_the_plain_port_with_their_streams() {
        let mut p = hello(Protocol::H2, true);
        p.transport.streams = Some(16);
        let a = args(&p, &https_target(), &[]).unwrap().join(" ");
        assert!(a.contains("--http2 -m 16 --cacert"), "{a}");
        assert!(a.ends_with("https://127.0.0.1:8443/hello"), "{a}");
        let a = args(&hello(Protocol::H2c, false), &https_target(), &[]).unwrap();
        assert_eq!(a[a.len() - 2..], ["--http2", "http://127.0.0.1:8080/hello"]);
    }

    #[test]
    fn engine_json_becomes_a_measurement() {
        let json = r#"{"mode":"http","target":["http://x/"],"connections":1,"threads":1,
          "requests":10,"duration_s":1.0,"rps":10.0,"bytes_read":100,"bytes_written":50,
          "latency_us":{"p50":1,"p75":2,"p90":3,"p99":4,"p999":5,"p9999":6,"max":7,"mean":2,"stdev":1},
          "errors":{"connect":0,"read":0,"write":0,"timeout":0,"parse":0,"status":1,"body":0},
          "status":{"200":9,"404":1},"client_cpu_s":0.1,"client_cpu_us_per_request":10000.0,
          "client_saturated":false,"timeline":[]}"#;
        let m = parse(json).unwrap();
        assert_eq!(
            (m.requests, m.non_2xx, m.errors_total),
            (Some(10), Some(1), Some(1))
        );
    }
}
