//! Unit tests of what `run --hosts` runs on each host: the remote serve's command line and each
//! client host's load, over TLS with the copies of the run's certificate.

use super::*;
use crate::results::record::LoadParams;
use serverbench_model::Feature;

fn host(name: &str, address: &str) -> Host {
    Host {
        name: name.into(),
        ssh: name.into(),
        address: address.into(),
        checkout: "/srv/serverbench".into(),
        binary: "/srv/serverbench/target/release/serverbench".into(),
        cpus: vec![],
        ssh_config: None,
        ssh_options: vec![],
    }
}

fn hosts_run() -> HostsRun {
    HostsRun {
        transport: Transport::new().unwrap(),
        server: host("db", "198.18.0.10"),
        clients: vec![host("load1", "198.18.0.11"), host("load2", "198.18.0.12")],
        root_there: "/srv/serverbench".into(),
        database: host("db", "198.18.0.10"),
        root_on_database: "/srv/serverbench".into(),
        env: HostsEnv::default(),
    }
}

/// The copies `HostsTls::copy` would have made.
fn copies() -> HostsTls {
    HostsTls::without_folders(
        "/results/run/tls/cert.pem".into(),
        TlsFiles {
            cert: "/tmp/serverbench-run.s/cert.pem".into(),
            key: "/tmp/serverbench-run.s/key.pem".into(),
        },
        vec![
            "/tmp/serverbench-run.a/cert.pem".into(),
            "/tmp/serverbench-run.b/cert.pem".into(),
        ],
    )
}

fn target() -> Target {
    Target {
        host: "198.18.0.10".into(),
        port: 8080,
        echo_port: None,
        tls_port: Some(8443),
        h3_port: None,
        ca_file: Some("/results/run/tls/cert.pem".into()),
    }
}

fn https_hello() -> LoadParams {
    LoadParams {
        work: serverbench_model::spec::Work {
            paths: vec!["/hello".into()],
            ..Default::default()
        },
        connections: 5,
        duration_s: Some(2.0),
        transport: serverbench_model::Transport {
            tls: true,
            ..Default::default()
        },
        ..LoadParams::default()
    }
}

/// The value after `flag` in `argv`.
fn value<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    let i = argv.iter().position(|a| a == flag)?;
    argv.get(i + 1).map(String::as_str)
}

#[test]
fn the_remote_serve_is_given_the_copied_certificate_and_key_and_binds_the_host_address() {
    let dir = tempfile::tempdir().unwrap();
    let feats = [Feature::Hello, Feature::Tls];
    let server = Server::from_command("a", "true", dir.path(), &feats).unwrap();
    let h = hosts_run();
    let tls = copies();
    let argv = serve_argv(&h, &server, 2, &[0, 1], Some(&tls.server));
    assert_eq!(value(&argv, "--host"), Some("198.18.0.10"));
    assert_eq!(
        value(&argv, "--tls-cert"),
        Some("/tmp/serverbench-run.s/cert.pem")
    );
    assert_eq!(
        value(&argv, "--tls-key"),
        Some("/tmp/serverbench-run.s/key.pem")
    );
    let plain = serve_argv(&h, &server, 2, &[0, 1], None);
    assert!(!plain.iter().any(|a| a.starts_with("--tls")), "{plain:?}");
}

#[test]
fn each_client_host_trusts_its_own_copy_of_the_certificate_and_never_gets_k() {
    let (h, tls) = (hosts_run(), copies());
    let jobs = client_jobs(&h, &https_hello(), &target(), Some(&tls)).unwrap();
    assert_eq!(jobs.len(), 2);
    for (job, ca) in jobs.iter().zip(&tls.clients) {
        let spec = &job.spec;
        assert_eq!(spec.http.cacert.as_ref(), Some(ca), "{}", job.host.name);
        assert!(!spec.http.insecure, "{spec:?}");
        assert_eq!(spec.urls(), ["https://198.18.0.10:8443/hello"]);
        assert!(job.argv().iter().any(|a| a == "--barrier"));
    }
    let conns: Vec<u32> = jobs.iter().map(|j| j.spec.connections).collect();
    assert_eq!(conns, [3, 2], "the connections are shared");
}

#[test]
fn a_tls_lap_without_the_certificate_on_the_client_hosts_fails_naming_the_host() {
    let err = client_jobs(&hosts_run(), &https_hello(), &target(), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("load1: the lap is over TLS and the run's certificate was not copied"),
        "{err}"
    );
}

#[test]
fn a_plain_lap_gets_no_certificate_even_when_the_run_has_one() {
    let mut plain = https_hello();
    plain.transport.tls = false;
    let jobs = client_jobs(&hosts_run(), &plain, &target(), Some(&copies())).unwrap();
    for job in &jobs {
        assert_eq!(job.spec.http.cacert, None, "{:?}", job.spec);
        assert_eq!(job.spec.urls(), ["http://198.18.0.10:8080/hello"]);
    }
}
