use super::*;
use clap::Parser;
use serverbench_hosts::distributed;
use serverbench_hosts::distributed::ClientJob;
use serverbench_hosts::Host;
use serverbench_model::{TlsResume, TlsVersion};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    load: Args,
}

fn args(argv: &[&str]) -> Args {
    Cli::parse_from(std::iter::once("load").chain(argv.iter().copied())).load
}

fn host(name: &str) -> Host {
    Host {
        name: name.into(),
        ssh: name.into(),
        address: "198.18.0.2".into(),
        checkout: "/srv/serverbench".into(),
        binary: "/srv/serverbench/target/release/serverbench".into(),
        cpus: vec![],
        ssh_config: None,
        ssh_options: vec![],
    }
}

/// What client host `i` of `hosts` is handed for these flags, read back as the host does.
fn handed(argv: &[&str], hosts: usize, cacerts: &[PathBuf]) -> (Vec<String>, LoadSpec) {
    let spec = args(argv).load_spec().unwrap();
    let all: Vec<Host> = (0..hosts).map(|i| host(&format!("load{i}"))).collect();
    let jobs: Vec<ClientJob> = distributed::jobs(&spec, &all, cacerts);
    let line = jobs[0].spec.to_line();
    (jobs[0].argv(), serde_json::from_str(&line).unwrap())
}

#[test]
fn a_client_host_is_given_the_method_the_protocol_and_the_tls_settings_asked_for() {
    let (argv, remote) = handed(
        &[
            "-X",
            "POST",
            "--http2",
            "-m",
            "10",
            "-k",
            "--new-conn",
            "--tls-resume",
            "tickets",
            "--tls-version",
            "1.3",
            "--idle",
            "40us",
            "--io",
            "uring",
            "-c",
            "10",
            "-d",
            "3s",
            "https://198.18.0.1:8443/hello",
        ],
        2,
        &[],
    );
    assert_eq!(
        argv[1..],
        ["load", "--spec", "-", "--barrier", "--json", "-q"]
    );
    let (h, t) = (&remote.http, &remote.transport);
    assert_eq!(remote.work.method, Some(serverbench_model::Method::Post));
    assert!(t.protocol == serverbench_model::Protocol::H2 && h.insecure && t.new_conn);
    assert_eq!(t.streams, Some(10));
    assert_eq!(remote.idle, "40us");
    assert_eq!(remote.io, serverbench_model::Io::Uring);
    assert_eq!(t.tls_resume, Some(TlsResume::Tickets));
    assert_eq!(h.tls_version, Some(TlsVersion::V1_3));
    assert_eq!(remote.connections, 5);
    assert_eq!(remote.duration, Some(Duration::from_secs(3)));
    assert_eq!(remote.urls(), ["https://198.18.0.1:8443/hello"]);
    let idle: serverbench_engine::Idle = remote.idle.parse().unwrap();
    assert_eq!(
        idle,
        serverbench_engine::Idle::Nap(Duration::from_micros(40))
    );
}

#[test]
fn a_client_host_trusts_its_own_copy_of_cacert_not_the_controllers_path() {
    let copy = PathBuf::from("/tmp/serverbench-run.x/ca.pem");
    let (_, remote) = handed(
        &[
            "--cacert",
            "/home/me/ca.pem",
            "https://198.18.0.1:8443/hello",
        ],
        1,
        std::slice::from_ref(&copy),
    );
    assert_eq!(remote.http.cacert, Some(copy));
    assert!(!remote.http.insecure);
}

#[test]
fn a_precision_must_be_a_positive_percentage() {
    let args = |p: &str| FindMaxArgs {
        find_max: true,
        slo: Some("p99<=5ms".into()),
        precision: p.into(),
        max_steps: 20,
        start_rate: 500.0,
        max_rate: 1e7,
        server_pid: None,
    };
    assert_eq!(plan_of(&args("2%")).unwrap().precision, 0.02);
    assert_eq!(plan_of(&args("10")).unwrap().precision, 0.1);
    assert!(plan_of(&args("0%")).unwrap_err().contains("--precision"));
    assert!(plan_of(&args("fine")).unwrap_err().contains("--precision"));
}

#[test]
fn a_search_names_the_flag_it_cannot_take_and_hosts_the_flags_they_cannot() {
    let asked = args(&[
        "--find-max",
        "--slo",
        "p99<=5ms",
        "-p",
        "4",
        "http://127.0.0.1:1/",
    ]);
    let spec = asked.load_spec().unwrap();
    assert!(asked
        .search(&spec)
        .unwrap_err()
        .starts_with("-p/--pipeline"));
    let asked = args(&[
        "--hosts",
        "h.toml",
        "--client-hosts",
        "a,b",
        "-c",
        "1",
        "http://127.0.0.1:1/",
    ]);
    assert_eq!(
        asked.hosts_conflict().as_deref(),
        Some("-c/--connections 1 is fewer than the 2 client hosts")
    );
}

#[test]
fn proto_flags_compile_the_file_into_the_spec_and_call_names_the_method() {
    let proto = concat!(env!("CARGO_MANIFEST_DIR"), "/../../spec/serverbench.proto");
    let a = args(&[
        "--proto",
        proto,
        "--call",
        "serverbench.Bench/Sum",
        "--data",
        r#"{"a":1}"#,
        "grpc://127.0.0.1:50051",
    ]);
    let spec = a.load_spec().unwrap();
    assert_eq!(spec.work.paths, ["/serverbench.Bench/Sum"]);
    let call = spec.grpc.proto.as_ref().expect("a user's call");
    assert_eq!(
        (call.file.to_str(), call.data.as_str()),
        (Some(proto), r#"{"a":1}"#)
    );
    let back = serverbench_protodyn::Proto::from_base64(&call.descriptors).unwrap();
    assert!(back.method("serverbench.Bench/Echo").is_ok());
    // The URL's path and --call agree: one method.
    let same = args(&[
        "--call",
        "/serverbench.Bench/Sum",
        "grpc://h:1/serverbench.Bench/Sum",
    ]);
    assert_eq!(
        same.load_spec().unwrap().work.paths,
        ["/serverbench.Bench/Sum"]
    );
    let e = args(&["-I", "protos", "grpc://h:1/serverbench.Bench/Sum"])
        .load_spec()
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("-I/--import-path: needs --proto FILE"), "{e}");
}

#[test]
fn http3_flags_make_an_h3_spec_with_its_streams_and_0rtt_and_a_client_host_gets_them() {
    let streams = args(&["--http3", "-m", "16", "https://127.0.0.1:4433/hello"]);
    let spec = streams.load_spec().unwrap();
    assert_eq!(spec.streams(), 16);
    assert!(spec
        .validate(&serverbench_model::spec::Origin::Flags)
        .is_ok());
    let argv = [
        "--http3",
        "--new-conn",
        "--tls-resume",
        "tickets",
        "--0rtt",
        "-k",
        "-d",
        "2s",
        "https://127.0.0.1:4433/hello",
    ];
    let spec = args(&argv).load_spec().unwrap();
    let t = &spec.transport;
    assert_eq!(
        (t.protocol, t.tls, t.streams),
        (Protocol::H3, true, Some(1))
    );
    assert!(spec.http3.zero_rtt && t.new_conn);
    assert_eq!(spec.workload(), serverbench_model::Workload::Http3);
    assert!(spec
        .validate(&serverbench_model::spec::Origin::Flags)
        .is_ok());
    let (_, remote) = handed(&argv, 2, &[]);
    assert_eq!(remote.transport.protocol, Protocol::H3);
    assert!(remote.http3.zero_rtt);
}

#[test]
fn http3_with_http2_is_refused_in_one_line_naming_the_flag() {
    let e = args(&["--http3", "--http2", "https://h:1/"])
        .load_spec()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "--http3: cannot be combined with --http2 (one HTTP version per load)"
    );
    let plain = args(&["--http3", "http://h:1/"]).load_spec().unwrap();
    let e = plain
        .validate(&serverbench_model::spec::Origin::Flags)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "--http3: needs https://: QUIC carries TLS 1.3"
    );
}
