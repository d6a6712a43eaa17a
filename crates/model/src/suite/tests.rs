//! Tests of suite parsing, kept apart so suite.rs stays about the format.
use super::*;

const GOOD: &str = r#"name = "t"
description = "d"
reproduces = "none"
servers = ["python/fast", "python/slow"]
warmup = "500ms"

[[scenario]]
name = "hello"
paths = ["/hello"]
requires = "hello"

[[profile]]
connections = 10
duration = "1s"
"#;

fn err(text: &str) -> (usize, String, String) {
    match Suite::parse(text, Path::new("suites/t.toml")).unwrap_err() {
        SuiteError::Invalid {
            line, key, message, ..
        } => (line, key, message),
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn a_minimal_suite_gets_defaults_and_a_profile_name() {
    let s = Suite::parse(GOOD, Path::new("t.toml")).unwrap();
    assert_eq!((s.laps, s.warmup, s.tool), (3, 0.5, Tool::Serverbench));
    assert_eq!(s.profiles[0].name, "10conn/1s");
    assert_eq!(s.scenarios[0].requires, vec![Feature::Hello]);
}

#[test]
fn all_servers_is_accepted() {
    let s = Suite::parse(
        &GOOD.replace("[\"python/fast\", \"python/slow\"]", "\"all\""),
        Path::new("t"),
    )
    .unwrap();
    assert_eq!(s.servers, ServerSelection::All(AllServers::All));
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let (line, key, _) = err(&GOOD.replace("connections = 10", "connections = 10\nconections = 5"));
    assert_eq!((line, key.as_str()), (14, "profile[1].conections"));
    let e = Suite::parse(
        &GOOD.replace("laps", "lapz").replace("warmup", "lapz"),
        Path::new("suites/t.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("suites/t.toml:5: lapz:"), "{e}");
}

#[test]
fn wrong_type_and_bad_duration_name_their_key() {
    assert_eq!(
        err(&GOOD.replace("connections = 10", "connections = \"ten\"")).1,
        "profile[1].connections"
    );
    let (line, key, message) = err(&GOOD.replace("\"1s\"", "\"1 fortnight\""));
    assert_eq!(
        (line, key.as_str()),
        (14, "profile[1].duration"),
        "{message}"
    );
}

#[test]
fn missing_required_key_is_named() {
    assert_eq!(
        err(&GOOD.replace("reproduces = \"none\"\n", "")).1,
        "reproduces"
    );
}

#[test]
fn profile_without_duration_or_requests_is_invalid() {
    let (line, key, _) = err(&GOOD.replace("duration = \"1s\"\n", ""));
    assert_eq!((line, key.as_str()), (1, "profile[1].duration"));
    let (line, key, _) = err(&GOOD.replace("duration = \"1s\"", "duration = \"1s\"\nrequests = 5"));
    assert_eq!((line, key.as_str()), (15, "profile[1].requests"));
}

#[test]
fn unknown_feature_is_refused() {
    let (_, key, message) = err(&GOOD.replace("requires = \"hello\"", "requires = \"jsonp\""));
    assert_eq!(key, "scenario[1].requires", "{message}");
}

#[test]
fn tcp_stream_without_a_message_is_invalid() {
    let text = GOOD.replace("paths = [\"/hello\"]\n", "mode = \"tcp-stream\"\n");
    assert_eq!(err(&text).1, "scenario[1].message");
}

#[test]
fn quick_shortens_laps_durations_warmup_and_requests() {
    let mut s = Suite::parse(
        &GOOD
            .replace("duration = \"1s\"", "duration = \"30s\"")
            .replace("warmup = \"500ms\"", "laps = 6"),
        Path::new("t"),
    )
    .unwrap();
    s.profiles.push(Profile {
        name: "n".into(),
        connections: 1,
        threads: None,
        duration: None,
        requests: Some(10_000),
        pipeline: 1,
        rate: None,
        server_cpus: Vec::new(),
        cores: None,
        pool: None,
        find_max: None,
    });
    s.quicken();
    assert_eq!((s.laps, s.warmup), (2, 0.5));
    assert_eq!(
        (s.profiles[0].duration, s.profiles[0].name.as_str()),
        (Some(2.0), "10conn/2s")
    );
    assert_eq!(
        (s.profiles[1].requests, s.profiles[1].name.as_str()),
        (Some(1000), "n (1000req)")
    );
}

fn profile(name: &str, duration: Option<f64>, requests: Option<u64>) -> Profile {
    Profile {
        name: name.into(),
        connections: 100,
        threads: None,
        duration,
        requests,
        pipeline: 1,
        rate: None,
        server_cpus: Vec::new(),
        cores: None,
        pool: None,
        find_max: None,
    }
}

#[test]
fn a_custom_profile_label_ending_in_its_length_gets_the_new_length() {
    let mut p = profile("t4c100/30s", Some(30.0), None);
    p.set_length(Some(2.0), None);
    assert_eq!(p.name, "t4c100/2s");
    let mut p = profile("big/1000req", None, Some(1000));
    p.set_length(None, Some(100));
    assert_eq!(p.name, "big/100req");
}

#[test]
fn a_default_label_is_recomputed_and_an_unchanged_length_keeps_the_label() {
    let mut p = profile("100conn/10s", Some(10.0), None);
    p.set_length(Some(5.0), None);
    assert_eq!(p.name, "100conn/5s");
    let mut p = profile("anything", Some(10.0), None);
    p.set_length(Some(10.0), None);
    assert_eq!(p.name, "anything");
}

#[test]
fn set_duration_turns_request_bounded_profiles_into_timed_ones() {
    let mut s = Suite::parse(GOOD, Path::new("t")).unwrap();
    s.profiles.push(profile("n", None, Some(10_000)));
    s.set_duration(5.0);
    assert!(s
        .profiles
        .iter()
        .all(|p| p.duration == Some(5.0) && p.requests.is_none()));
    assert_eq!(s.profiles[1].name, "n (5s)");
}

/// tcp-echo's four profiles: 1, 100 and 500 connections for 10 s, and 100 for 60 s.
fn echo_profiles() -> Suite {
    let mut s = Suite::parse(GOOD, Path::new("t")).unwrap();
    s.profiles = vec![
        profile("1conn/10s", Some(10.0), None),
        profile("100conn/10s", Some(10.0), None),
        profile("500conn/10s", Some(10.0), None),
        profile("100conn/60s", Some(60.0), None),
    ];
    s.profiles[0].connections = 1;
    s.profiles[2].connections = 500;
    s
}

fn names_and_durations(s: &Suite) -> Vec<(String, Option<f64>)> {
    s.profiles
        .iter()
        .map(|p| (p.name.clone(), p.duration))
        .collect()
}

#[test]
fn a_duration_override_scales_a_long_profile_so_it_keeps_its_own_label() {
    let mut s = echo_profiles();
    s.set_duration(5.0);
    let got = names_and_durations(&s);
    assert_eq!(got[1], ("100conn/5s".to_string(), Some(5.0)));
    assert_eq!(got[3], ("100conn/30s".to_string(), Some(30.0)));
    let mut s = echo_profiles();
    s.set_duration(3.0);
    assert_eq!(
        names_and_durations(&s)[3],
        ("100conn/18s".to_string(), Some(18.0))
    );
}

#[test]
fn quick_caps_the_shortest_profile_at_2_s_and_keeps_the_others_ratio() {
    let mut s = echo_profiles();
    s.quicken();
    let names: Vec<String> = s.profiles.iter().map(|p| p.name.clone()).collect();
    assert_eq!(
        names,
        vec!["1conn/2s", "100conn/2s", "500conn/2s", "100conn/12s"]
    );
}

#[test]
fn an_override_that_would_give_two_profiles_one_label_keeps_them_apart() {
    let mut s = echo_profiles();
    s.profiles
        .push(profile("100conn/10000req", None, Some(10_000)));
    s.set_duration(5.0);
    let names: Vec<String> = s.profiles.iter().map(|p| p.name.clone()).collect();
    assert_eq!(names[1], "100conn/10s (5s)");
    assert_eq!(names[4], "100conn/10000req (5s)");
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
}

#[test]
fn durations_parse_in_every_unit() {
    let warmup = |w: &str| {
        Suite::parse(
            &GOOD.replace("\"500ms\"", &format!("\"{w}\"")),
            Path::new("t"),
        )
        .map(|s| s.warmup)
    };
    assert_eq!(warmup("500ms").unwrap(), 0.5);
    assert_eq!(warmup("2s").unwrap(), 2.0);
    assert_eq!(warmup("1.5s").unwrap(), 1.5);
    assert_eq!(warmup("1m").unwrap(), 60.0);
    assert_eq!(warmup("3").unwrap(), 3.0);
    assert!(warmup("s").is_err());
    assert_eq!(duration_text(0.5), "500ms");
    assert_eq!(duration_text(10.0), "10s");
}

#[test]
fn every_suite_in_the_repository_parses() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            Suite::load(&p).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 6, "{n} suites in {}", dir.display());
}

#[test]
fn the_protocol_suites_need_their_transports() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites");
    let tls = Suite::load(&dir.join("tls.toml")).unwrap();
    assert!(tls.scenarios.iter().all(|s| s.transport.tls));
    assert_eq!(tls.required_features(), vec![Feature::Hello, Feature::Tls]);
    let h2 = Suite::load(&dir.join("h2.toml")).unwrap();
    let over = |p: Protocol| {
        h2.scenarios
            .iter()
            .filter(|s| s.transport.protocol == p)
            .count()
    };
    assert_eq!(
        (over(Protocol::H1), over(Protocol::H2), over(Protocol::H2c)),
        (4, 4, 4)
    );
    // h2 is over TLS, recorded as such; h2c is not.
    assert!(h2.scenarios.iter().all(
        |s| s.transport.tls == (s.transport.protocol == Protocol::H2)
            || s.name.starts_with("https")
    ));
}

/// GOOD with these lines added to its scenario.
fn with_scenario_keys(lines: &str) -> String {
    GOOD.replace(
        "requires = \"hello\"\n",
        &format!("requires = \"hello\"\n{lines}\n"),
    )
}

#[test]
fn protocol_keys_parse_into_types_and_h2_implies_tls() {
    let s = Suite::parse(
        &with_scenario_keys("protocol = \"h2\"\nstreams = 16"),
        Path::new("t"),
    )
    .unwrap();
    let sc = &s.scenarios[0];
    assert_eq!(
        (
            sc.transport.protocol,
            sc.transport.tls,
            sc.transport.streams
        ),
        (Protocol::H2, true, Some(16))
    );
    assert_eq!(sc.needs(), vec![Feature::Hello, Feature::H2]);
    let s = Suite::parse(
        &with_scenario_keys("tls = true\nnew_conn = true\ntls_resume = \"tickets\""),
        Path::new("t"),
    )
    .unwrap();
    assert_eq!(
        s.scenarios[0].transport.tls_resume,
        Some(TlsResume::Tickets)
    );
    assert_eq!(s.scenarios[0].needs(), vec![Feature::Hello, Feature::Tls]);
}

#[test]
fn protocol_keys_that_cannot_apply_are_refused_naming_the_key() {
    let key = |lines: &str| err(&with_scenario_keys(lines)).1;
    assert_eq!(key("protocol = \"h4\""), "scenario[1].protocol");
    assert_eq!(key("streams = 16"), "scenario[1].streams");
    assert_eq!(key("protocol = \"h2c\"\ntls = true"), "scenario[1].tls");
    assert_eq!(
        key("tls = true\ntls_resume = \"ids\""),
        "scenario[1].tls_resume"
    );
    assert_eq!(
        key("protocol = \"h2\"\nstreams = 4\nnew_conn = true"),
        "scenario[1].streams"
    );
    let (_, key, message) = err(&with_scenario_keys("protocol = \"h2c\"")
        .replace("duration = \"1s\"", "duration = \"1s\"\npipeline = 8"));
    assert_eq!(key, "profile[1].pipeline");
    assert!(
        message.contains("HTTP/2") && message.contains("`hello`"),
        "{message}"
    );
}

#[test]
fn every_builtin_scenario_exists_and_the_tls_ones_need_tls() {
    for name in Scenario::builtin_examples() {
        let name = name.as_str();
        let s = Scenario::builtin(name).unwrap();
        assert_eq!(s.name, name);
        let transport = s.transport_feature();
        match name.split('-').next() {
            Some("https") => assert_eq!(transport, Some(Feature::Tls), "{name}"),
            Some("h2") => assert_eq!(transport, Some(Feature::H2), "{name}"),
            Some("h2c") => assert_eq!(transport, Some(Feature::H2c), "{name}"),
            Some("h3") => assert_eq!(transport, Some(Feature::H3), "{name}"),
            _ => assert_eq!(transport, None, "{name}"),
        }
    }
    let resume = Scenario::builtin("https-resume").unwrap();
    assert!(resume.transport.new_conn && resume.transport.tls_resume == Some(TlsResume::Tickets));
}

#[test]
fn an_unknown_key_in_a_scenario_is_still_refused_beside_the_transport_keys() {
    let (_, key, message) = err(&with_scenario_keys("tls = true\nprotocl = \"h2\""));
    assert!(message.contains("protocl"), "{key}: {message}");
}

#[test]
fn a_scenario_limited_to_connections_no_profile_has_is_refused_and_one_that_matches_runs_there() {
    let text = "name = \"t\"\ndescription = \"d\"\nreproduces = \"none\"\nservers = \"all\"\n\n\
                [[scenario]]\nname = \"db\"\npaths = [\"/db\"]\nrequires = \"db\"\nconnections = [CONNS]\n\n\
                [[profile]]\nconnections = 16\nduration = \"1s\"\n\n\
                [[profile]]\nconnections = 64\nduration = \"1s\"\n";
    let bad = Suite::parse(&text.replace("CONNS", "32"), Path::new("suites/t.toml"));
    let e = bad.unwrap_err().to_string();
    assert!(e.contains("scenario[1].connections"), "{e}");
    let good = Suite::parse(&text.replace("CONNS", "64"), Path::new("suites/t.toml")).unwrap();
    let sc = &good.scenarios[0];
    let at: Vec<bool> = good.profiles.iter().map(|p| sc.runs_at(p)).collect();
    assert_eq!(at, [false, true]);
}

#[test]
fn the_database_suite_loads_records_its_pool_and_keeps_its_points_under_quick() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/database.toml");
    let mut s = Suite::load(&path).unwrap();
    assert_eq!(s.pool, Some(16));
    s.quicken();
    let points: usize = s
        .scenarios
        .iter()
        .map(|sc| s.profiles.iter().filter(|p| sc.runs_at(p)).count())
        .sum();
    // db and fortunes at 3 connection counts, queries and updates at 4 N each at one.
    assert_eq!(points, 2 * 3 + 8);
    assert!(s.scenarios.iter().all(|sc| sc.needs_database()));
}

#[test]
fn a_scenario_mix_is_read_relative_to_the_suite_file_and_made_absolute() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("mixes")).unwrap();
    std::fs::write(
        dir.path().join("mixes/m.toml"),
        "[[request]]\npath = \"/json\"\nweight = 2\n",
    )
    .unwrap();
    let suite = "name = \"m\"\ndescription = \"d\"\nreproduces = \"none\"\nservers = \"all\"\n\
                 [[scenario]]\nname = \"api\"\nmix = \"mixes/m.toml\"\n\
                 [[profile]]\nconnections = 4\nduration = \"1s\"\n";
    let path = dir.path().join("s.toml");
    std::fs::write(&path, suite).unwrap();
    let s = Suite::load(&path).unwrap();
    let sc = &s.scenarios[0];
    assert!(sc.work.mix.as_ref().unwrap().is_absolute());
    assert_eq!(
        sc.work.mix_requests.as_ref().unwrap().entries[0].path,
        "/json"
    );
    std::fs::write(&path, suite.replace("mixes/m.toml", "mixes/absent.toml")).unwrap();
    let err = Suite::load(&path).unwrap_err().to_string();
    assert!(
        err.contains("s.toml:7: scenario[1].mix: ") && err.contains("absent.toml"),
        "{err}"
    );
    let with_paths = suite.replace("mix =", "paths = [\"/\"]\nmix =");
    let err = Suite::parse(&with_paths, Path::new("s.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("give no paths"), "{err}");
}

#[test]
fn body_keys_parse_into_a_method_a_size_range_and_a_chunk_size() {
    let s = Suite::parse(
        &with_scenario_keys("body_size = \"500KB..20MB\"\nchunked = true\nchunk_size = \"64KiB\""),
        Path::new("t"),
    )
    .unwrap();
    let sc = &s.scenarios[0];
    assert_eq!(sc.work.body_size, Some("500KB..20MB".parse().unwrap()));
    assert_eq!(sc.request_method(), Some(crate::Method::Post));
    assert_eq!(sc.chunk(), Some(64 << 10));
    let s = Suite::parse(
        &with_scenario_keys("method = \"PUT\"\nbody = \"20\"\nchunked = true"),
        Path::new("t"),
    )
    .unwrap();
    let sc = &s.scenarios[0];
    assert_eq!(sc.request_method(), Some(crate::Method::Put));
    assert_eq!(sc.chunk(), Some(crate::spec::DEFAULT_CHUNK_SIZE));
    let plain = Suite::parse(GOOD, Path::new("t")).unwrap();
    assert_eq!(
        (
            plain.scenarios[0].request_method(),
            plain.scenarios[0].chunk()
        ),
        (None, None)
    );
}

#[test]
fn a_scenario_with_a_body_round_trips_through_json_as_env_json_records_it() {
    let s = Suite::parse(
        &with_scenario_keys("body_size = \"1MiB..2MiB\"\nchunked = true\nchunk_size = 4096"),
        Path::new("t"),
    )
    .unwrap();
    let json = serde_json::to_string(&s.scenarios[0]).unwrap();
    assert!(json.contains(r#""body_size":"1MiB..2MiB""#), "{json}");
    assert!(json.contains(r#""chunk_size":"4KiB""#), "{json}");
    let back: Scenario = serde_json::from_str(&json).unwrap();
    assert_eq!(back, s.scenarios[0]);
}

#[test]
fn a_backwards_body_range_names_the_file_the_line_and_the_key() {
    let text = with_scenario_keys("body_size = \"20MB..500KB\"");
    let e = Suite::parse(&text, Path::new("suites/t.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("suites/t.toml:11: scenario[1].body_size: "),
        "{e}"
    );
    assert!(e.contains("backwards"), "{e}");
}

#[test]
fn body_keys_that_cannot_apply_are_refused_naming_the_scenario_key() {
    let refused = |lines: &str| {
        let (_, key, message) = err(&with_scenario_keys(lines));
        (key, message)
    };
    let (key, message) = refused("chunked = true");
    assert_eq!(key, "scenario[1].chunked");
    assert!(message.contains("needs a body"), "{message}");
    let (key, _) = refused("chunk_size = \"16KB\"\nbody = \"20\"");
    assert_eq!(key, "scenario[1].chunk_size");
    let (key, _) = refused("body = \"20\"\nbody_size = \"1KB\"");
    assert_eq!(key, "scenario[1].body_size");
    let (key, message) = refused("body_size = \"2GiB\"");
    assert_eq!(key, "scenario[1].body_size");
    assert!(message.contains("at most 1GiB"), "{message}");
    let (key, message) = refused("protocol = \"h2c\"\nbody_size = \"1KB\"");
    assert_eq!(key, "scenario[1].body_size");
    assert!(message.contains("HTTP/2"), "{message}");
    let (key, _) = refused("protocol = \"h2\"\nbody = \"20\"\nchunked = true");
    assert_eq!(key, "scenario[1].chunked");
    let (key, message) = refused("method = \"HEAD\"");
    assert_eq!(key, "scenario[1].method");
    assert!(
        message.contains("HEAD is not a suite's method"),
        "{message}"
    );
}

#[test]
fn a_body_on_a_ws_tcp_or_mix_scenario_is_refused() {
    let ws = "name = \"t\"\ndescription = \"d\"\nreproduces = \"none\"\nservers = \"all\"\n\
              [[scenario]]\nname = \"ws\"\nmode = \"ws\"\nrequires = \"ws-echo\"\nbody_size = \"1KB\"\n\
              [[profile]]\nconnections = 4\nduration = \"1s\"\n";
    let e = Suite::parse(ws, Path::new("suites/ws.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("suites/ws.toml:9: scenario[1].body_size: applies to http only"),
        "{e}"
    );
    let tcp = ws.replace(
        "mode = \"ws\"\nrequires = \"ws-echo\"",
        "mode = \"tcp-pingpong\"\nsize = 64\nrequires = \"echo\"",
    );
    let e = Suite::parse(&tcp, Path::new("t")).unwrap_err().to_string();
    assert!(e.contains("applies to http only"), "{e}");
    let mix = ws.replace(
        "mode = \"ws\"\nrequires = \"ws-echo\"\nbody_size = \"1KB\"",
        "mix = \"m.toml\"\nmethod = \"POST\"",
    );
    let e = Suite::parse(&mix, Path::new("t")).unwrap_err().to_string();
    assert!(
        e.contains("scenario[1].method: a mix entry has its own"),
        "{e}"
    );
}

#[test]
fn a_wrong_type_in_a_scenario_key_names_its_line_and_key() {
    let (line, key, message) = err(&with_scenario_keys("reconnect_every = \"often\""));
    assert_eq!(
        (line, key.as_str()),
        (11, "scenario[1].reconnect_every"),
        "{message}"
    );
    let (_, key, _) = err(&with_scenario_keys("binary = 1"));
    assert_eq!(key, "scenario[1].binary");
}

#[test]
fn a_rule_of_the_load_names_the_suite_key_in_the_scenario_or_the_profile() {
    let (_, key, message) = err(&with_scenario_keys("body = \"\""));
    assert_eq!(key, "scenario[1].body");
    assert!(message.starts_with("must not be empty"), "{message}");
    let text = with_scenario_keys("new_conn = true")
        .replace("connections = 10", "connections = 10\nrate = 100");
    let (_, key, message) = err(&text);
    assert_eq!(key, "profile[1].rate");
    assert!(
        message.contains("cannot be combined with new_conn"),
        "{message}"
    );
    assert!(message.ends_with("(scenario `hello`)"), "{message}");
}
