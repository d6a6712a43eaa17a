//! `setup`: runs once, skips while the stamp matches, skips unavailable servers with the reason.

mod common;

use common::{fixture_paths, server};
use serverbench_catalog::setup::{setup_servers, Outcome, SetupEvent, SetupOptions};
use serverbench_catalog::{availability, Availability};

fn opts() -> SetupOptions {
    SetupOptions {
        force: false,
        no_apt: true,
    }
}

#[test]
fn setup_runs_once_and_is_skipped_while_the_stamp_matches() {
    let (paths, cache) = fixture_paths();
    let srv = server("python/setup-counter");
    assert_eq!(availability(&srv, &paths), Availability::NotSetUp);
    let mut events = Vec::new();
    let first = setup_servers(&[&srv], &paths, &opts(), &mut |e| events.push(e));
    assert_eq!(first[0].outcome, Outcome::Built);
    assert!(events.iter().any(
        |e| matches!(e, SetupEvent::StepFinished { step, .. } if step.to_string() == "setup")
    ));
    assert_eq!(availability(&srv, &paths), Availability::Ready);
    let second = setup_servers(&[&srv], &paths, &opts(), &mut |_| {});
    assert_eq!(second[0].outcome, Outcome::UpToDate);
    let count = std::fs::read_to_string(cache.path().join("setup-count")).unwrap();
    assert_eq!(count.lines().count(), 1);
    let forced = SetupOptions {
        force: true,
        ..opts()
    };
    setup_servers(&[&srv], &paths, &forced, &mut |_| {});
    let count = std::fs::read_to_string(cache.path().join("setup-count")).unwrap();
    assert_eq!(count.lines().count(), 2);
}

#[test]
fn unavailable_and_missing_toolchains_are_skipped_not_failed() {
    let (paths, _cache) = fixture_paths();
    let a = server("python/unavailable");
    let b = server("python/missing-cmd");
    let mut events = Vec::new();
    let out = setup_servers(&[&a, &b], &paths, &opts(), &mut |e| events.push(e));
    assert_eq!(
        out[0].outcome,
        Outcome::Skipped("unavailable: needs a GPU".into())
    );
    match &out[1].outcome {
        Outcome::Skipped(r) => assert!(r.contains("serverbench-no-such-tool"), "{r}"),
        other => panic!("expected a skip, got {other:?}"),
    }
    assert!(out.iter().all(|o| !o.failed()));
    let finished = |e: &&SetupEvent| matches!(e, SetupEvent::Finished { .. });
    assert_eq!(
        events.iter().filter(finished).count(),
        2,
        "one end per server"
    );
    assert_eq!(events.len(), 4, "a skip each, then its end: {events:?}");
}

#[test]
fn files_written_by_setup_into_the_folder_do_not_invalidate_the_stamp() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("servers/python/gen");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = std::fs::read_to_string(
        common::fixture_root().join("servers/python/setup-counter/server.toml"),
    )
    .unwrap()
    .replace("python/setup-counter", "python/gen")
    .replace("echo ran >>", "date +%N > generated.txt; echo ran >>");
    std::fs::write(dir.join("server.toml"), manifest).unwrap();
    let paths = serverbench_catalog::paths::Paths::new(root.path(), root.path().join("cache"));
    let srv = serverbench_catalog::load_server("python/gen", &dir).unwrap();
    let first = setup_servers(&[&srv], &paths, &opts(), &mut |_| {});
    assert_eq!(first[0].outcome, Outcome::Built);
    assert!(dir.join("generated.txt").exists());
    assert_eq!(availability(&srv, &paths), Availability::Ready);
    let second = setup_servers(&[&srv], &paths, &opts(), &mut |_| {});
    assert_eq!(second[0].outcome, Outcome::UpToDate);
}
