//! Response framing, Connection: close and pipelining against in-process servers.

mod common;

use common::*;
use serverbench_engine::{Schedule, Stop};

#[test]
fn content_length_bodies_are_counted_without_errors() {
    let addr = http_server(|_, _| Reply::Send(ok("Hello World!")));
    let r = run(&http_config(addr, &["/hello"], true));
    assert!(r.requests > 100, "{r:?}");
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.status["200"], r.requests);
    assert!(r.latency_us.p50 > 0.0);
}

#[test]
fn chunked_bodies_are_counted_without_errors() {
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n7\r\n World!\r\n0\r\n\r\n".to_vec();
    let addr = http_server(move |_, _| Reply::Send(chunked.clone()));
    let r = run(&http_config(addr, &["/"], true));
    assert!(r.requests > 100, "{r:?}");
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
}

#[test]
fn close_delimited_bodies_complete_at_eof_and_reconnect() {
    let addr =
        http_server(|_, _| Reply::SendClose(b"HTTP/1.1 200 OK\r\n\r\nbody until close".to_vec()));
    let r = run(&http_config(addr, &["/"], true));
    assert!(r.requests > 10, "{r:?}");
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
}

#[test]
fn connection_close_means_reconnect_without_errors() {
    let resp = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok".to_vec();
    let addr = http_server(move |_, _| Reply::SendClose(resp.clone()));
    let r = run(&http_config(addr, &["/"], false));
    assert!(r.requests > 10, "{r:?}");
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
}

#[test]
fn pipelining_keeps_order_and_counts_every_response() {
    // Each path gets its own status and body: an out-of-order response would be a body error
    // under --verify and would skew the status counts.
    let addr = http_server(|_, path| {
        let code = match path {
            "/a" => 200,
            "/bb" => 201,
            _ => 202,
        };
        Reply::Send(
            format!(
                "HTTP/1.1 {code} X\r\nContent-Length: {}\r\n\r\n{path}",
                path.len()
            )
            .into_bytes(),
        )
    });
    let mut cfg = http_config(addr, &["/a", "/bb", "/ccc"], true);
    cfg.schedule = Schedule::ClosedLoop { depth: 16 };
    cfg.stop = Stop::Requests(3000);
    cfg.spec.connections = 3;
    let r = run(&cfg);
    assert_eq!(r.requests, 3000);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(
        (r.status["200"], r.status["201"], r.status["202"]),
        (1000, 1000, 1000)
    );
}

#[test]
fn several_urls_are_rotated_per_request() {
    let addr = http_server(|_, path| {
        if path == "/missing" {
            Reply::Send(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec())
        } else {
            Reply::Send(ok("hi"))
        }
    });
    let mut cfg = http_config(addr, &["/hello", "/missing"], false);
    cfg.stop = Stop::Requests(200);
    let r = run(&cfg);
    assert_eq!((r.status["200"], r.status["404"]), (100, 100));
    assert_eq!(r.errors.status, 100);
}
