//! End-to-end runs of small suites against the fixture catalog in `fixtures/run-catalog`
//! (Python stdlib servers) with `fakeload.py` standing in for `serverbench load --json`.

use serverbench_analysis::until_ci::CellState;
use serverbench_catalog::paths::Paths;
use serverbench_catalog::Catalog;
use serverbench_harness::run::{self, Event, RunOptions, RunOutcome};
use serverbench_model::suite::Suite;
use serverbench_results::record::LapStatus;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-catalog")
}

fn suite(servers: &[&str], laps: u32, warmup: &str) -> Suite {
    let list: Vec<String> = servers.iter().map(|s| format!("{s:?}")).collect();
    let text = format!(
        "name = \"t\"\ndescription = \"d\"\nreproduces = \"none\"\nservers = [{}]\nlaps = {laps}\n\
         warmup = \"{warmup}\"\n[[scenario]]\nname = \"hello\"\npaths = [\"/hello\"]\nrequires = \"hello\"\n\
         [[profile]]\nname = \"c2\"\nconnections = 2\nduration = \"500ms\"\n",
        list.join(", ")
    );
    Suite::parse(&text, Path::new("t.toml")).unwrap()
}

fn options(suite: Suite, results: &Path) -> RunOptions {
    RunOptions {
        suite,
        results_parent: results.to_path_buf(),
        resume: None,
        pinning: run::pinning(None, None, &serverbench_machine::affinity::affinity_cpus()),
        host: "127.0.0.1".into(),
        serverbench_exe: fixtures().join("fakeload.py"),
        cancel: Arc::new(AtomicBool::new(false)),
        quick_verify: true,
        attached: Vec::new(),
        hosts: None,
        database: Default::default(),
        doctor: None,
        build: Default::default(),
    }
}

fn go(opts: &RunOptions, cache: &Path, on_event: &mut dyn FnMut(Event)) -> RunOutcome {
    let catalog = Catalog::load(&fixtures()).unwrap();
    let paths = Paths::new(fixtures(), cache);
    run::run(&catalog, &paths, opts, on_event).unwrap()
}

fn order(out: &RunOutcome) -> Vec<(String, u32)> {
    out.records
        .iter()
        .map(|r| (r.server.clone(), r.lap))
        .collect()
}

#[test]
fn two_servers_run_interleaved_laps_and_an_unknown_server_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(
        suite(
            &["python/fast", "python/nowhere", "python/second"],
            2,
            "200ms",
        ),
        tmp.path(),
    );
    let mut events = Vec::new();
    let out = go(&opts, &tmp.path().join("cache"), &mut |e| events.push(e));
    let want: Vec<(String, u32)> = [
        ("python/fast", 1),
        ("python/second", 1),
        ("python/fast", 2),
        ("python/second", 2),
    ]
    .iter()
    .map(|(s, l)| (s.to_string(), *l))
    .collect();
    assert_eq!(order(&out), want);
    for r in &out.records {
        assert_eq!(r.status, LapStatus::Ok, "{:?}", r.failure);
        let stats = r.server_stats.as_ref().unwrap();
        assert!(stats.samples >= 2 && stats.rss_peak_mb > 1.0, "{stats:?}");
        assert!(r.load.as_ref().unwrap().requests.unwrap() > 0);
    }
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::ServerSkipped { server, why }
        if server == "python/nowhere" && why.contains("not in the catalog"))));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::WarmupStarted { .. })));
    let env: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.dir.join("env.json")).unwrap()).unwrap();
    assert_eq!(env["suite"]["laps"], 2);
    assert!(env["load_tool"]
        .as_str()
        .is_some_and(|t| t.starts_with("serverbench ")));
    assert!(env["pinning"]["workers"].as_u64().unwrap() >= 1);
    assert_eq!(env["skipped"][0]["server"], "python/nowhere");
    assert!(out.dir.join("logs/python__fast.lap2.log").is_file());
}

#[test]
fn a_server_killed_mid_lap_is_recorded_failed_and_the_next_server_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(suite(&["python/dies", "python/fast"], 1, "0s"), tmp.path());
    let out = go(&opts, &tmp.path().join("cache"), &mut |_| {});
    assert_eq!(
        order(&out),
        vec![("python/dies".into(), 1), ("python/fast".into(), 1)]
    );
    let dead = &out.records[0];
    assert_eq!(dead.status, LapStatus::Failed);
    let why = dead.failure.as_ref().unwrap().to_string();
    assert!(why.contains("exited") && why.contains('9'), "{why}");
    assert_eq!(
        out.records[1].status,
        LapStatus::Ok,
        "{:?}",
        out.records[1].failure
    );
}

#[test]
fn an_interrupted_run_resumed_records_the_same_set_of_laps() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options(
        suite(&["python/fast", "python/second"], 2, "0s"),
        tmp.path(),
    );
    let cancel = Arc::clone(&opts.cancel);
    let mut interrupted = false;
    let first = go(&opts, &tmp.path().join("cache"), &mut |e| match e {
        Event::LapFinished { index: 2, .. } => cancel.store(true, Ordering::Relaxed),
        Event::Interrupted => interrupted = true,
        _ => {}
    });
    assert!(interrupted && first.interrupted);
    assert_eq!(first.records.len(), 2);
    opts.cancel = Arc::new(AtomicBool::new(false));
    opts.resume = Some(first.dir.clone());
    let mut started = Vec::new();
    let second = go(&opts, &tmp.path().join("cache"), &mut |e| {
        if let Event::LapStarted { server, lap, .. } = e {
            started.push((server, lap));
        }
    });
    assert_eq!(second.dir, first.dir);
    assert_eq!(
        started,
        vec![
            ("python/fast".to_string(), 2),
            ("python/second".to_string(), 2)
        ]
    );
    let mut keys: Vec<_> = second.records.iter().map(|r| r.key()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 4);
    assert_eq!(second.records.len(), 4);
}

#[test]
fn a_server_with_min_warmup_is_warmed_up_that_long_even_when_the_suite_says_none() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(
        suite(&["python/fast", "python/second"], 1, "0s"),
        tmp.path(),
    );
    let mut warmups = Vec::new();
    let out = go(&opts, &tmp.path().join("cache"), &mut |e| {
        if let Event::WarmupStarted {
            server, seconds, ..
        } = e
        {
            warmups.push((server, seconds));
        }
    });
    assert_eq!(warmups, vec![("python/second".to_string(), 1.0)]);
    let recorded: Vec<(String, f64)> = out
        .records
        .iter()
        .map(|r| (r.server.clone(), r.params.warmup_s))
        .collect();
    assert_eq!(
        recorded,
        vec![
            ("python/fast".to_string(), 0.0),
            ("python/second".to_string(), 1.0)
        ]
    );
}

/// The suite of [`suite`] with `until_ci`, `min_laps` and `max_laps`.
fn until_ci_suite(servers: &[&str], pct: &str, min: u32, max: u32) -> Suite {
    let mut s = suite(servers, min, "0s");
    s.until_ci = Some(serverbench_model::suite::until_ci::parse_pct(pct).unwrap());
    s.min_laps = Some(min);
    s.max_laps = Some(max);
    s
}

#[test]
fn until_ci_runs_interleaved_rounds_up_to_the_limit_for_cells_that_never_clear() {
    let tmp = tempfile::tempdir().unwrap();
    let s = until_ci_suite(&["python/fast", "python/second"], "0.0001%", 3, 4);
    let out = go(
        &options(s, tmp.path()),
        &tmp.path().join("cache"),
        &mut |_| {},
    );
    let want: Vec<(String, u32)> = (1..=4)
        .flat_map(|l| {
            [
                ("python/fast".to_string(), l),
                ("python/second".to_string(), l),
            ]
        })
        .collect();
    assert_eq!(order(&out), want);
    let cells = out.until_ci.expect("the cells' outcome");
    assert_eq!(cells.len(), 2);
    for c in &cells {
        assert!(
            matches!(c.state, CellState::LimitReached { laps: 4, .. }),
            "{c:?}"
        );
    }
    assert!(out.records.iter().all(|r| r.disturbance.is_some()));
}

#[test]
fn until_ci_stops_at_the_minimum_when_every_cell_is_already_clear() {
    let tmp = tempfile::tempdir().unwrap();
    let s = until_ci_suite(&["python/fast", "python/second"], "99%", 3, 6);
    let out = go(
        &options(s, tmp.path()),
        &tmp.path().join("cache"),
        &mut |_| {},
    );
    assert_eq!(out.records.len(), 6, "{:?}", order(&out));
    let cells = out.until_ci.expect("the cells' outcome");
    assert!(
        cells
            .iter()
            .all(|c| matches!(c.state, CellState::Clear { laps: 3, .. })),
        "{cells:?}"
    );
}
