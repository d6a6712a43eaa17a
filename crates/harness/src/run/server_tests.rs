//! Unit tests of one server's share of a lap: the ETA, the resume index, a server that dies.

use super::*;
use crate::catalog::Server;
use crate::paths::Paths;
use crate::results::{ResultsWriter, LOGS_DIR};
use crate::run::plan::{load_params, Plan};
use crate::run::quick_check::{benches_websocket, transports};
use crate::run::RunOptions;
use crate::suite::{Profile, Scenario, ServerSelection, Suite};
use crate::tools::Prepared;
use serverbench_model::Feature;
use serverbench_model::Tool;
use serverbench_results::env::Pinning;
use serverbench_results::LapKey;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub(in crate::run) fn suite(laps: u32) -> Suite {
    Suite {
        name: "unit".into(),
        description: "d".into(),
        reproduces: "none".into(),
        baseline: None,
        servers: ServerSelection::List(vec!["a".into()]),
        laps,
        warmup: 1.0,
        tool: Tool::Serverbench,
        pool: None,
        until_ci: None,
        min_laps: None,
        max_laps: None,
        scenarios: vec![
            Scenario::builtin("hello").unwrap(),
            Scenario::builtin("json").unwrap(),
        ],
        profiles: vec![Profile {
            name: "p".into(),
            connections: 1,
            threads: None,
            duration: Some(2.0),
            requests: None,
            pipeline: 1,
            rate: None,
            server_cpus: Vec::new(),
            cores: None,
            pool: None,
            find_max: None,
        }],
    }
}

pub(in crate::run) fn options(suite: Suite, dir: &Path) -> RunOptions {
    RunOptions {
        suite,
        results_parent: dir.to_path_buf(),
        resume: None,
        pinning: Pinning::default(),
        host: "127.0.0.1".into(),
        serverbench_exe: PathBuf::from("serverbench"),
        cancel: Arc::new(AtomicBool::new(false)),
        quick_verify: false,
        attached: Vec::new(),
        hosts: None,
        database: Default::default(),
        doctor: None,
        build: Default::default(),
    }
}

/// One server (`command`), both scenarios, `laps` laps, interleaved as the run lays them out.
pub(in crate::run) fn plan(command: &str, dir: &Path, laps: u32) -> Plan {
    let feats = [Feature::Hello, Feature::Json];
    let server = Server::from_command("a", command, dir, &feats).unwrap();
    let jobs = (1..=laps)
        .flat_map(|lap| {
            (0..2).map(move |scenario| Job {
                server: 0,
                scenario,
                profile: 0,
                lap,
            })
        })
        .collect();
    Plan {
        servers: vec![server],
        skipped: Vec::new(),
        scenario_skips: Vec::new(),
        jobs,
    }
}

fn tool() -> Prepared {
    Prepared {
        tool: Tool::Serverbench,
        exe: PathBuf::from("serverbench"),
        scratch: std::env::temp_dir(),
    }
}

/// A run's context in `dir`, without certificate.
fn context<'a>(plan: &'a Plan, opts: &'a RunOptions, paths: &'a Paths, dir: &Path) -> Context<'a> {
    Context {
        plan,
        opts,
        paths,
        tool: tool(),
        dir: dir.to_path_buf(),
        tls: None,
        hosts_tls: None,
    }
}

/// Its progress, with `done` recorded before.
fn progress(ctx: &Context, done: HashSet<LapKey>) -> Progress {
    let writer = ResultsWriter::open(&ctx.dir.join("results.jsonl")).unwrap();
    Progress::new(ctx, writer, done)
}

#[test]
fn before_any_lap_the_eta_is_every_pending_lap_with_the_assumed_overhead() {
    let tmp = tempfile::tempdir().unwrap();
    let (plan, opts) = (
        plan("exec true", tmp.path(), 2),
        options(suite(2), tmp.path()),
    );
    let paths = Paths::new(tmp.path(), tmp.path().join("cache"));
    let ctx = context(&plan, &opts, &paths, tmp.path());
    let s = progress(&ctx, HashSet::new());
    // 4 laps of 1 s warm-up + 2 s, and 1 s of overhead assumed for each until one is timed.
    assert_eq!(s.eta(), Duration::from_secs(16));
}

#[test]
fn resumed_laps_count_as_done_and_only_the_missing_ones_are_pending() {
    let tmp = tempfile::tempdir().unwrap();
    let (plan, opts) = (
        plan("exec true", tmp.path(), 2),
        options(suite(2), tmp.path()),
    );
    let paths = Paths::new(tmp.path(), tmp.path().join("cache"));
    let ctx = context(&plan, &opts, &paths, tmp.path());
    let mut done = HashSet::new();
    done.insert(LapKey {
        server: "a".into(),
        scenario: "hello".into(),
        profile: "p".into(),
        lap: 1,
    });
    let mut s = progress(&ctx, done);
    assert_eq!(s.already(&ctx), 1);
    let pending = s.pending(&ctx, 0, 1);
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].scenario, s.index()),
        (1, 1),
        "the json lap is left; hello counted"
    );
    assert_eq!(s.pending(&ctx, 0, 2).len(), 2);
}

#[test]
fn a_server_that_dies_at_start_fails_every_lap_of_its_turn_with_its_log() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join(LOGS_DIR)).unwrap();
    let command = "echo 'cannot bind: permission denied' >&2; exit 3";
    let (plan, opts) = (plan(command, tmp.path(), 1), options(suite(1), tmp.path()));
    let paths = Paths::new(tmp.path(), tmp.path().join("cache"));
    let ctx = context(&plan, &opts, &paths, tmp.path());
    let mut s = RunState::new(&ctx, progress(&ctx, HashSet::new()));
    let mut events = Vec::new();
    s.server_lap(0, 1, &mut |e| events.push(e)).unwrap();
    let records = s.progress().records().unwrap();
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r.status, LapStatus::Failed);
        let failure = r.failure.as_ref().unwrap();
        assert_eq!(failure.kind, serverbench_model::failure::FailureKind::Start);
        let why = failure.to_string();
        assert!(why.contains("exited during start-up"), "{why}");
        assert!(
            why.contains("cannot bind: permission denied"),
            "the log tail is kept: {why}"
        );
    }
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::ServerFailed { .. })));
}

#[test]
fn a_server_is_quick_checked_over_the_transports_of_the_laps_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = suite(1);
    s.scenarios = [
        "hello",
        "https-hello",
        "https-resume",
        "h2-hello",
        "h2c-hello",
    ]
    .map(|n| Scenario::builtin(n).unwrap())
    .to_vec();
    let tls_only =
        Server::from_command("a", "true", dir.path(), &[Feature::Hello, Feature::Tls]).unwrap();
    assert_eq!(transports(&s, &tls_only), vec![Feature::Tls]);
    let all = [Feature::Hello, Feature::Tls, Feature::H2, Feature::H2c];
    let every = Server::from_command("b", "true", dir.path(), &all).unwrap();
    assert_eq!(
        transports(&s, &every),
        vec![Feature::Tls, Feature::H2, Feature::H2c]
    );
}

#[test]
fn only_a_suite_with_a_ws_echo_lap_for_the_server_runs_the_ws_checks_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = suite(1);
    s.scenarios = vec![Scenario::builtin("hello").unwrap()];
    let both = [Feature::Hello, Feature::WsEcho];
    let ws = Server::from_command("a", "true", dir.path(), &both).unwrap();
    let http = Server::from_command("b", "true", dir.path(), &[Feature::Hello]).unwrap();
    assert!(!benches_websocket(&s, &ws), "a hello suite skips them");
    s.scenarios.push(Scenario {
        name: "ws-echo".into(),
        requires: vec![Feature::WsEcho],
        ..Scenario::default()
    });
    assert!(benches_websocket(&s, &ws));
    assert!(!benches_websocket(&s, &http), "b runs no ws-echo lap");
}

#[test]
fn a_lap_records_the_protocol_of_its_scenario() {
    let mut s = suite(1);
    s.scenarios = vec![Scenario::builtin("https-resume").unwrap()];
    let job = Job {
        server: 0,
        scenario: 0,
        profile: 0,
        lap: 1,
    };
    let p = load_params(&s, &job);
    assert!(p.transport.tls && p.transport.new_conn);
    assert_eq!(p.transport_label(), "https new-conn resume=tickets");
}
