//! Tests of a suite's h3 scenarios: TLS implied, the `h3` feature needed, streams, what an h3
//! scenario refuses (naming the suite key), and the lap's load on the server's `H3_PORT`.
use super::*;

const H3: &str = r#"name = "q"
description = "d"
reproduces = "none"
servers = "all"

[[scenario]]
name = "hello-h3"
paths = ["/hello"]
requires = "hello"
protocol = "h3"

[[profile]]
connections = 16
duration = "1s"
"#;

fn err(text: &str) -> (String, String) {
    match Suite::parse(text, Path::new("suites/q.toml")).unwrap_err() {
        SuiteError::Invalid { key, message, .. } => (key, message),
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn an_h3_scenario_is_over_tls_with_its_streams_and_needs_the_h3_feature() {
    let text = H3.replace("protocol = \"h3\"", "protocol = \"h3\"\nstreams = 16");
    let s = Suite::parse(&text, Path::new("q.toml")).unwrap();
    let sc = &s.scenarios[0];
    let t = &sc.transport;
    assert_eq!(
        (t.protocol, t.tls, t.streams),
        (Protocol::H3, true, Some(16))
    );
    assert_eq!(sc.needs(), vec![Feature::Hello, Feature::H3]);
    assert_eq!(sc.workload(), crate::Workload::Http3);
    assert_eq!(s.required_features(), vec![Feature::Hello, Feature::H3]);
}

#[test]
fn an_h3_lap_loads_the_h3_base_it_is_given_trusting_the_runs_certificate() {
    let s = Suite::parse(H3, Path::new("q.toml")).unwrap();
    let at = Address {
        http_base: "https://127.0.0.1:4433".into(),
        echo: "127.0.0.1:9".into(),
        ca_file: Some("/run/cert.pem".into()),
    };
    let (sc, p) = (&s.scenarios[0], &s.profiles[0]);
    let spec = LoadSpec::lap(&sc.work, &sc.transport, &p.pace(sc), &at);
    assert_eq!(spec.urls(), ["https://127.0.0.1:4433/hello"]);
    assert_eq!(spec.workload(), crate::Workload::Http3);
    assert_eq!(spec.http.cacert, Some("/run/cert.pem".into()));
    assert!(spec.validate(&Origin::Flags).is_ok());
}

#[test]
fn an_h3_scenario_refuses_pipelining_and_other_modes_naming_the_suite_key() {
    let piped = H3.replace("duration = \"1s\"", "duration = \"1s\"\npipeline = 8");
    let (key, message) = err(&piped);
    assert_eq!(key, "profile[1].pipeline");
    assert!(
        message.contains("h3") && message.contains("`hello-h3`"),
        "{message}"
    );
    let ws = H3.replace(
        "requires = \"hello\"",
        "requires = \"ws-echo\"\nmode = \"ws\"",
    );
    let (key, _) = err(&ws.replace("paths = [\"/hello\"]\n", ""));
    assert_eq!(key, "scenario[1].protocol");
}

#[test]
fn the_built_in_h3_scenarios_are_over_tls_and_need_h3() {
    for name in ["h3-hello", "h3-payload"] {
        let s = Scenario::builtin(name).unwrap();
        assert!(
            s.transport.tls && s.transport.protocol == Protocol::H3,
            "{name}"
        );
        assert_eq!(s.workload(), crate::Workload::Http3, "{name}");
        assert!(s.needs().contains(&Feature::H3), "{name}");
    }
}

#[test]
fn the_h3_suite_sets_https_h2_and_h3_side_by_side_on_the_h3_servers() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites");
    let s = Suite::load(&dir.join("h3.toml")).unwrap();
    let over = |p: Protocol| {
        let of_p = s.scenarios.iter().filter(|sc| sc.transport.protocol == p);
        of_p.map(|sc| sc.transport.streams).collect::<Vec<_>>()
    };
    assert_eq!(
        over(Protocol::H1),
        [None, None],
        "https-hello, https-static"
    );
    for p in [Protocol::H2, Protocol::H3] {
        assert_eq!(
            over(p),
            [None, Some(16), Some(16)],
            "{p:?}: hello, hello-m16, static-m16"
        );
    }
    assert!(
        s.scenarios.iter().all(|sc| sc.transport.tls),
        "every scenario over TLS"
    );
    let statics = s.scenarios.iter().filter(|sc| sc.work.mix.is_some());
    assert_eq!(statics.count(), 3, "the static tree over the three");
    let ServerSelection::List(servers) = &s.servers else {
        panic!("the h3 servers by name, not all: {:?}", s.servers)
    };
    assert_eq!(servers.len(), 5, "{servers:?}");
}
