//! Tests of [`History::import`] over synthetic folders.

use crate::synth::{write_run, RunSpec};
use crate::{History, ImportOutcome, Source};
use std::io::Write;

fn spec(seed: u64, at_s: u64) -> RunSpec {
    RunSpec {
        seed,
        at_s,
        ..RunSpec::default()
    }
}

#[test]
fn importing_a_folder_twice_changes_nothing_the_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let run = write_run(dir.path(), "r1", &spec(1, 0)).unwrap();
    let mut h = History::open(&dir.path().join("h.db")).unwrap();
    let first = h.import(&run, &Source::default()).unwrap();
    assert_eq!(
        (first.outcome, first.cells, first.laps),
        (ImportOutcome::Added, 1, 5)
    );
    let again = h.import(&run, &Source::default()).unwrap();
    assert_eq!(again.outcome, ImportOutcome::Unchanged);
    let keys = h.series_keys().unwrap();
    assert_eq!(keys.len(), 1);
    let points = h.series(&keys[0]).unwrap();
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].laps.rps.len(), 5);
    let est = points[0].stats.rps.unwrap();
    assert!(est.low <= est.median && est.median <= est.high);
}

#[test]
fn a_half_written_folder_imports_its_finished_laps_and_says_what_it_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let run = write_run(dir.path(), "r1", &spec(1, 0)).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(run.join("results.jsonl"))
        .unwrap();
    f.write_all(b"{\"suite\": \"quick\", \"server\": \"mi")
        .unwrap();
    let mut h = History::open(&dir.path().join("h.db")).unwrap();
    let report = h.import(&run, &Source::default()).unwrap();
    assert_eq!(report.laps, 5);
    assert!(
        report.skipped.iter().any(|s| s.contains("cut-short")),
        "{:?}",
        report.skipped
    );
}

#[test]
fn a_folder_with_more_laps_than_before_replaces_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(1, 0);
    s.laps = 3;
    let run = write_run(dir.path(), "r1", &s).unwrap();
    let mut h = History::open(&dir.path().join("h.db")).unwrap();
    h.import(&run, &Source::default()).unwrap();
    s.laps = 5;
    write_run(dir.path(), "r1", &s).unwrap();
    let again = h.import(&run, &Source::default()).unwrap();
    assert_eq!((again.outcome, again.laps), (ImportOutcome::Updated, 5));
    let keys = h.series_keys().unwrap();
    assert_eq!(h.series(&keys[0]).unwrap().len(), 1);
}

#[test]
fn a_corrupt_results_file_is_refused_in_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = write_run(dir.path(), "r1", &spec(1, 0)).unwrap();
    let text = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    std::fs::write(run.join("results.jsonl"), format!("garbage\n{text}")).unwrap();
    let mut h = History::open(&dir.path().join("h.db")).unwrap();
    let err = h.import(&run, &Source::default()).unwrap_err().to_string();
    assert!(
        err.contains("results.jsonl:1") && !err.contains('\n'),
        "{err}"
    );
    assert!(h.series_keys().unwrap().is_empty());
}

#[test]
fn a_folder_that_is_not_a_results_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = History::open(&dir.path().join("h.db")).unwrap();
    let err = h
        .import(dir.path(), &Source::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("no results.jsonl"), "{err}");
}

#[test]
fn series_are_never_pooled_across_settings_or_testbeds() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = History::open(&dir.path().join("h.db")).unwrap();
    let a = write_run(dir.path(), "a", &spec(1, 0)).unwrap();
    let mut other = spec(2, 100);
    other.connections = 256;
    let b = write_run(dir.path(), "b", &other).unwrap();
    let c = write_run(dir.path(), "c", &spec(3, 200)).unwrap();
    let mut env = serverbench_results::read_env(&c).unwrap().unwrap();
    env.machine.cpu_model = Some("Another CPU".into());
    env.write(&c.join("env.json")).unwrap();
    for d in [&a, &b, &c] {
        h.import(d, &Source::default()).unwrap();
    }
    let keys = h.series_keys().unwrap();
    assert_eq!(keys.len(), 3, "{keys:?}");
    assert!(keys.iter().all(|k| h.series(k).unwrap().len() == 1));
}

#[test]
fn the_source_given_wins_over_env_json() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(1, 0);
    s.commit = Some("1111111111".into());
    let run = write_run(dir.path(), "r1", &s).unwrap();
    let mut h = History::open(&dir.path().join("h.db")).unwrap();
    let source = Source {
        commit: Some("abcdef0123".into()),
        branch: Some("main".into()),
        dirty: None,
    };
    h.import(&run, &source).unwrap();
    let keys = h.series_keys().unwrap();
    let p = &h.series(&keys[0]).unwrap()[0];
    assert_eq!(p.commit.as_deref(), Some("abcdef0123"));
    assert_eq!(p.branch.as_deref(), Some("main"));
    assert_eq!(p.label(), "abcdef0");
}

#[test]
fn two_writers_at_once_both_land() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let runs: Vec<_> = (0..8)
        .map(|i| write_run(dir.path(), &format!("r{i}"), &spec(i, i * 100)).unwrap())
        .collect();
    let threads: Vec<_> = runs
        .chunks(4)
        .map(|chunk| {
            let (db, chunk) = (db.clone(), chunk.to_vec());
            std::thread::spawn(move || {
                for run in chunk {
                    let mut h = History::open(&db).unwrap();
                    h.import(&run, &Source::default()).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let h = History::open(&db).unwrap();
    let keys = h.series_keys().unwrap();
    assert_eq!(h.series(&keys[0]).unwrap().len(), 8);
}

#[test]
fn a_fixed_rate_run_records_each_laps_cpu_per_request_and_a_closed_loop_run_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = History::open(&dir.path().join("h.db")).unwrap();
    let at_rate = RunSpec::at_rate(40.0, 2_000.0, 1);
    let fixed = write_run(dir.path(), "fixed", &at_rate).unwrap();
    let closed = write_run(dir.path(), "closed", &spec(2, 60)).unwrap();
    h.import(&fixed, &Source::default()).unwrap();
    h.import(&closed, &Source::default()).unwrap();
    let keys = h.series_keys().unwrap();
    assert_eq!(keys.len(), 2, "a rate is a series of its own: {keys:?}");
    let points: Vec<_> = keys.iter().map(|k| h.series(k).unwrap()).collect();
    let (with, without): (Vec<_>, Vec<_>) = points.iter().partition(|p| !p[0].laps.cpu.is_empty());
    assert_eq!((with.len(), without.len()), (1, 1));
    let cost = &with[0][0];
    assert_eq!(cost.laps.cpu.len(), 5);
    let est = cost.stats.cpu.unwrap();
    assert!((est.median - 40.0).abs() < 4.0, "{est:?}");
    assert!(without[0][0].stats.cpu.is_none());
}

#[test]
fn a_history_of_schema_2_reads_its_cells_and_records_cost_after_migrating() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let h = History::open_at(&path, 2).unwrap();
    // What a serverbench of schema 2 wrote: stats without `cpu`, laps without `cpu_us`.
    h.conn
        .execute_batch(
            "INSERT INTO testbeds (id, fingerprint) VALUES (1, 'tb');
             INSERT INTO runs (id, uid, dir, suite, settings_hash, started_at, testbed_id, laps)
             VALUES (1, 'old@t', 'old', 'quick', 's', '2026-01-01T00:00:00Z', 1, 5);
             INSERT INTO cells (id, run_id, server, scenario, profile, transport, settings_hash,
                                stats)
             VALUES (1, 1, 'mine', 'hello', 'c64', 'h1', 's',
                     '{\"rps\":{\"median\":2.0,\"low\":1.0,\"high\":3.0},\"p99\":null}');
             INSERT INTO laps (cell_id, lap, rps, p99_us) VALUES (1, 1, 1.0, 9.0), (1, 2, 2.0, 9.0),
                 (1, 3, 2.0, 9.0), (1, 4, 3.0, 9.0), (1, 5, 2.0, 9.0);",
        )
        .unwrap();
    drop(h);
    let mut h = History::open(&path).unwrap();
    let keys = h.series_keys().unwrap();
    let p = h.series(&keys[0]).unwrap();
    assert_eq!(p[0].laps.rps.len(), 5);
    assert!(p[0].laps.cpu.is_empty() && p[0].stats.cpu.is_none());
    let at_rate = RunSpec {
        rate: Some(1_000.0),
        ..spec(3, 3600)
    };
    let new = write_run(dir.path(), "new", &at_rate).unwrap();
    h.import(&new, &Source::default()).unwrap();
    assert_eq!(h.series_keys().unwrap().len(), 2);
}
