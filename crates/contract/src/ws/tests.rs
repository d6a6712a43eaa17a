use super::fixture::{serve, Flaws};
use super::*;

/// The names of the checks a fixture with `flaws` fails, after running them all.
fn failed(flaws: Flaws) -> Vec<String> {
    check_all(serve(flaws))
        .into_iter()
        .filter(|c| !c.passed())
        .map(|c| c.name)
        .collect()
}

/// Asserts the fixture with `flaws` fails the check named `rule`, and returns its diffs.
fn fails_rule(flaws: Flaws, rule: &str) -> Vec<Diff> {
    let checks = check_all(serve(flaws));
    let check = checks.iter().find(|c| c.name == rule);
    let check = check.unwrap_or_else(|| panic!("no check {rule:?} in {checks:#?}"));
    assert!(!check.passed(), "{rule} passed: {checks:#?}");
    check.diffs.clone()
}

#[test]
fn a_correct_ws_server_passes_every_check() {
    let checks = check_all(serve(Flaws::default()));
    let failures: Vec<&Check> = checks.iter().filter(|c| !c.passed()).collect();
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(checks.len(), 14);
    assert!(quick(serve(Flaws::default())).passed());
}

#[test]
fn check_names_are_the_rules_in_the_order_run() {
    let names: Vec<String> = check_all(serve(Flaws::default()))
        .into_iter()
        .map(|c| c.name)
        .collect();
    let want = [
        names::UPGRADE,
        names::TEXT,
        names::BINARY,
        names::BINARY_64K,
        names::TEXT_64K,
        names::BURST,
        names::SPLIT,
        names::FRAGMENTED,
        names::PING,
        names::CLOSE,
        names::PLAIN_GET,
        names::UNMASKED,
        names::NO_DEFLATE,
        names::CONNECTIONS,
    ];
    assert_eq!(names, want);
}

#[test]
fn a_server_without_the_accept_key_fails_the_upgrade_and_is_not_checked_further() {
    let flaws = Flaws {
        no_accept: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::UPGRADE);
    assert_eq!(diffs[0].what, "Sec-WebSocket-Accept");
    assert_eq!(diffs[0].got, "no Sec-WebSocket-Accept");
    let names: Vec<String> = check_all(serve(flaws))
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, [names::UPGRADE, names::PLAIN_GET]);
}

#[test]
fn a_server_with_a_wrong_accept_key_fails_the_upgrade() {
    let flaws = Flaws {
        wrong_accept: true,
        ..Flaws::default()
    };
    assert_eq!(
        fails_rule(flaws, names::UPGRADE)[0].got,
        "a wrong Sec-WebSocket-Accept"
    );
}

#[test]
fn a_server_answering_200_to_the_upgrade_fails_the_upgrade_naming_the_status() {
    let flaws = Flaws {
        answers_200: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::UPGRADE);
    assert_eq!(diffs[0].what, "upgrade status");
    assert_eq!(diffs[0].got, "\"HTTP/1.1 200 OK\"");
}

#[test]
fn a_server_changing_the_echo_fails_every_echo_check() {
    let flaws = Flaws {
        changes_echo: true,
        ..Flaws::default()
    };
    let failed = failed(flaws);
    for rule in [
        names::TEXT,
        names::BINARY,
        names::BINARY_64K,
        names::TEXT_64K,
    ] {
        assert!(failed.iter().any(|f| f == rule), "{rule} not in {failed:?}");
    }
}

#[test]
fn a_server_reordering_messages_fails_the_burst_check() {
    let flaws = Flaws {
        reverses_batches: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::BURST);
    assert_eq!(diffs[0].what, "echo 1 of 5");
}

#[test]
fn a_server_needing_whole_frames_in_one_read_fails_the_split_check() {
    let flaws = Flaws {
        needs_whole_frame: true,
        ..Flaws::default()
    };
    fails_rule(flaws, names::SPLIT);
}

#[test]
fn a_server_not_reassembling_fragments_fails_the_fragmented_check() {
    let flaws = Flaws {
        echoes_fragments: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::FRAGMENTED);
    assert_eq!(diffs[0].got, "\"serverbench \"");
}

#[test]
fn a_server_without_pong_fails_the_ping_check() {
    let flaws = Flaws {
        no_pong: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::PING);
    assert!(diffs[0].got.starts_with("nothing within"), "{diffs:?}");
}

#[test]
fn a_server_answering_close_with_another_code_fails_the_close_check() {
    let flaws = Flaws {
        close_code: Some(close::GOING_AWAY),
        ..Flaws::default()
    };
    assert_eq!(fails_rule(flaws, names::CLOSE)[0].got, "close 1001");
}

#[test]
fn a_server_keeping_tcp_open_after_its_close_fails_the_close_check() {
    let flaws = Flaws {
        lingers_after_close: true,
        ..Flaws::default()
    };
    assert_eq!(fails_rule(flaws, names::CLOSE)[0].what, "TCP connection");
}

#[test]
fn a_server_accepting_a_plain_get_on_ws_fails_the_plain_get_check() {
    let flaws = Flaws {
        accepts_plain_get: true,
        ..Flaws::default()
    };
    assert_eq!(fails_rule(flaws, names::PLAIN_GET)[0].got, "200");
}

#[test]
fn a_server_echoing_an_unmasked_frame_fails_the_unmasked_check() {
    let flaws = Flaws {
        echoes_unmasked: true,
        ..Flaws::default()
    };
    assert_eq!(
        fails_rule(flaws, names::UNMASKED)[0].got,
        "the frame echoed"
    );
}

#[test]
fn a_server_sending_rsv1_unasked_fails_the_deflate_check_naming_the_bits() {
    let flaws = Flaws {
        sets_rsv1: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::NO_DEFLATE);
    assert!(diffs[0].got.contains("RSV bits 100"), "{diffs:?}");
}

#[test]
fn a_server_negotiating_deflate_unasked_fails_the_upgrade_naming_the_extension() {
    let flaws = Flaws {
        negotiates_deflate: true,
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::UPGRADE);
    assert_eq!(diffs[0].what, "Sec-WebSocket-Extensions");
}

#[test]
fn a_server_refusing_connections_beyond_50_fails_the_100_connections_check() {
    let flaws = Flaws {
        max_open: Some(50),
        ..Flaws::default()
    };
    let diffs = fails_rule(flaws, names::CONNECTIONS);
    assert!(diffs[0].what.starts_with("connection "), "{diffs:?}");
}

#[test]
fn the_text_payload_is_utf8_of_the_exact_length_with_multibyte_characters() {
    for len in [1, 24, 65536] {
        let t = text(len);
        assert_eq!(t.len(), len);
        assert!(std::str::from_utf8(&t).is_ok());
    }
    assert!(text(24).iter().any(|&b| b >= 0x80));
}
