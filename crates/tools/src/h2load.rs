//! h2load (Debian `nghttp2-client`): HTTP/1.1 (`--h1`, `-m` pipelines), HTTP/2 over TLS (an
//! https URL: ALPN `h2`) and h2c (an http URL: prior knowledge), `-m` being the streams per
//! connection; over TLS it does not check the certificate. Paths rotate per request. It reports
//! min/max/mean/sd of request time but no percentiles: those stay unknown.
//!
//! Over TLS it prints what its first connection negotiated; that fills the lap's `tls` block as
//! the engine fills it (version, cipher suite and key exchange group by their IANA names, the
//! ALPN protocol), so the report's TLS table shows h2load laps too. h2load counts no handshakes:
//! those figures stay zero (its connections handshake once each and never resume).

use super::{mbps, Target, Tool, ToolError};
use serverbench_model::parse_duration;
use serverbench_model::result::TlsResult;
use serverbench_model::Protocol;
use serverbench_results::record::{LatencySummary, LoadParams, Measurement};

/// Arguments after `h2load`.
pub fn args(p: &LoadParams, target: &Target) -> Result<Vec<String>, ToolError> {
    if p.rate.is_some() {
        return Err(ToolError::Unsupported {
            tool: Tool::H2load,
            why: "h2load's rate is connections per second, not requests".into(),
        });
    }
    let in_flight = match p.transport.protocol {
        Protocol::H1 => p.pipeline,
        Protocol::H2 | Protocol::H2c => p.transport.streams.unwrap_or(1),
        Protocol::H3 => {
            return Err(ToolError::Unsupported {
                tool: Tool::H2load,
                why: "the h2load the harness installs is built without HTTP/3".into(),
            })
        }
    };
    let mut a = Vec::new();
    if p.transport.protocol == Protocol::H1 {
        a.push("--h1".to_string());
    }
    a.extend([
        "-c".into(),
        p.connections.to_string(),
        "-t".into(),
        p.threads.max(1).min(p.connections).to_string(),
        "-m".into(),
        in_flight.max(1).to_string(),
    ]);
    match (p.requests, p.duration_s) {
        (Some(n), _) => a.extend(["-n".into(), n.to_string()]),
        (None, Some(d)) => a.extend(["-D".into(), super::serverbench::millis(d)]),
        (None, None) => {
            return Err(ToolError::Unsupported {
                tool: Tool::H2load,
                why: "no duration and no request count".into(),
            })
        }
    }
    let base = target.base_url_for(p, Tool::H2load)?;
    a.extend(p.work.paths.iter().map(|path| format!("{base}{path}")));
    Ok(a)
}

/// `150us`, `13.46ms`, `1.2s` -> microseconds (the one duration grammar).
fn micros(v: &str) -> Option<f64> {
    parse_duration(v).ok().map(|d| d.as_nanos() as f64 / 1e3)
}

/// The number before `label` in a comma-separated summary line (`2832 succeeded`).
fn count(line: &str, label: &str) -> Option<u64> {
    line.split(',').find_map(|part| {
        let mut it = part.split_whitespace().rev();
        (it.next()? == label).then_some(())?;
        it.next()?.parse().ok()
    })
}

fn line<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .map(|l| &l[prefix.len()..])
}

/// Parses h2load's summary.
pub fn parse(stdout: &str) -> Result<Measurement, ToolError> {
    let err = |why: &str| ToolError::Parse {
        tool: Tool::H2load,
        why: why.to_string(),
    };
    let finished = line(stdout, "finished in ").ok_or_else(|| err("no `finished in` line"))?;
    let mut parts = finished.split(", ");
    let secs = parts.next().and_then(micros).map(|us| us / 1e6);
    let rps = parts
        .next()
        .and_then(|r| r.trim_end_matches(" req/s").parse().ok());
    let req = line(stdout, "requests: ").ok_or_else(|| err("no `requests:` line"))?;
    let done = count(req, "done");
    let errors = ["failed", "errored", "timeout"]
        .iter()
        .map(|k| count(req, k).unwrap_or(0))
        .sum();
    let non_2xx = line(stdout, "status codes: ").map(|s| {
        ["3xx", "4xx", "5xx"]
            .iter()
            .map(|k| count(s, k).unwrap_or(0))
            .sum()
    });
    let bytes = line(stdout, "traffic: ").and_then(|t| {
        let open = t.find('(')? + 1;
        t[open..open + t[open..].find(')')?].parse::<u64>().ok()
    });
    let times: Vec<f64> = line(stdout, "time for request:")
        .map(|t| t.split_whitespace().filter_map(micros).collect())
        .unwrap_or_default();
    let at = |i: usize| times.get(i).copied();
    Ok(Measurement {
        requests: done,
        duration_s: secs,
        rps,
        bytes_read: bytes,
        latency_us: LatencySummary {
            max: at(1),
            mean: at(2),
            stdev: at(3),
            ..LatencySummary::default()
        },
        errors_total: Some(errors),
        non_2xx,
        mbps_down: mbps(bytes, secs),
        tls: tls(stdout),
        ..Measurement::default()
    })
}

/// What the TLS handshake negotiated, from `TLS Protocol: TLSv1.3`, `Cipher: ...`,
/// `Server Temp Key: X25519 253 bits` and `Application protocol: h2`; None without TLS.
fn tls(stdout: &str) -> Option<TlsResult> {
    let value = |prefix: &str| line(stdout, prefix).map(str::trim);
    let version = value("TLS Protocol: ")?;
    Some(TlsResult {
        version: Some(version.to_owned()),
        cipher_suite: value("Cipher: ").map(|c| iana_cipher(c).to_owned()),
        key_exchange_group: value("Server Temp Key: ").and_then(group),
        alpn: value("Application protocol: ").map(str::to_owned),
        resume: "off".to_owned(),
        ..TlsResult::default()
    })
}

/// OpenSSL names TLS 1.2 suites its own way (`ECDHE-RSA-AES128-GCM-SHA256`); the engine, and
/// IANA, `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`. TLS 1.3 suites have one name; others are
/// kept as OpenSSL spells them.
fn iana_cipher(openssl: &str) -> &str {
    match openssl {
        "ECDHE-ECDSA-AES128-GCM-SHA256" => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384" => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305" => "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        "ECDHE-RSA-AES128-GCM-SHA256" => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "ECDHE-RSA-AES256-GCM-SHA384" => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        "ECDHE-RSA-CHACHA20-POLY1305" => "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        other => other,
    }
}

/// The group of `X25519 253 bits` or `ECDH prime256v1 256 bits`, by the engine's names
/// (`X25519`, `secp256r1`); `DH 2048 bits` gives `DH`.
fn group(temp_key: &str) -> Option<String> {
    let mut words = temp_key.split_whitespace();
    let name = match words.next()? {
        "ECDH" => words.next()?,
        other => other,
    };
    Some(match name {
        "prime256v1" => "secp256r1".to_owned(),
        other => other.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{http, https_target};
    use serverbench_model::Mode;

    #[test]
    fn real_h2load_output_parses_into_a_measurement() {
        let m = parse(include_str!("../tests/fixtures/tools/h2load-hello.txt")).unwrap();
        assert_eq!(
            (m.requests, m.rps, m.duration_s),
            (Some(2832), Some(2832.0), Some(1.01))
        );
        assert_eq!(m.bytes_read, Some(424_800));
        assert_eq!(
            (m.latency_us.max, m.latency_us.mean),
            (Some(13_460.0), Some(1_410.0))
        );
        assert_eq!((m.errors_total, m.non_2xx), (Some(0), Some(0)));
        // h2load prints no percentiles: they stay unknown.
        assert_eq!((m.latency_us.p50, m.latency_us.p99), (None, None));
    }

    #[test]
    fn failed_requests_and_4xx_are_counted() {
        let m = parse(include_str!("../tests/fixtures/tools/h2load-mixed.txt")).unwrap();
        assert_eq!(
            (m.requests, m.errors_total, m.non_2xx),
            (Some(40), Some(20), Some(20))
        );
    }

    #[test]
    fn rotated_paths_become_several_uris() {
        let p = LoadParams {
            work: serverbench_model::spec::Work {
                mode: Mode::Http,
                paths: vec!["/hey".into(), "/hell".into()],
                ..Default::default()
            },
            connections: 100,
            threads: 1,
            duration_s: Some(10.0),
            pipeline: 1,
            ..LoadParams::default()
        };
        let t = Target {
            host: "127.0.0.1".into(),
            port: 8080,
            echo_port: None,
            tls_port: None,
            h3_port: None,
            ca_file: None,
        };
        let a = args(&p, &t).unwrap().join(" ");
        assert_eq!(
            a,
            "--h1 -c 100 -t 1 -m 1 -D 10000ms http://127.0.0.1:8080/hey http://127.0.0.1:8080/hell"
        );
    }

    #[test]
    fn h2_goes_over_tls_h2c_over_http_and_https_h1_keeps_h1() {
        let a = |p: LoadParams| args(&p, &https_target()).unwrap().join(" ");
        let hello = |protocol, tls, streams| {
            let mut p = http(protocol, tls);
            p.transport.streams = streams;
            p
        };
        assert_eq!(
            a(hello(Protocol::H2, true, Some(16))),
            "-c 10 -t 1 -m 16 -D 2000ms https://127.0.0.1:8443/hello"
        );
        assert_eq!(
            a(hello(Protocol::H2c, false, Some(100))),
            "-c 10 -t 1 -m 100 -D 2000ms http://127.0.0.1:8080/hello"
        );
        assert_eq!(
            a(hello(Protocol::H1, true, None)),
            "--h1 -c 10 -t 1 -m 1 -D 2000ms https://127.0.0.1:8443/hello"
        );
    }

    #[test]
    fn captured_h2_h2c_and_https_outputs_parse_into_measurements() {
        let h2 = parse(include_str!("../tests/fixtures/tools/h2load-h2.txt")).unwrap();
        assert_eq!(
            (h2.requests, h2.rps, h2.errors_total, h2.non_2xx),
            (Some(184_577), Some(92_288.5), Some(0), Some(0))
        );
        assert_eq!(
            (h2.bytes_read, h2.latency_us.mean),
            (Some(13_659_188), Some(992.0))
        );
        let h2c = parse(include_str!("../tests/fixtures/tools/h2load-h2c.txt")).unwrap();
        assert_eq!((h2c.requests, h2c.duration_s), (Some(56_585), Some(2.0)));
        assert_eq!(h2c.latency_us.max, Some(29_610.0));
        let h1 = parse(include_str!("../tests/fixtures/tools/h2load-https-h1.txt")).unwrap();
        assert_eq!((h1.requests, h1.rps), (Some(58_958), Some(29_479.0)));
    }

    /// (version, cipher suite, group, ALPN) of a parsed output's `tls` block.
    fn negotiated(stdout: &str) -> Option<[Option<String>; 4]> {
        let t = parse(stdout).unwrap().tls?;
        assert_eq!((t.handshakes, t.resume.as_str()), (0, "off"), "{t:?}");
        Some([t.version, t.cipher_suite, t.key_exchange_group, t.alpn])
    }

    fn names(v: [&str; 4]) -> Option<[Option<String>; 4]> {
        Some(v.map(|s| Some(s.to_owned())))
    }

    #[test]
    fn over_tls_the_negotiated_version_cipher_group_and_alpn_fill_the_tls_block() {
        let h2 = include_str!("../tests/fixtures/tools/h2load-h2.txt");
        assert_eq!(
            negotiated(h2),
            names(["TLSv1.3", "TLS_AES_128_GCM_SHA256", "X25519", "h2"])
        );
        // Captured against `openssl s_server -www -tls1_2` with `h2load --h1 --groups=P-256`.
        let tls12 = include_str!("../tests/fixtures/tools/h2load-https-tls12.txt");
        assert_eq!(
            negotiated(tls12),
            names([
                "TLSv1.2",
                "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
                "secp256r1",
                "http/1.1"
            ])
        );
        let h2c = include_str!("../tests/fixtures/tools/h2load-h2c.txt");
        assert_eq!(negotiated(h2c), None, "no TLS, no tls block");
    }

    #[test]
    fn an_unknown_cipher_keeps_openssls_name_and_finite_field_dh_is_named_dh() {
        assert_eq!(iana_cipher("AES128-SHA"), "AES128-SHA");
        assert_eq!(group("DH 2048 bits").as_deref(), Some("DH"));
        assert_eq!(group("X448 448 bits").as_deref(), Some("X448"));
        assert_eq!(group("").as_deref(), None);
    }
}
