//! Each error kind shows up in its own counter.

mod common;

use common::*;
use serverbench_engine::{EngineError, HttpSpec, Protocol};
use std::time::Duration;

#[test]
fn server_slower_than_timeout_gives_timeouts() {
    let addr = http_server(|_, _| Reply::After(Duration::from_millis(400), ok("late")));
    let mut cfg = http_config(addr, &["/"], false);
    cfg.spec.timeout = Duration::from_millis(50);
    cfg.stop = serverbench_engine::Stop::Duration(Duration::from_millis(400));
    let r = run(&cfg);
    assert!(r.errors.timeout > 0, "{:?}", r.errors);
    assert_eq!(r.requests, 0);
}

#[test]
fn resetting_server_gives_read_errors() {
    let addr = http_server(|n, _| {
        if n % 2 == 1 {
            Reply::Reset
        } else {
            Reply::Send(ok("x"))
        }
    });
    let r = run(&http_config(addr, &["/"], false));
    assert!(r.errors.read > 0, "{:?}", r.errors);
    assert!(r.requests > 0);
}

#[test]
fn refused_port_gives_connect_errors_and_a_refused_error() {
    let addr = refused_addr();
    let cfg = http_config(addr, &["/"], false);
    match serverbench_engine::run(&cfg, &|_| {}) {
        Err(EngineError::Refused { attempts, target }) => {
            assert_eq!(attempts, 2);
            assert!(target.contains(&addr.port().to_string()));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn wrong_body_with_verify_gives_body_errors() {
    let addr = http_server(|n, _| {
        Reply::Send(ok(if n % 10 == 9 {
            "Hello World?"
        } else {
            "Hello World!"
        }))
    });
    let r = run(&http_config(addr, &["/"], true));
    assert!(r.errors.body > 0, "{:?}", r.errors);
    assert_eq!(r.errors.total(), r.errors.body);
}

#[test]
fn wrong_body_without_verify_is_not_checked() {
    let addr = http_server(|n, _| Reply::Send(ok(if n % 2 == 1 { "b" } else { "a" })));
    let r = run(&http_config(addr, &["/"], false));
    assert_eq!(r.errors.body, 0);
}

#[test]
fn expected_status_is_not_an_error() {
    let addr =
        http_server(|_, _| Reply::Send(b"HTTP/1.1 404 NF\r\nContent-Length: 0\r\n\r\n".to_vec()));
    let mut cfg = http_config(addr, &["/"], false);
    if let Protocol::Http(HttpSpec { expect_status, .. }) = &mut cfg.protocol {
        expect_status.push(404);
    }
    let r = run(&cfg);
    assert!(r.status["404"] > 0);
    assert_eq!(r.errors.status, 0);
}

#[test]
fn garbage_response_gives_parse_errors() {
    let addr = http_server(|_, _| Reply::Send(b"NOT HTTP AT ALL\r\n\r\n".to_vec()));
    let r = run(&http_config(addr, &["/"], false));
    assert!(r.errors.parse > 0, "{:?}", r.errors);
}

#[test]
fn zero_connections_is_a_config_error_naming_the_flag() {
    let mut cfg = http_config(refused_addr(), &["/"], false);
    cfg.spec.connections = 0;
    let err = serverbench_engine::run(&cfg, &|_| {}).unwrap_err();
    assert!(err.to_string().contains("--connections"), "{err}");
}
