//! `serverbench load` end to end: the real binary against in-process loopback servers.

mod common;

use common::hello_server;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Command, Output};
use std::sync::Arc;

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// Bad input: exit 1 and exactly one line on stderr that mentions `needle`.
fn assert_bad_input(args: &[&str], needle: &str) {
    let out = serverbench(args);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected `{needle}` in {err}"
    );
}

#[test]
fn malformed_url_gives_one_clear_line() {
    assert_bad_input(&["-d", "100ms", "localhost:8080/x"], "malformed URL");
}

#[test]
fn tls_flags_with_an_http_url_name_the_flag() {
    assert_bad_input(
        &["--cacert", "ca.pem", "-d", "100ms", "http://127.0.0.1:1/"],
        "--cacert",
    );
}

#[test]
fn tls_resume_without_new_conn_names_the_flag() {
    assert_bad_input(
        &[
            "--tls-resume",
            "tickets",
            "-d",
            "100ms",
            "https://127.0.0.1:1/",
        ],
        "needs --new-conn",
    );
}

#[test]
fn new_conn_with_pipelining_names_the_flag() {
    assert_bad_input(
        &[
            "--new-conn",
            "-p",
            "4",
            "-d",
            "100ms",
            "http://127.0.0.1:1/",
        ],
        "--pipeline",
    );
}

#[test]
fn a_missing_cacert_file_names_the_flag_and_the_file() {
    assert_bad_input(
        &[
            "--cacert",
            "/nonexistent/ca.pem",
            "-d",
            "100ms",
            "https://127.0.0.1:1/",
        ],
        "/nonexistent/ca.pem",
    );
}

#[test]
fn unresolvable_host_gives_one_clear_line() {
    assert_bad_input(
        &["-d", "100ms", "http://no-such-host.invalid/"],
        "cannot resolve host",
    );
}

#[test]
fn zero_connections_names_the_flag() {
    let url = format!("http://{}/", hello_server());
    assert_bad_input(&["-c", "0", "-d", "100ms", &url], "--connections");
}

#[test]
fn rate_with_pipelining_is_refused() {
    let url = format!("http://{}/", hello_server());
    assert_bad_input(&["-R", "100", "-p", "2", "-d", "100ms", &url], "--pipeline");
}

#[test]
fn zero_duration_names_the_flag() {
    let url = format!("http://{}/", hello_server());
    assert_bad_input(&["-d", "0", &url], "--duration");
}

#[test]
fn unparsable_duration_names_the_flag() {
    assert_bad_input(&["-d", "ten", "http://127.0.0.1:1/"], "--duration");
}

#[test]
fn refused_port_exits_2_and_says_so() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = serverbench(&[
        "-c",
        "3",
        "-d",
        "200ms",
        &format!("http://127.0.0.1:{port}/"),
    ]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refused every connection (3 attempts)"),
        "{err}"
    );
}

#[test]
fn a_load_whose_every_answer_has_an_error_status_exits_6_not_0() {
    let url = format!("http://{}/hello", hello_server());
    let out = serverbench(&["-c", "2", "-n", "200", "--expect-status", "404", &url]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert!(
        err.contains("no request succeeded: every answer had an error status (200 x 200)"),
        "{err}"
    );
}

#[test]
fn json_output_has_the_documented_keys() {
    let url = format!("http://{}/hello", hello_server());
    let out = serverbench(&["-c", "4", "-t", "2", "-d", "300ms", "--json", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "requests",
        "duration_s",
        "rps",
        "bytes_read",
        "bytes_written",
        "latency_us",
        "errors",
        "status",
        "client_cpu_s",
        "client_cpu_us_per_request",
        "client_saturated",
        "timeline",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert!(v["requests"].as_u64().unwrap() > 0);
    assert_eq!(v["status"]["200"], v["requests"]);
}

#[test]
fn summary_shows_percentiles_and_output_file_gets_json() {
    let url = format!("http://{}/hello", hello_server());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    let out = serverbench(&["-c", "2", "-d", "300ms", "-o", file.to_str().unwrap(), &url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("p99") && text.contains("200:") && text.contains("Errors"),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(v["rps"].as_f64().unwrap() > 0.0);
}

#[test]
fn pipelined_load_counts_every_response_with_and_without_eager_reads() {
    let url = format!("http://{}/hello", hello_server());
    for extra in [&[][..], &["--eager-reads"][..]] {
        let mut args = vec!["-c", "4", "-p", "16", "-n", "8000", "--json"];
        args.extend_from_slice(extra);
        args.push(&url);
        let out = serverbench(&args);
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", stderr_of(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["requests"], 8000, "{extra:?}");
        assert_eq!(v["status"]["200"], 8000, "{extra:?}");
        assert_eq!(v["bytes_read"], 8000 * 51, "{extra:?}");
    }
}

#[test]
fn rate_mode_reports_corrected_and_uncorrected_latency() {
    let url = format!("http://{}/hello", hello_server());
    let out = serverbench(&["-c", "4", "-R", "500", "-d", "300ms", "--json", &url]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rate_target"], 500.0);
    assert!(v["latency_us_uncorrected"]["p99"].is_number());
    assert!(v["late"].is_u64());
}

/// A TCP echo server.
#[test]
fn a_non_numeric_connection_count_is_bad_input_with_exit_1_not_2() {
    let out = serverbench(&["load", "-c", "abc", "http://127.0.0.1:9/hello"]);
    assert_eq!(out.status.code(), Some(1), "2 means refused connections");
    assert!(stderr_of(&out).contains("--connections"));
}

#[test]
fn help_exits_0() {
    let out = serverbench(&["load", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("--pipeline"));
}

#[test]
fn barrier_prints_ready_and_measures_only_after_go() {
    use std::io::BufRead;
    let addr = hello_server();
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args([
            "load",
            "--barrier",
            "--json",
            "-c",
            "2",
            "-t",
            "1",
            "-d",
            "300ms",
        ])
        .arg(format!("http://{addr}/"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let released = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let mut json = String::new();
    out.read_to_string(&mut json).unwrap();
    assert!(child.wait().unwrap().success());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let start = v["measure_start_unix_s"].as_f64().unwrap();
    assert!(
        start > released && start - released < 0.1,
        "measured from {start}, released at {released}"
    );
    assert!(v["requests"].as_u64().unwrap() > 0);
    assert!(v["histograms"]["latency_us"]
        .as_str()
        .unwrap()
        .starts_with("HISTF"));
}

#[test]
fn barrier_without_go_measures_nothing_and_exits_8_not_a_failed_lap() {
    let addr = hello_server();
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["load", "--barrier", "-c", "1", "-d", "1s"])
        .arg(format!("http://{addr}/"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(8));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ready\n");
    assert!(stderr_of(&out).contains("no `go` line on stdin"));
}

#[test]
fn hosts_without_client_hosts_is_bad_input() {
    let out = serverbench(&["--hosts", "hosts.toml", "http://127.0.0.1:1/"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("--client-hosts"),
        "{}",
        stderr_of(&out)
    );
}

/// `load -c 3000` with `ulimit -n 256` (soft and hard) in the test's own child: the limit
/// cannot be raised, so the run is refused with the numbers instead of failing 2,700 connects.
#[test]
fn too_many_connections_for_the_file_limit_are_refused_with_the_numbers() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let bin = env!("CARGO_BIN_EXE_serverbench");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 256 && exec {bin} load -c 3000 -d 1s {url}"
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("3000 connections need 3064 file descriptors; the limit is 256"),
        "{stderr}"
    );
}

/// With a soft limit below what is needed but a higher hard limit, the soft limit is raised and
/// every connection opens (without it, sockets past 256 fail with EMFILE as connect errors).
#[test]
fn the_soft_file_limit_is_raised_to_fit_the_connections() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(400).flatten().collect();
        std::thread::sleep(std::time::Duration::from_secs(5));
        drop(held);
    });
    let bin = env!("CARGO_BIN_EXE_serverbench");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -Sn 256 && exec {bin} load --json -c 400 -t 1 -d 300ms --timeout 2s {url}"
        ))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON result");
    assert_eq!(v["errors"]["connect"], 0, "{stdout}");
}

/// An HTTPS `Hello World!` server whose certificate a generated CA signs; returns its address
/// and the CA's PEM file (kept alive by the TempDir).
fn https_server(resumable: bool) -> (SocketAddr, tempfile::TempDir, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
        )
        .unwrap();
    if !resumable {
        config.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        config.send_tls13_tickets = 0;
    }
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            std::thread::spawn(move || serve_tls(rustls::StreamOwned::new(conn, stream)));
        }
    });
    (addr, dir, ca_file.to_string_lossy().to_string())
}

fn serve_tls(mut s: rustls::StreamOwned<rustls::ServerConnection, std::net::TcpStream>) {
    let mut buf = [0u8; 8192];
    let mut pending = Vec::new();
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
        let mut out = Vec::new();
        while let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            pending.drain(..i + 4);
            out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!");
        }
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

#[test]
fn https_with_cacert_loads_and_records_the_negotiation() {
    let (addr, _dir, ca) = https_server(true);
    let url = format!("https://{addr}/hello");
    let out = serverbench(&["--cacert", &ca, "-c", "2", "-n", "300", "--json", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"]["200"], 300);
    assert_eq!(v["tls"]["version"], "TLSv1.3");
    assert_eq!(v["tls"]["handshakes"], 2);
}

#[test]
fn https_without_its_ca_fails_every_handshake_with_a_hint_and_exit_5() {
    let (addr, _dir, _) = https_server(true);
    let url = format!("https://{addr}/hello");
    let out = serverbench(&["-c", "2", "-n", "4", &url]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("every TLS handshake failed: certificate unknown issuer")
            && err.contains("with --cacert FILE, or skip the check with -k/--insecure"),
        "{err}"
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("tls "), "{summary}");
}

#[test]
fn insecure_accepts_a_certificate_from_an_unknown_ca() {
    let (addr, _dir, _) = https_server(true);
    let url = format!("https://{addr}/hello");
    let out = serverbench(&["-k", "-c", "2", "-n", "100", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("TLSv1.3") && summary.contains("Handshakes"),
        "{summary}"
    );
}

#[test]
fn tls_resume_exits_5_when_the_server_resumes_nothing_and_0_when_it_does() {
    for (resumable, code) in [(false, 5), (true, 0)] {
        let (addr, _dir, ca) = https_server(resumable);
        let url = format!("https://{addr}/hello");
        let args = ["--cacert", &ca, "--new-conn", "--tls-resume", "tickets"];
        let out = serverbench(&[&args[..], &["-c", "2", "-n", "50", "--json", &url]].concat());
        let err = stderr_of(&out);
        assert_eq!(
            out.status.code(),
            Some(code),
            "resumable {resumable}: {err}"
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["tls"]["handshakes"], 50,
            "the result is printed either way"
        );
        if resumable {
            assert_eq!(v["tls"]["handshakes_resumed"], 48);
        } else {
            assert!(
                err.contains("--tls-resume tickets: the server resumed none of 50 handshakes"),
                "{err}"
            );
        }
    }
}

#[test]
fn a_load_spec_on_stdin_runs_the_load_it_describes() {
    let url = format!("http://{}/", hello_server());
    let spec =
        format!(r#"{{"urls": ["{url}"], "connections": 2, "threads": 1, "duration": "300ms"}}"#);
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["load", "--spec", "-", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{spec}").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["connections"], 2);
    assert!(result["requests"].as_u64().unwrap() > 0, "{result}");
}

#[test]
fn a_spec_that_is_not_one_names_the_flag() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["load", "--spec", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), r#"{{"conections": 2}}"#).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--spec -") && err.contains("conections"),
        "{err}"
    );
}

#[test]
fn cpus_take_ranges_and_a_bad_list_names_the_flag() {
    assert_bad_input(&["--cpus", "3-1", "http://127.0.0.1:1/"], "--cpus");
}

#[test]
fn cpus_take_a_range_as_serve_and_run_do() {
    let url = format!("http://{}/hello", hello_server());
    let out = serverbench(&["--cpus", "0-0", "-c", "1", "-n", "20", "--json", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["requests"].as_u64(), v["threads"].as_u64()),
        (Some(20), Some(1))
    );
}
