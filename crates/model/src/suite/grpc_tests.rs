//! Tests of a suite's grpc scenarios: the method as the one path, Echo's size, TLS and
//! streams, what a grpc scenario refuses (naming the suite key), and the lap's load.
use super::*;

const GRPC: &str = r#"name = "g"
description = "d"
reproduces = "none"
servers = "all"

[[scenario]]
name = "sum"
mode = "grpc"
paths = ["/serverbench.Bench/Sum"]
requires = "grpc"

[[profile]]
connections = 16
duration = "1s"
"#;

/// GRPC with these lines added to its scenario.
fn with(lines: &str) -> String {
    GRPC.replace(
        "requires = \"grpc\"\n",
        &format!("requires = \"grpc\"\n{lines}\n"),
    )
}

fn err(text: &str) -> (String, String) {
    match Suite::parse(text, Path::new("suites/g.toml")).unwrap_err() {
        SuiteError::Invalid { key, message, .. } => (key, message),
        other => panic!("unexpected {other}"),
    }
}

/// The load a lap of scenario 0 at profile 0 runs against a server on 127.0.0.1.
fn lap(s: &Suite, http_base: &str) -> LoadSpec {
    let at = Address {
        http_base: http_base.into(),
        echo: "127.0.0.1:9".into(),
        ca_file: Some("/run/cert.pem".into()),
    };
    let (sc, p) = (&s.scenarios[0], &s.profiles[0]);
    LoadSpec::lap(&sc.work, &sc.transport, &p.pace(sc), &at)
}

#[test]
fn a_grpc_scenario_calls_its_method_on_the_servers_port_with_its_streams() {
    let s = Suite::parse(&with("streams = 16"), Path::new("g.toml")).unwrap();
    let sc = &s.scenarios[0];
    assert_eq!(sc.workload(), crate::Workload::Grpc);
    assert_eq!(sc.needs(), vec![Feature::Grpc]);
    let spec = lap(&s, "http://127.0.0.1:8080");
    assert_eq!(spec.urls(), ["grpc://127.0.0.1:8080/serverbench.Bench/Sum"]);
    assert_eq!((spec.connections, spec.streams()), (16, 16));
    assert!(spec.validate(&Origin::Flags).is_ok());
}

#[test]
fn a_tls_echo_scenario_goes_to_the_tls_port_with_its_size_trusting_the_runs_certificate() {
    let text = with("tls = true\nstreams = 4\nsize = 1024")
        .replace("/serverbench.Bench/Sum", "/serverbench.Bench/Echo");
    let s = Suite::parse(&text, Path::new("g.toml")).unwrap();
    assert_eq!(s.scenarios[0].needs(), vec![Feature::Grpc, Feature::Tls]);
    let spec = lap(&s, "https://127.0.0.1:8443");
    assert_eq!(
        spec.urls(),
        ["grpcs://127.0.0.1:8443/serverbench.Bench/Echo"]
    );
    assert_eq!(spec.work.size, Some(1024));
    assert_eq!(spec.http.cacert, Some("/run/cert.pem".into()));
}

#[test]
fn a_grpc_scenario_without_its_method_or_with_an_unknown_one_names_paths() {
    let (key, message) = err(&GRPC.replace("paths = [\"/serverbench.Bench/Sum\"]\n", ""));
    assert_eq!(key, "scenario[1].paths");
    assert!(
        message.starts_with("a grpc scenario needs its method as its one path: paths = "),
        "{message}"
    );
    let (key, message) = err(&GRPC.replace("Bench/Sum", "Bench/Nope"));
    assert_eq!(key, "scenario[1].paths");
    assert!(
        message.contains("`/serverbench.Bench/Nope` is not a method"),
        "{message}"
    );
}

#[test]
fn what_a_grpc_scenario_cannot_take_is_refused_naming_the_key() {
    let key = |lines: &str| err(&with(lines)).0;
    assert_eq!(key("size = 10"), "scenario[1].size");
    assert_eq!(key("protocol = \"h2c\""), "scenario[1].protocol");
    assert_eq!(key("new_conn = true"), "scenario[1].new_conn");
    assert_eq!(key("body = \"x\""), "scenario[1].body");
    let (key, message) = err(&GRPC.replace("requires = \"grpc\"", "requires = \"hello\""));
    assert_eq!(key, "scenario[1].requires");
    assert!(message.contains("requires \"grpc\""), "{message}");
    let (key, _) = err(&GRPC.replace("duration = \"1s\"", "duration = \"1s\"\npipeline = 4"));
    assert_eq!(key, "profile[1].pipeline");
}

#[test]
fn the_grpc_suite_runs_sum_and_echo_over_h2c_and_tls_with_16_streams() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites");
    let s = Suite::load(&dir.join("grpc.toml")).unwrap();
    let features = s.required_features();
    assert!(
        features.len() == 2 && features.contains(&Feature::Grpc),
        "{features:?}"
    );
    assert!(features.contains(&Feature::Tls), "{features:?}");
    let conns: Vec<u32> = s.profiles.iter().map(|p| p.connections).collect();
    assert_eq!(conns, [16, 64]);
    for sc in s.scenarios.iter().filter(|sc| sc.work.mode == Mode::Grpc) {
        assert_eq!(sc.transport.streams, Some(16), "{}", sc.name);
    }
    let tls = |t: bool| {
        s.scenarios
            .iter()
            .filter(|sc| sc.transport.tls == t)
            .count()
    };
    assert!(tls(true) >= 1 && tls(false) >= 1);
}
