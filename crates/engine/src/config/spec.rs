//! A [`LoadSpec`] (what `serverbench load`'s flags, `--spec` or a client host describe) turned
//! into an engine [`Config`]: the spec's rules are checked once, by [`LoadSpec::validate`];
//! here it is only resolved and prepared (the address, TLS files, request templates). The
//! `Config` keeps the spec, so the pace (connections, warm-up, timeout, CPUs...) is read from it
//! and never copied. A new option is added to the model's spec (and its rule to `validate`),
//! then prepared here if it needs preparing. Errors name the flag, on one line.

use super::{grpc_target, ws_target};
use super::{http_target, resolve, split_host_port, ConfigError};
use super::{Config, Lifetime, MixPlan, Protocol, Reads, Schedule, Stop};
use serverbench_model::spec::Origin;
use serverbench_model::{LoadSpec, Mode, Workload};
use serverbench_wire::tls::{TlsOptions, TlsSpec, Trust};
use std::net::SocketAddr;

/// Where to connect and what to send: the part of a [`Config`] that depends on the target.
struct Target {
    addr: SocketAddr,
    names: Vec<String>,
    protocol: Protocol,
    tls: Option<TlsSpec>,
}

impl TryFrom<&LoadSpec> for Config {
    type Error = ConfigError;

    /// Resolves the target, reads `--body-file` and the CA file, checks `--cpus` against the
    /// CPUs this process may run on and validates the whole.
    fn try_from(a: &LoadSpec) -> Result<Config, ConfigError> {
        // A spec naming a mix file without its entries (a hand-written `--spec`, a lap rebuilt
        // from its record) reads the file here rather than loading the bare URL.
        let read;
        let a = match (&a.work.mix, &a.work.mix_requests) {
            (Some(path), None) => {
                let mut with = a.clone();
                let mix = serverbench_model::Mix::load(path)
                    .map_err(|e| ConfigError::flag("--mix", e.to_string()))?;
                with.work.mix_requests = Some(mix);
                read = with;
                &read
            }
            _ => a,
        };
        a.validate(&Origin::Flags)?;
        let target = match a.workload() {
            Workload::TcpStream | Workload::TcpPingPong => tcp_target(a)?,
            Workload::WebSocket => ws_target_of(a)?,
            Workload::Grpc => grpc_target_of(a)?,
            Workload::Http1 | Workload::Http2 => http_target_of(a)?,
            Workload::Http3 => h3_target_of(a)?,
        };
        let threads = threads_on_cpus(a)?;
        let idle = a
            .idle
            .parse()
            .map_err(|e| ConfigError::value("--idle", format!("{}: {e}", a.idle)))?;
        let h = &a.http;
        let config = Config {
            spec: a.clone(),
            addr: target.addr,
            target: target.names,
            protocol: target.protocol,
            schedule: match a.rate {
                Some(per_second) => Schedule::Rate { per_second },
                None => Schedule::ClosedLoop { depth: a.pipeline },
            },
            stop: match a.requests {
                Some(n) => Stop::Requests(n),
                None => Stop::Duration(a.measured()),
            },
            threads,
            reads: if h.eager_reads {
                Reads::Eager
            } else {
                Reads::Window
            },
            idle,
            tls: target.tls,
            lifetime: if a.transport.new_conn {
                Lifetime::PerRequest
            } else {
                Lifetime::KeepAlive
            },
            mix: a
                .work
                .mix_requests
                .as_ref()
                .map(|m| MixPlan::new(&m.entries)),
        };
        Ok(config)
    }
}

/// `--tcp HOST:PORT` with `--mode`, `--message` and `--size`.
fn tcp_target(a: &LoadSpec) -> Result<Target, ConfigError> {
    let (text, work) = (&a.target, &a.work);
    if text.is_empty() {
        return Err(ConfigError::NoTarget);
    }
    let (host, port) = split_host_port(text, 0)
        .map_err(|why| ConfigError::value("--tcp", format!("`{text}`: {why}")))?;
    if port == 0 {
        return Err(ConfigError::value(
            "--tcp",
            format!("`{text}`: give HOST:PORT"),
        ));
    }
    let protocol = match work.mode {
        Mode::TcpStream => Protocol::TcpStream {
            message: work.message.clone().unwrap_or_default().into_bytes(),
        },
        _ => Protocol::TcpPingPong {
            size: work.size.unwrap_or(64) as usize,
        },
    };
    Ok(Target {
        addr: resolve(&host, port)?,
        names: vec![text.clone()],
        protocol,
        tls: None,
    })
}

/// The URLs with the HTTP flags: method, headers, body, HTTP/2, TLS.
fn http_target_of(a: &LoadSpec) -> Result<Target, ConfigError> {
    let t = http_target(a)?;
    Ok(Target {
        addr: t.addr,
        names: a.urls(),
        protocol: t.protocol,
        tls: t.tls,
    })
}

/// `--http3 https://...`: the requests as HTTP/3 streams, TLS 1.3 with ALPN `h3`, over UDP.
fn h3_target_of(a: &LoadSpec) -> Result<Target, ConfigError> {
    let t = super::h3_target(a)?;
    Ok(Target {
        addr: t.addr,
        names: a.urls(),
        protocol: t.protocol,
        tls: t.tls,
    })
}

/// The body every request carries: the spec's text, or `--body-file` read once.
pub(super) fn body_of(a: &LoadSpec) -> Result<Option<Vec<u8>>, ConfigError> {
    Ok(match (&a.work.body, &a.http.body_file) {
        (Some(b), _) => Some(b.clone().into_bytes()),
        (None, Some(f)) => Some(
            std::fs::read(f)
                .map_err(|e| ConfigError::value("--body-file", format!("{}: {e}", f.display())))?,
        ),
        (None, None) => None,
    })
}

/// The `ws[s]://` URL with the WebSocket flags (and the TLS ones for `wss://`).
fn ws_target_of(a: &LoadSpec) -> Result<Target, ConfigError> {
    let t = ws_target(a)?;
    Ok(Target {
        addr: t.addr,
        names: a.urls(),
        protocol: t.protocol,
        tls: t.tls,
    })
}

/// The `grpc[s]://` URL with `-m`, `--verify`, `--message-size`, `--deadline`, `-H` and TLS.
fn grpc_target_of(a: &LoadSpec) -> Result<Target, ConfigError> {
    let t = grpc_target(a)?;
    Ok(Target {
        addr: t.addr,
        names: a.urls(),
        protocol: t.protocol,
        tls: t.tls,
    })
}

/// The TLS flags (they apply to https:// URLs; with http:// the engine names the flag given).
pub(super) fn tls_options(a: &LoadSpec) -> TlsOptions {
    let h = &a.http;
    TlsOptions {
        trust: match (&h.cacert, h.insecure) {
            (Some(file), _) => Trust::CaFile(file.clone()),
            (None, true) => Trust::Insecure,
            (None, false) => Trust::WebPkiRoots,
        },
        version: h.tls_version,
        resume: a.transport.tls_resume.unwrap_or_default(),
    }
}

/// `--cpus` (each one this process may run on) and `-t` (default: one thread per CPU given,
/// or per CPU available): the threads.
fn threads_on_cpus(a: &LoadSpec) -> Result<u32, ConfigError> {
    let available = serverbench_machine::affinity::affinity_cpus();
    if let Some(bad) = a.cpus.iter().find(|c| !available.contains(c)) {
        return Err(ConfigError::flag(
            "--cpus",
            format!("CPU {bad} is not available (allowed: {available:?})"),
        ));
    }
    let per = if a.cpus.is_empty() {
        available.len()
    } else {
        a.cpus.len()
    };
    Ok(a.threads.unwrap_or(per as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::TlsResume;
    use std::path::PathBuf;

    fn tcp(addr: &str, mode: Mode) -> LoadSpec {
        let mut spec = LoadSpec {
            target: addr.into(),
            ..LoadSpec::default()
        };
        spec.work.mode = mode;
        spec.work.message = Some("hi".into());
        spec
    }

    fn http(url: &str) -> LoadSpec {
        let mut spec = LoadSpec::default();
        spec.at_urls(&[url.to_string()]).unwrap();
        spec
    }

    fn error_of(spec: &LoadSpec) -> String {
        Config::try_from(spec).unwrap_err().to_string()
    }

    #[test]
    fn an_http_url_becomes_a_keep_alive_closed_loop_without_tls() {
        let c = Config::try_from(&http("http://127.0.0.1:8080/hello")).unwrap();
        assert_eq!(c.addr, "127.0.0.1:8080".parse::<SocketAddr>().unwrap());
        assert_eq!(c.target, ["http://127.0.0.1:8080/hello"]);
        assert!(matches!(c.protocol, Protocol::Http(_)));
        assert_eq!(c.schedule, Schedule::ClosedLoop { depth: 1 });
        assert_eq!(c.lifetime, Lifetime::KeepAlive);
        assert!(c.tls.is_none());
        assert!(c.threads >= 1);
    }

    #[test]
    fn a_tcp_stream_sends_its_message_and_names_the_address() {
        let mut spec = tcp("127.0.0.1:9000", Mode::TcpStream);
        let c = Config::try_from(&spec).unwrap();
        assert_eq!(c.target, ["127.0.0.1:9000"]);
        assert!(matches!(&c.protocol, Protocol::TcpStream { message } if message == b"hi"));
        (spec.work.mode, spec.work.message) = (Mode::TcpPingpong, None);
        let c = Config::try_from(&spec).unwrap();
        assert!(matches!(c.protocol, Protocol::TcpPingPong { size: 64 }));
    }

    #[test]
    fn a_tcp_address_without_a_port_names_the_flag_and_the_value() {
        let spec = tcp("127.0.0.1", Mode::TcpPingpong);
        assert_eq!(error_of(&spec), "--tcp `127.0.0.1`: give HOST:PORT");
    }

    #[test]
    fn rate_with_pipelining_is_refused_naming_both_flags() {
        let mut spec = http("http://127.0.0.1:1/");
        spec.rate = Some(100.0);
        spec.pipeline = 4;
        assert_eq!(
            error_of(&spec),
            "-R/--rate: cannot be combined with -p/--pipeline > 1"
        );
    }

    #[test]
    fn a_bad_idle_a_missing_body_file_and_an_absent_cpu_each_name_their_flag() {
        let mut spec = http("http://127.0.0.1:1/");
        spec.idle = "sometimes".into();
        assert!(
            error_of(&spec).starts_with("--idle sometimes: "),
            "{}",
            error_of(&spec)
        );
        let mut spec = http("http://127.0.0.1:1/");
        spec.http.body_file = Some(PathBuf::from("/nonexistent/body"));
        assert!(error_of(&spec).starts_with("--body-file /nonexistent/body: "));
        let mut spec = http("http://127.0.0.1:1/");
        spec.cpus = vec![usize::MAX];
        let e = error_of(&spec);
        assert!(e.starts_with("--cpus: CPU ") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn body_size_becomes_random_bodies_and_refuses_other_targets_naming_the_flag() {
        let mut spec = http("http://127.0.0.1:1/upload");
        spec.work.body_size = Some("1KB..2KB".parse().unwrap());
        spec.chunked = Some(512);
        let c = Config::try_from(&spec).unwrap();
        let Protocol::Http(h) = &c.protocol else {
            panic!("not HTTP")
        };
        assert_eq!(h.requests[0].random_len(), 2000);
        assert!(!h.requests[0].is_constant() && h.count_bodies);
        let mut ws = http("ws://127.0.0.1:1/ws");
        ws.work.body_size = spec.work.body_size;
        assert!(
            error_of(&ws).starts_with("--body-size: "),
            "{}",
            error_of(&ws)
        );
        let mut tcp = tcp("127.0.0.1:1", Mode::TcpPingpong);
        tcp.chunked = Some(512);
        assert!(
            error_of(&tcp).starts_with("--chunked: "),
            "{}",
            error_of(&tcp)
        );
        spec.transport.protocol = serverbench_model::Protocol::H2c;
        assert!(
            error_of(&spec).contains("HTTP/1.1 only"),
            "{}",
            error_of(&spec)
        );
    }

    #[test]
    fn chunked_without_a_body_and_body_size_with_a_body_name_the_flag() {
        let mut spec = http("http://127.0.0.1:1/");
        spec.chunked = Some(512);
        assert!(error_of(&spec).starts_with("--chunked: needs a body"));
        spec.work.body = Some("x".into());
        spec.work.body_size = Some("1KB".parse().unwrap());
        assert!(error_of(&spec).starts_with("--body-size: cannot be combined"));
    }

    #[test]
    fn tls_flags_choose_the_trust_version_and_resumption() {
        let mut h = LoadSpec::default();
        assert_eq!(tls_options(&h).trust, Trust::WebPkiRoots);
        h.http.insecure = true;
        assert_eq!(tls_options(&h).trust, Trust::Insecure);
        h.http.cacert = Some(PathBuf::from("ca.pem"));
        assert_eq!(tls_options(&h).trust, Trust::CaFile("ca.pem".into()));
        h.transport.tls_resume = Some(TlsResume::Tickets);
        h.http.tls_version = Some(serverbench_model::TlsVersion::V1_2);
        let t = tls_options(&h);
        assert_eq!(t.resume, TlsResume::Tickets);
        assert_eq!(t.version, Some(serverbench_model::TlsVersion::V1_2));
    }

    #[test]
    fn an_https_url_gets_tls_and_new_conn_a_connection_per_request() {
        let mut spec = http("https://127.0.0.1:8443/");
        spec.http.insecure = true;
        spec.transport.new_conn = true;
        let c = Config::try_from(&spec).unwrap();
        assert!(c.tls.is_some());
        assert_eq!(c.lifetime, Lifetime::PerRequest);
    }

    #[test]
    fn tls_flags_with_a_plain_url_name_the_flag() {
        let mut spec = http("http://127.0.0.1:1/");
        spec.transport.new_conn = true;
        spec.transport.tls_resume = Some(TlsResume::Tickets);
        assert!(
            error_of(&spec).contains("--tls-resume"),
            "{}",
            error_of(&spec)
        );
    }

    fn mix_spec(url: &str) -> LoadSpec {
        let text = "[[request]]\npath = \"/a\"\nweight = 3\n\
                    [[request]]\nmethod = \"POST\"\npath = \"/up\"\nbody = \"xyz\"\n\
                    headers = [\"X-E: 1\"]\n";
        let no_files = |_: &std::path::Path| Err(std::io::Error::other("none"));
        let mix = serverbench_model::Mix::parse(text, "m.toml".as_ref(), &no_files).unwrap();
        let mut spec = http(url);
        spec.work.mix_requests = Some(mix);
        spec.http.headers = vec!["X-All: 2".into()];
        spec
    }

    #[test]
    fn a_spec_naming_a_mix_file_without_its_entries_reads_the_file_or_names_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.toml");
        std::fs::write(
            &file,
            "[[request]]\npath = \"/a\"\n[[request]]\npath = \"/b\"\n",
        )
        .unwrap();
        let mut spec = http("http://127.0.0.1:8080");
        spec.work.mix = Some(file);
        let c = Config::try_from(&spec).unwrap();
        assert_eq!(c.mix.as_ref().map(|m| m.entries.len()), Some(2));
        spec.work.mix = Some(dir.path().join("gone.toml"));
        let e = error_of(&spec);
        assert!(e.starts_with("--mix") && e.contains("gone.toml"), "{e}");
    }

    #[test]
    fn a_mix_prepares_one_request_per_entry_with_its_method_headers_and_body() {
        let c = Config::try_from(&mix_spec("http://127.0.0.1:8080")).unwrap();
        let Protocol::Http(h) = &c.protocol else {
            panic!("not HTTP/1.1")
        };
        let reqs: Vec<String> = h
            .requests
            .iter()
            .map(|r| String::from_utf8_lossy(r.constant()).into_owned())
            .collect();
        assert!(reqs[0].starts_with("GET /a HTTP/1.1\r\n"), "{}", reqs[0]);
        assert!(reqs[1].starts_with("POST /up HTTP/1.1\r\n"), "{}", reqs[1]);
        assert!(reqs[1].contains("X-All: 2\r\nX-E: 1\r\n") && reqs[1].ends_with("xyz"));
        assert!(!reqs[0].contains("X-E"));
        assert_eq!(c.mix.as_ref().map(|m| m.picker.len()), Some(2));
    }

    #[test]
    fn a_mix_over_http2_encodes_each_entry() {
        let mut spec = mix_spec("http://127.0.0.1:8080/");
        spec.transport.protocol = serverbench_model::Protocol::H2c;
        let c = Config::try_from(&spec).unwrap();
        let Protocol::Http2(h) = &c.protocol else {
            panic!("not HTTP/2")
        };
        assert_eq!(h.requests.len(), 2);
        assert_eq!(h.requests[1].body.as_deref(), Some(&b"xyz"[..]));
    }

    #[test]
    fn a_mix_refuses_a_url_path_a_method_a_body_and_tcp() {
        let e = error_of(&mix_spec("http://127.0.0.1:8080/x"));
        assert!(e.starts_with("--mix: give one URL without a path"), "{e}");
        let mut spec = mix_spec("http://127.0.0.1:8080");
        spec.work.method = Some(serverbench_model::Method::Post);
        assert!(error_of(&spec).contains("-X/--method"));
        let mut spec = mix_spec("http://127.0.0.1:8080");
        spec.work.body = Some("b".into());
        assert!(error_of(&spec).contains("--body"));
        let spec = mix_spec("ws://127.0.0.1:8080/ws");
        assert!(error_of(&spec).contains("ws://"));
    }
}
