//! The WebSocket driver against an in-process server that fails in each way the load must
//! count: an upgrade never answered, a close the client did not ask for (with a code, without
//! one), a connection ended without a close frame.

mod common;

use common::ws::{ws_config, ws_server, WsServe};
use common::*;
use serverbench_engine::Stop;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[test]
fn an_upgrade_never_answered_is_an_upgrade_timeout_and_the_connection_is_reopened() {
    let (addr, _) = ws_server(WsServe::NoUpgrade);
    let mut cfg = ws_config(addr);
    cfg.spec.timeout = Duration::from_millis(100);
    cfg.stop = Stop::Duration(Duration::from_millis(550));
    let r = run(&cfg);
    let ws = r.ws().unwrap();
    let timeouts = ws.upgrade_failures.get("timeout").copied().unwrap_or(0);
    // One connection, 100 ms each: a reopened connection times out again.
    assert!(timeouts >= 3, "{ws:?}");
    assert_eq!(
        (r.errors.protocol, r.errors.timeout),
        (timeouts, 0),
        "{:?}",
        r.errors
    );
    assert_eq!((r.requests, ws.upgrades), (0, 0));
    assert!(ws.upgrades_unanswered <= 1, "{ws:?}");
    assert!(r.no_success().unwrap().contains("timeout"), "{ws:?}");
}

#[test]
fn an_upgrade_still_unanswered_when_the_run_ends_is_counted() {
    let (addr, _) = ws_server(WsServe::NoUpgrade);
    let mut cfg = ws_config(addr);
    cfg.spec.connections = 2;
    let r = run(&cfg); // 300 ms, the default 2 s timeout
    let ws = r.ws().unwrap();
    assert_eq!((ws.upgrades_unanswered, r.errors.total()), (2, 0), "{ws:?}");
    let why = r.no_success().unwrap();
    assert!(why.contains("2 unanswered when the run ended"), "{why}");
}

#[test]
fn a_close_1011_after_50_echoes_is_counted_echoed_and_the_run_goes_on() {
    let serve = WsServe::CloseAfter {
        echoes: 50,
        code: Some(1011),
    };
    let (addr, seen) = ws_server(serve);
    let mut cfg = ws_config(addr);
    cfg.stop = Stop::Duration(Duration::from_millis(600));
    let r = run(&cfg);
    let ws = r.ws().unwrap();
    let closes = ws.close_codes.get("1011").copied().unwrap_or(0);
    assert!(closes >= 2, "{ws:?}");
    assert_eq!(ws.protocol_errors.get("unexpected close"), Some(&closes));
    assert_eq!(r.errors.protocol, closes, "{:?}", r.errors);
    // Each connection answered its 50 before the close, and a new one followed each close.
    assert!(
        r.requests >= 50 * closes,
        "{} for {closes} closes",
        r.requests
    );
    assert!(ws.upgrades > closes, "{ws:?}");
    assert!(seen.client_closes.load(Ordering::Relaxed) >= closes - 1);
}

#[test]
fn a_close_without_a_code_is_1005_and_an_end_without_a_close_frame_is_1006() {
    let cases = [
        (
            WsServe::CloseAfter {
                echoes: 5,
                code: None,
            },
            "1005",
        ),
        (WsServe::EndAfter { echoes: 5 }, "1006"),
    ];
    for (serve, code) in cases {
        let (addr, _) = ws_server(serve);
        let r = run(&ws_config(addr));
        let ws = r.ws().unwrap();
        let n = ws.close_codes.get(code).copied().unwrap_or(0);
        assert!(n > 0, "{serve:?}: {ws:?}");
        assert_eq!(ws.close_codes.len(), 1, "{serve:?}: {ws:?}");
        assert_eq!(ws.protocol_errors.get("unexpected close"), Some(&n));
    }
}

#[test]
fn a_reset_connection_is_a_read_error_and_a_close_1006() {
    let (addr, _) = ws_server(WsServe::ResetAfter { echoes: 5 });
    let r = run(&ws_config(addr));
    let ws = r.ws().unwrap();
    let n = ws.close_codes.get("1006").copied().unwrap_or(0);
    assert!(n > 0, "{ws:?}");
    assert_eq!(ws.close_codes.len(), 1, "{ws:?}");
    assert_eq!(r.errors.read, n, "{:?}", r.errors);
}

#[test]
fn a_server_closing_before_answering_the_upgrade_fails_it_by_that_cause() {
    let (addr, _) = ws_server(WsServe::CloseAtUpgrade);
    let r = run(&ws_config(addr));
    let ws = r.ws().unwrap();
    let n = ws.upgrade_failures.get("closed before answering").copied();
    assert!(n.unwrap_or(0) > 0, "{ws:?}");
    assert_eq!(Some(r.errors.protocol), n, "{:?}", r.errors);
    assert!(
        ws.close_codes.is_empty() && ws.protocol_errors.is_empty(),
        "{ws:?}"
    );
}
