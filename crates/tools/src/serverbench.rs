//! The built-in engine: `serverbench load --json --spec -` with the lap as a [`LoadSpec`] on
//! stdin; its stdout is a `LoadResult`.

use super::{Target, Tool, ToolError};
use serverbench_model::capacity::CapacityResult;
use serverbench_model::result::LoadResult;
use serverbench_model::spec::{Address, LoadSpec};
use serverbench_results::record::{LoadParams, Measurement};

/// Duration as whole milliseconds (`2500ms`): the one spelling `serverbench load -d`, hey, oha and
/// h2load all accept (h2load takes no decimals, so not `config::format_duration`'s `2.5s`).
pub(crate) fn millis(secs: f64) -> String {
    format!("{}ms", (secs * 1000.0).round().max(1.0) as u64)
}

/// Arguments after the executable: `load --json --spec -`; the lap itself goes on stdin as one
/// line of JSON ([`spec`]), so the load is described once, not rebuilt as flags.
/// A `find_max` lap adds the search's flags (`--find-max --slo …`).
pub fn args(p: &LoadParams) -> Vec<String> {
    let mut a = ["load", "--json", "--spec", "-"].map(String::from).to_vec();
    if let Some(f) = &p.find_max {
        a.extend(f.args());
    }
    a
}

/// The lap against `target` as the engine's load spec ([`LoadSpec::lap`], the one builder),
/// pinned to `client_cpus`: HTTP paths as URLs (on the TLS port over TLS, trusting the run's
/// certificate, else `insecure`), or the echo port for TCP.
pub fn spec(p: &LoadParams, target: &Target, client_cpus: &[usize]) -> Result<LoadSpec, ToolError> {
    let at = Address {
        http_base: match p.work.mode.is_tcp() {
            true => target.base_url(),
            false => target.base_url_for(p, Tool::Serverbench)?,
        },
        echo: format!(
            "{}:{}",
            target.host_for_url(),
            target.echo_port.unwrap_or(target.port)
        ),
        ca_file: target.ca_file.clone(),
    };
    Ok(LoadSpec {
        cpus: client_cpus.to_vec(),
        ..LoadSpec::lap(&p.work, &p.transport, &p.pace(), &at)
    })
}

/// Parses `serverbench load --json` output.
pub fn parse(stdout: &str) -> Result<Measurement, ToolError> {
    let start = stdout.find('{').ok_or_else(|| ToolError::Parse {
        tool: Tool::Serverbench,
        why: "no JSON object in the output".into(),
    })?;
    let text = stdout[start..].trim();
    let bad = |e: serde_json::Error| ToolError::Parse {
        tool: Tool::Serverbench,
        why: e.to_string(),
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(bad)?;
    if value.get("capacity_rps").is_some() {
        let c: CapacityResult = serde_json::from_value(value).map_err(bad)?;
        return Ok(Measurement::from(&c));
    }
    let result: LoadResult = serde_json::from_value(value).map_err(bad)?;
    Ok(Measurement::from(&result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::spec::Work;
    use serverbench_model::{Mode, Protocol, TlsResume, Transport};
    use std::time::Duration;

    fn target() -> Target {
        Target {
            host: "127.0.0.1".into(),
            port: 8080,
            echo_port: Some(9000),
            tls_port: None,
            h3_port: None,
            ca_file: None,
        }
    }

    #[test]
    fn a_ws_lap_upgrades_on_the_http_port_at_slash_ws_with_its_message() {
        let p = LoadParams {
            work: Work {
                mode: Mode::Ws,
                size: Some(4096),
                binary: true,
                reconnect_every: Some(10),
                ..Default::default()
            },
            connections: 16,
            duration_s: Some(5.0),
            pipeline: 16,
            ..LoadParams::default()
        };
        let s = spec(&p, &target(), &[1]).unwrap();
        assert_eq!(s.urls(), ["ws://127.0.0.1:8080/ws"]);
        assert_eq!((s.pipeline, s.work.reconnect_every), (16, Some(10)));
        assert_eq!((s.work.size, s.work.binary), (Some(4096), true));
    }

    #[test]
    fn http_lap_rotates_every_path_as_urls() {
        let p = LoadParams {
            work: Work {
                mode: Mode::Http,
                paths: vec!["/hey".into(), "/hell".into()],
                ..Default::default()
            },
            connections: 100,
            duration_s: Some(10.0),
            pipeline: 1,
            ..LoadParams::default()
        };
        let s = spec(&p, &target(), &[1]).unwrap();
        assert_eq!(
            s.urls(),
            ["http://127.0.0.1:8080/hey", "http://127.0.0.1:8080/hell"]
        );
        assert_eq!((s.connections, s.cpus.as_slice()), (100, &[1][..]));
        assert_eq!(s.duration, Some(Duration::from_secs(10)));
        assert_eq!(args(&p), ["load", "--json", "--spec", "-"]);
    }

    #[test]
    fn a_lap_with_a_body_hands_the_engine_its_method_sizes_and_chunks() {
        let p = LoadParams {
            work: Work {
                mode: Mode::Http,
                paths: vec!["/upload".into()],
                method: Some(serverbench_model::Method::Put),
                body_size: Some("500KB..20MB".parse().unwrap()),
                ..Default::default()
            },
            connections: 4,
            duration_s: Some(1.0),
            pipeline: 1,
            chunked: Some(4096),
            ..LoadParams::default()
        };
        let s = spec(&p, &target(), &[1]).unwrap();
        assert_eq!(s.urls(), ["http://127.0.0.1:8080/upload"]);
        assert_eq!(
            s.work.request_method(),
            Some(serverbench_model::Method::Put)
        );
        assert_eq!(s.work.body_size, p.work.body_size);
        assert_eq!((s.chunked, s.work.body.as_deref()), (Some(4096), None));
        for tool in [
            Tool::Wrk,
            Tool::Ab,
            Tool::Oha,
            Tool::Hey,
            Tool::Autocannon,
            Tool::H2load,
        ] {
            let refused = crate::refuse_protocol(tool, &p).unwrap_err().to_string();
            assert!(refused.contains("needs serverbench"), "{tool:?}: {refused}");
        }
        let plain = spec(
            &LoadParams {
                work: Work {
                    mode: Mode::Http,
                    paths: vec!["/".into()],
                    ..Default::default()
                },
                ..LoadParams::default()
            },
            &target(),
            &[],
        )
        .unwrap();
        assert_eq!(
            (plain.work.request_method(), plain.work.body_size),
            (None, None)
        );
    }

    #[test]
    fn tcp_stream_lap_targets_the_echo_port() {
        let p = LoadParams {
            work: Work {
                mode: Mode::TcpStream,
                message: Some("hello world".into()),
                ..Default::default()
            },
            connections: 1,
            duration_s: Some(0.5),
            ..LoadParams::default()
        };
        let tcp = spec(&p, &target(), &[]).unwrap();
        assert_eq!(
            (tcp.target.as_str(), tcp.work.mode),
            ("127.0.0.1:9000", Mode::TcpStream)
        );
        assert_eq!(tcp.work.message.as_deref(), Some("hello world"));
        assert!(tcp.urls().is_empty());
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
            work: Work {
                paths: vec!["/hello".into()],
                ..Default::default()
            },
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
        let s = spec(&hello(Protocol::H1, true), &https_target(), &[]).unwrap();
        assert_eq!(s.urls(), ["https://127.0.0.1:8443/hello"]);
        assert_eq!(s.http.cacert, Some("/run/tls/cert.pem".into()));
        assert!(!s.http.insecure && !s.transport.protocol.is_h2());
    }

    #[test]
    fn handshake_laps_ask_for_a_new_connection_and_their_resumption() {
        let mut p = hello(Protocol::H1, true);
        p.transport.new_conn = true;
        p.transport.tls_resume = Some(TlsResume::Tickets);
        let s = spec(&p, &https_target(), &[]).unwrap();
        assert!(s.transport.new_conn);
        assert_eq!(s.transport.tls_resume, Some(TlsResume::Tickets));
    }

    #[test]
    fn h2_goes_over_tls_and_h2c_over_the_plain_port_with_their_streams() {
        let mut p = hello(Protocol::H2, true);
        p.transport.streams = Some(16);
        let s = spec(&p, &https_target(), &[]).unwrap();
        assert!(s.transport.protocol.is_h2() && s.transport.tls);
        assert_eq!(s.streams(), 16);
        assert_eq!(s.urls(), ["https://127.0.0.1:8443/hello"]);
        let s = spec(&hello(Protocol::H2c, false), &https_target(), &[]).unwrap();
        assert!(s.transport.protocol.is_h2() && s.http.cacert.is_none());
        assert_eq!(s.urls(), ["http://127.0.0.1:8080/hello"]);
    }

    #[test]
    fn an_h3_lap_goes_to_the_h3_port_over_tls_and_a_server_without_one_is_refused() {
        let mut p = hello(Protocol::H3, true);
        p.transport.streams = Some(8);
        let t = Target {
            h3_port: Some(4433),
            ..https_target()
        };
        let s = spec(&p, &t, &[]).unwrap();
        assert_eq!(s.urls(), ["https://127.0.0.1:4433/hello"]);
        assert_eq!(s.workload(), serverbench_model::Workload::Http3);
        assert_eq!(s.http.cacert, Some("/run/tls/cert.pem".into()));
        assert!(s.validate(&serverbench_model::spec::Origin::Flags).is_ok());
        let e = spec(&p, &https_target(), &[]).unwrap_err();
        assert!(e.to_string().contains("no H3_PORT"), "{e}");
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

    #[test]
    fn a_find_max_lap_asks_for_the_search_and_reads_its_capacity_step() {
        let p = LoadParams {
            find_max: Some(serverbench_model::capacity::FindMax {
                slo: "p99<=5ms".parse().unwrap(),
                precision: None,
                max_steps: None,
                start_rate: None,
            }),
            ..LoadParams::default()
        };
        assert_eq!(&args(&p)[4..], ["--find-max", "--slo", "p99<=5ms"]);
        let json = r#"{"target": ["http://127.0.0.1:1/hello"], "slo": "p99<=5ms",
            "precision": 0.05, "max_steps": 20, "capacity_rps": 2000.0,
            "failed_at_rps": 2100.0, "ending": "converged", "search_s": 12.0,
            "steps": [
              {"rate_target": 2000.0, "rate_achieved": 1999.0, "requests": 10000,
               "duration_s": 5.0, "p50_us": 900.0, "p90_us": 1000.0, "p99_us": 3000.0,
               "p999_us": 4000.0, "errors_pct": 0.0, "late": 0, "client_saturated": false,
               "met": true},
              {"rate_target": 2100.0, "rate_achieved": 2000.0, "requests": 10500,
               "duration_s": 5.0, "p50_us": 900.0, "p90_us": 1000.0, "p99_us": 9000.0,
               "p999_us": 12000.0, "errors_pct": 0.0, "late": 0, "client_saturated": false,
               "met": false, "misses": ["p99 9ms > 5ms"]}]}"#;
        let m = parse(json).unwrap();
        assert_eq!(m.rps, Some(1999.0));
        assert_eq!(m.latency_us.p99, Some(3000.0));
        assert_eq!(m.capacity.unwrap().failed_at_rps, Some(2100.0));
    }

    #[test]
    fn a_mix_lap_hands_the_engine_its_entries_and_the_bare_base_url() {
        let text = "[[request]]\npath = \"/json\"\n";
        let no_files = |_: &std::path::Path| Err(std::io::Error::other("none"));
        let mix = serverbench_model::Mix::parse(text, "m.toml".as_ref(), &no_files).unwrap();
        let p = LoadParams {
            work: Work {
                mode: Mode::Http,
                mix: Some("m.toml".into()),
                mix_requests: Some(mix.clone()),
                ..Default::default()
            },
            connections: 4,
            duration_s: Some(1.0),
            pipeline: 1,
            ..LoadParams::default()
        };
        let s = spec(&p, &target(), &[1]).unwrap();
        assert_eq!(s.urls(), ["http://127.0.0.1:8080"]);
        assert_eq!(s.work.mix_requests, Some(mix));
        let refused = crate::refuse_protocol(Tool::Wrk, &p)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("needs serverbench"), "{refused}");
    }
}
