//! Receive low-water marks: waking once per window of responses must not lose, reorder or
//! stall responses, whatever sizes the server answers with.

mod common;

use common::*;
use serverbench_engine::{Protocol, Reads, Schedule, Stop};
use std::time::Duration;

fn path_reply(path: &str) -> Reply {
    Reply::Send(ok(&path.repeat(40)))
}

#[test]
fn window_and_eager_reads_count_the_same_pipelined_responses() {
    let addr = http_server(|_, path| path_reply(path));
    for reads in [Reads::Window, Reads::Eager] {
        let mut cfg = http_config(addr, &["/a", "/bb"], true);
        cfg.schedule = Schedule::ClosedLoop { depth: 16 };
        cfg.stop = Stop::Requests(4000);
        cfg.reads = reads;
        let r = run(&cfg);
        assert_eq!(r.requests, 4000, "{reads:?}");
        assert_eq!(r.errors.total(), 0, "{reads:?}: {:?}", r.errors);
        assert_eq!(r.status["200"], 4000, "{reads:?}");
    }
}

#[test]
fn responses_that_shrink_below_earlier_ones_still_complete_without_timeouts() {
    // The first 200 responses teach the engine a size; the rest are smaller, so the mark
    // predicted for the next window is more than will ever arrive until the guard drops it.
    let addr = http_server(|n, _| {
        let body = if n < 200 {
            "x".repeat(400)
        } else {
            "y".repeat(10)
        };
        Reply::Send(ok(&body))
    });
    let mut cfg = http_config(addr, &["/"], false);
    cfg.schedule = Schedule::ClosedLoop { depth: 8 };
    cfg.spec.connections = 1;
    cfg.stop = Stop::Requests(600);
    cfg.spec.timeout = Duration::from_secs(1);
    let r = run(&cfg);
    assert_eq!(r.requests, 600);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
}

#[test]
fn a_response_larger_than_a_segment_is_read_whole_and_verified() {
    let body = "z".repeat(300_000);
    let response = ok(&body);
    let size = response.len() as u64;
    let addr = http_server(move |_, _| Reply::Send(response.clone()));
    let mut cfg = http_config(addr, &["/big"], true);
    cfg.stop = Stop::Requests(40);
    let r = run(&cfg);
    assert_eq!(r.requests, 40);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.bytes_read, 40 * size);
}

#[test]
fn pipelined_pingpong_echoes_every_message_in_full() {
    let addr = echo_server();
    let proto = Protocol::TcpPingPong { size: 1000 };
    let mut cfg = base_config(addr, vec![addr.to_string()], proto);
    cfg.schedule = Schedule::ClosedLoop { depth: 4 };
    cfg.stop = Stop::Requests(2000);
    let r = run(&cfg);
    assert_eq!(r.requests, 2000);
    assert_eq!(r.bytes_read, 2000 * 1000);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
}
