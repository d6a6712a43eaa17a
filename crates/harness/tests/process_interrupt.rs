//! `stop_all_registered` (its own test binary: it stops every server of the process).

mod common;

use common::{fixture_paths, server};
use serverbench_harness::process::{self, group_members, StartOptions};

#[test]
fn stop_all_registered_kills_every_live_group() {
    let (paths, cache) = fixture_paths();
    let mut groups = Vec::new();
    let mut procs = Vec::new();
    for (i, id) in ["python/good", "python/slow-stop"].into_iter().enumerate() {
        let srv = server(id);
        let port = process::free_port("127.0.0.1").unwrap();
        let log = cache.path().join(format!("{i}.log"));
        let p = process::start(&srv, &paths, &StartOptions::new(&srv, port, None, log)).unwrap();
        groups.push(p.pgid());
        procs.push(p);
    }
    process::stop_all_registered();
    for g in groups {
        assert!(group_members(g).is_empty(), "group {g} survived");
    }
}
