use super::*;

fn http(url: &str) -> LoadSpec {
    let mut spec = LoadSpec::default();
    spec.at_urls(&[url.to_string()]).unwrap();
    spec
}

fn suite() -> Origin {
    Origin::Suite {
        scenario: "hello".into(),
        profile: "c100".into(),
    }
}

fn both(spec: &LoadSpec) -> (String, String) {
    let flags = spec.validate(&Origin::Flags).unwrap_err();
    let suite = spec.validate(&suite()).unwrap_err();
    assert_eq!((flags.key, &flags.why), (suite.key, &suite.why));
    (flags.to_string(), suite.to_string())
}

#[test]
fn a_body_with_a_drawn_body_names_the_flag_from_flags_and_the_key_from_a_suite() {
    let mut spec = http("http://h:1/up");
    spec.work.body = Some("20".into());
    spec.work.body_size = Some("1KB".parse().unwrap());
    let (flags, suite) = both(&spec);
    assert_eq!(flags, "--body-size: cannot be combined with --body");
    assert_eq!(
        suite,
        "body_size in [[scenario]] hello: cannot be combined with body"
    );
}

#[test]
fn a_profile_key_names_the_scenario_it_was_combined_with() {
    let mut spec = http("http://h:1/");
    spec.transport.protocol = crate::Protocol::H2c;
    spec.pipeline = 4;
    let (flags, suite) = both(&spec);
    assert!(flags.starts_with("-p/--pipeline: does not apply to HTTP/2 (-m/--streams"));
    assert!(
        suite.starts_with("pipeline in [[profile]] c100: does not apply to HTTP/2 (streams"),
        "{suite}"
    );
    assert!(suite.ends_with("(scenario `hello`)"), "{suite}");
    assert_eq!(Key::Pipeline.table(), Table::Profile);
    assert_eq!(Key::BodySize.table(), Table::Scenario);
}

#[test]
fn a_body_on_a_websocket_or_tcp_load_applies_to_http_only() {
    let mut ws = http("ws://h:1/ws");
    ws.work.body_size = Some("1KB".parse().unwrap());
    let (flags, suite) = both(&ws);
    assert_eq!(
        flags,
        "--body-size: applies to HTTP requests, not to ws:// and wss:// URLs"
    );
    assert!(
        suite.starts_with("body_size in [[scenario]] hello: applies to http only"),
        "{suite}"
    );
    let tcp = LoadSpec {
        target: "h:1".into(),
        work: crate::spec::Work {
            mode: Mode::TcpPingpong,
            size: Some(64),
            ..Default::default()
        },
        chunked: Some(512),
        ..LoadSpec::default()
    };
    assert_eq!(tcp.workload(), Workload::TcpPingPong);
    assert!(both(&tcp)
        .0
        .starts_with("--chunked: applies to HTTP requests, not to --tcp"));
}

#[test]
fn chunks_need_a_body_and_fit_http1_only() {
    let mut spec = http("http://h:1/");
    spec.chunked = Some(512);
    assert_eq!(
        both(&spec).0,
        "--chunked: needs a body (--body or --body-size)"
    );
    spec.work.body_size = Some("1KB".parse().unwrap());
    assert!(spec.validate(&Origin::Flags).is_ok());
    spec.transport.protocol = crate::Protocol::H2c;
    assert_eq!(spec.workload(), Workload::Http2);
    assert!(both(&spec)
        .1
        .starts_with("chunked in [[scenario]] hello: applies to HTTP/1.1 only"));
    spec.transport.protocol = crate::Protocol::H1;
    spec.work.body_size = Some("2GiB".parse().unwrap());
    assert!(both(&spec).0.contains("at most 1GiB"));
}

#[test]
fn pace_rules_name_their_flag() {
    let check = |f: &dyn Fn(&mut LoadSpec), flag: &str| {
        let mut spec = http("http://h:1/");
        f(&mut spec);
        let e = spec.validate(&Origin::Flags).unwrap_err().to_string();
        assert!(e.starts_with(flag), "{flag}: {e}");
    };
    check(
        &|s| s.connections = 0,
        "-c/--connections: must be at least 1",
    );
    check(&|s| s.threads = Some(0), "-t/--threads");
    check(
        &|s| s.duration = Some(std::time::Duration::ZERO),
        "-d/--duration: must be more than 0",
    );
    check(&|s| s.requests = Some(0), "-n/--requests");
    check(
        &|s| {
            s.rate = Some(100.0);
            s.pipeline = 2;
        },
        "-R/--rate: cannot be combined with -p/--pipeline > 1",
    );
    check(
        &|s| s.transport.tls_resume = Some(TlsResume::Tickets),
        "--tls-resume: needs --new-conn",
    );
    check(
        &|s| {
            s.transport.new_conn = true;
            s.work.reconnect_every = Some(5);
        },
        "--reconnect-every: cannot be combined with --new-conn",
    );
    assert!(http("http://h:1/").validate(&Origin::Flags).is_ok());
}

#[test]
fn a_mix_refuses_its_own_method_and_a_websocket_load() {
    let no_files = |_: &std::path::Path| Err(std::io::Error::other("none"));
    let mix = crate::Mix::parse("[[request]]\npath = \"/a\"\n", "m.toml".as_ref(), &no_files);
    let mut spec = http("http://h:1");
    spec.work.mix_requests = Some(mix.unwrap());
    spec.work.method = Some(crate::Method::Post);
    let (flags, suite) = both(&spec);
    assert!(
        flags.starts_with("-X/--method: a mix entry has its own"),
        "{flags}"
    );
    assert!(
        suite.starts_with("method in [[scenario]] hello: a mix entry has its own"),
        "{suite}"
    );
    spec.work.method = Some(crate::Method::Get);
    spec.at_urls(&["ws://h:1/ws".into()]).unwrap();
    assert!(both(&spec).0.starts_with("--mix: applies to HTTP"));
}

#[test]
fn a_websocket_message_is_one_of_text_or_size_within_its_frame() {
    let mut ws = http("ws://h:1/ws");
    assert_eq!(ws.workload(), Workload::WebSocket);
    ws.transport.protocol = crate::Protocol::H2c;
    assert!(both(&ws).0.starts_with("--http2: does not apply to ws://"));
    ws.transport.protocol = crate::Protocol::H1;
    ws.work.size = Some(MAX_WS_MESSAGE as u32 + 1);
    assert!(both(&ws)
        .0
        .starts_with("--message-size: 16777217 bytes is over"));
    ws.work.size = Some(200);
    ws.ws_ping = true;
    let (flags, suite) = both(&ws);
    assert!(
        flags.starts_with("--ws-ping: 200 bytes is over the 125"),
        "{flags}"
    );
    assert!(
        suite.starts_with("ws_ping in [[scenario]] hello: "),
        "{suite}"
    );
    let mut text = http("http://h:1/");
    text.work.binary = true;
    assert!(both(&text)
        .1
        .starts_with("binary in [[scenario]] hello: does not apply to http scenarios"));
}
