use super::fixture::{serve, serve_tls, Flaws};
use super::*;
use crate::tls::TlsClient;
use crate::tls_fixture::TestCert;

/// The checks against a fixture with `flaws`, on h2c.
fn run_against(flaws: Flaws) -> Vec<Check> {
    check_all(Transport::Cleartext(serve(flaws)))
}

/// Asserts the fixture with `flaws` fails the check named `rule` (and only the rules in
/// `also`), and returns the rule's diffs.
fn fails_rule(flaws: Flaws, rule: &str, also: &[&str]) -> Vec<Diff> {
    let checks = run_against(flaws);
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| !c.passed())
        .map(|c| c.name.as_str())
        .collect();
    let mut want = vec![rule];
    want.extend(also);
    want.sort();
    let mut got = failed.clone();
    got.sort();
    assert_eq!(got, want, "{checks:#?}");
    checks.into_iter().find(|c| c.name == rule).unwrap().diffs
}

/// The checks that call `Sum` and so fail with any flaw of its answer.
const SUMS: [&str; 3] = [names::SUM, names::GZIP, names::CONCURRENT];

#[test]
fn a_correct_grpc_server_passes_every_check_in_order() {
    let checks = run_against(Flaws::default());
    let failures: Vec<&Check> = checks.iter().filter(|c| !c.passed()).collect();
    assert!(failures.is_empty(), "{failures:#?}");
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    let want = [
        names::CONNECTION,
        names::SUM,
        names::ECHO,
        names::STREAM,
        names::CLIENT_STREAM,
        names::BIDI,
        names::UNKNOWN,
        names::MALFORMED,
        names::DEADLINE,
        names::TOO_LARGE,
        names::GZIP,
        names::CONCURRENT,
        names::HTTP11,
    ];
    assert_eq!(names, want);
    assert!(quick(Transport::Cleartext(serve(Flaws::default()))).passed());
}

#[test]
fn a_server_answering_http_200_with_grpc_status_13_fails_the_sums() {
    let flaws = Flaws {
        status_13: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::SUM, &SUMS[1..]);
    assert_eq!(diffs[0].what, "Sum(13, 42): grpc-status");
    assert_eq!(diffs[0].expected, "0 OK");
    assert_eq!(diffs[0].got, "13 INTERNAL");
}

#[test]
fn a_wrong_sum_fails_the_sums_with_both_results() {
    let flaws = Flaws {
        wrong_sum: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::SUM, &SUMS[1..]);
    assert_eq!(
        diffs[0].render(),
        "Sum(13, 42): result: expected 55, got 56"
    );
}

#[test]
fn a_response_without_trailers_fails_by_the_protocol() {
    let flaws = Flaws {
        no_trailers: true,
        ..Flaws::default()
    };
    let also = [
        names::ECHO,
        names::STREAM,
        names::CLIENT_STREAM,
        SUMS[1],
        SUMS[2],
    ];
    let diffs = fails_rule(flaws, names::SUM, &also);
    assert_eq!(diffs[0].what, "Sum(13, 42): trailers");
}

#[test]
fn a_message_longer_than_its_prefix_says_fails_the_framing() {
    let flaws = Flaws {
        long_prefix: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::SUM, &SUMS[1..]);
    assert_eq!(diffs[0].what, "Sum(13, 42): message framing");
    assert!(diffs[0].got.contains("ended inside message 0"), "{diffs:?}");
}

#[test]
fn a_wrong_content_type_fails_every_call() {
    let flaws = Flaws {
        wrong_content_type: true,
        ..Flaws::default()
    };
    let checks = run_against(flaws);
    let passed: Vec<&str> = checks
        .iter()
        .filter(|c| c.passed())
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(passed, [names::CONNECTION, names::HTTP11]);
}

#[test]
fn an_echo_cut_at_64_kib_fails_the_echo_at_1_mib() {
    let flaws = Flaws {
        cuts_echo: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::ECHO, &[]);
    assert!(
        diffs[0].what.starts_with("Echo of 1048576 B: data"),
        "{diffs:?}"
    );
}

#[test]
fn chunks_out_of_order_fail_the_server_stream() {
    let flaws = Flaws {
        swaps_chunks: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::STREAM, &[]);
    assert_eq!(
        diffs[0].render(),
        "chunk 0: expected seq 0, 32 bytes of 0x00, got seq 1, 32 bytes of 0x01"
    );
}

#[test]
fn a_client_stream_answered_before_the_client_ends_its_side_fails_by_name() {
    let flaws = Flaws {
        answers_early: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::CLIENT_STREAM, &[]);
    assert_eq!(diffs[0].what, "reply", "{diffs:?}");
    assert_eq!(diffs[0].expected, "only after the client ends its side");
    assert!(
        diffs[0].got.ends_with("bytes of a reply before it"),
        "{diffs:?}"
    );
}

#[test]
fn a_server_without_client_stream_fails_it_with_its_status() {
    let flaws = Flaws {
        no_client_stream: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::CLIENT_STREAM, &[]);
    assert_eq!(
        diffs[0].render(),
        "grpc-status: expected 0 OK, got 12 UNIMPLEMENTED: unknown method"
    );
}

#[test]
fn a_client_stream_counting_whole_messages_as_data_fails_with_both_counts() {
    let flaws = Flaws {
        miscounts: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::CLIENT_STREAM, &[]);
    let render = diffs[0].render();
    let want = "ClientStream of 1000 chunks: reply: expected Count{n=1000, size=314680}, got Count{n=1000, size=3";
    assert!(render.starts_with(want), "{render}");
}

#[test]
fn a_bidi_server_that_waits_for_the_end_of_the_stream_fails_bidi_echo() {
    let flaws = Flaws {
        bidi_waits: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::BIDI, &[]);
    assert_eq!(diffs[0].what, "echo");
}

#[test]
fn an_unknown_method_answered_with_http_404_fails_unimplemented() {
    let flaws = Flaws {
        unknown_404: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::UNKNOWN, &[]);
    assert_eq!(diffs[0].render(), "HTTP :status: expected 200, got 404");
}

#[test]
fn a_lenient_decoder_fails_the_malformed_message() {
    let flaws = Flaws {
        lenient: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::MALFORMED, &[]);
    assert_eq!(
        diffs[0].render(),
        "grpc-status: expected 13 INTERNAL or 3 INVALID_ARGUMENT, got 0 OK"
    );
}

#[test]
fn a_server_ignoring_the_deadline_fails_it() {
    let flaws = Flaws {
        ignores_deadline: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::DEADLINE, &[]);
    assert_eq!(diffs[0].expected, "4 DEADLINE_EXCEEDED");
    assert!(diffs[0].got.starts_with("0 OK after 2."), "{diffs:?}");
}

#[test]
fn a_server_resetting_a_call_past_its_deadline_with_cancel_passes_it() {
    let flaws = Flaws {
        resets_on_deadline: true,
        ..Flaws::default()
    };
    let checks = run_against(flaws);
    let deadline = checks.iter().find(|c| c.name == names::DEADLINE).unwrap();
    assert!(deadline.passed(), "{deadline:#?}");
    let note = deadline.note.as_deref().unwrap_or("");
    assert!(
        note.starts_with("ended by RST_STREAM (CANCEL) after 0.0"),
        "{note}"
    );
}

#[test]
fn a_server_without_a_message_limit_fails_resource_exhausted() {
    let flaws = Flaws {
        no_limit: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::TOO_LARGE, &[]);
    assert_eq!(diffs[0].got, "0 OK");
}

#[test]
fn a_server_without_gzip_fails_the_compressed_request() {
    let flaws = Flaws {
        no_gzip: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::GZIP, &[]);
    assert_eq!(diffs[0].got, "12 UNIMPLEMENTED: no gzip");
}

#[test]
fn a_server_resetting_streams_beyond_ten_fails_the_concurrent_calls() {
    let flaws = Flaws {
        max_open: Some(10),
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::CONCURRENT, &[]);
    assert!(
        diffs.last().unwrap().what == "calls that failed",
        "{diffs:?}"
    );
}

#[test]
fn a_server_answering_http_1_1_with_200_fails_the_refusal() {
    let flaws = Flaws {
        answers_http11: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::HTTP11, &[]);
    assert_eq!(diffs[0].got, "HTTP/1.1 200 OK");
}

#[test]
fn nothing_listening_fails_the_connection_and_runs_no_other_check() {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap();
    let checks = check_all(Transport::Cleartext(addr));
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].name, names::CONNECTION);
    assert!(!checks[0].passed());
}

#[test]
fn a_grpc_only_server_gets_the_grpc_checks_alone_and_tls_without_its_port_fails_by_name() {
    let addr = serve(Flaws::default());
    let targets = crate::Targets::new("127.0.0.1", Some(addr.port()), None).unwrap();
    let features = [
        serverbench_model::Feature::Grpc,
        serverbench_model::Feature::Tls,
    ];
    let checks = crate::check_all(&targets, &features);
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    assert!(names.iter().all(|n| n.starts_with("grpc ")), "{names:#?}");
    assert_eq!(names.len(), 14, "{names:#?}");
    let last = checks.last().unwrap();
    assert_eq!(last.name, "grpc over TLS");
    assert_eq!(last.diffs[0].expected, "TLS_PORT to check grpc on");
}

#[test]
fn over_tls_with_alpn_h2_every_check_passes_but_http_1_1_and_the_names_say_over_tls() {
    let cert = TestCert::new();
    let addr = serve_tls(
        Flaws::default(),
        cert.server_config(&[b"h2"], rustls::ALL_VERSIONS),
    );
    let client = TlsClient::new(&cert.target(addr), &[b"h2"], None).unwrap();
    let checks = check_all(Transport::Tls(addr, &client));
    let failures: Vec<&Check> = checks.iter().filter(|c| !c.passed()).collect();
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(checks.len(), 12, "no HTTP/1.1 check over TLS");
    assert!(checks.iter().all(|c| c.name.ends_with(" over TLS")));
    let note = checks[0].note.as_deref().unwrap_or("");
    assert!(note.ends_with("ALPN h2"), "{note}");
}

#[test]
fn a_tls_server_offering_only_http_1_1_fails_the_grpc_connection_and_nothing_else_runs() {
    let cert = TestCert::new();
    let config = cert.server_config(&[b"http/1.1"], rustls::ALL_VERSIONS);
    let addr = serve_tls(Flaws::default(), config);
    let client = TlsClient::new(&cert.target(addr), &[b"h2"], None).unwrap();
    let checks = check_all(Transport::Tls(addr, &client));
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert_eq!(checks[0].name, format!("{} over TLS", names::CONNECTION));
    assert!(!checks[0].passed());
}
