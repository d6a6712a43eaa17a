//! `--io`: a kernel that refuses io_uring (simulated with SERVERBENCH_IO_URING_REFUSE=1, set
//! for this test binary only) runs the load on epoll, says so in the result's notes, and is
//! never an error; `auto` runs on epoll without a note.

mod common;

use common::*;
use serverbench_model::{Io, IoBackend};

#[test]
fn a_refused_ring_falls_back_to_epoll_with_one_note_and_no_error() {
    std::env::set_var(serverbench_engine::uring::REFUSE_ENV, "1");
    let addr = http_server(|_, _| Reply::Send(ok("hi")));
    let mut cfg = http_config(addr, &["/"], false);
    cfg.spec.io = Io::Uring;
    cfg.threads = 2;
    let r = serverbench_engine::run(&cfg, &|_| {}).unwrap();
    assert_eq!(r.io, Some(IoBackend::Epoll));
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    assert!(r.notes[0].contains("io_uring refused"), "{:?}", r.notes);
    assert!(r.notes[0].contains("epoll"), "{:?}", r.notes);
    assert!(r.requests > 0 && r.errors.total() == 0, "{r:?}");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["io"], "epoll");
    assert_schema_valid(&json);
}

#[test]
fn auto_runs_on_epoll_and_notes_nothing() {
    let addr = http_server(|_, _| Reply::Send(ok("hi")));
    let mut cfg = http_config(addr, &["/"], false);
    cfg.spec.io = Io::Auto;
    let r = serverbench_engine::run(&cfg, &|_| {}).unwrap();
    assert_eq!(r.io, Some(IoBackend::Epoll));
    assert!(r.notes.is_empty(), "{:?}", r.notes);
}
