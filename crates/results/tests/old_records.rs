//! Results folders written before the model crate (a failure as one string, the transport keys
//! beside the others) still read, and write back with the same keys.

use serverbench_model::failure::FailureKind;
use serverbench_model::Protocol;
use serverbench_model::TlsResume;
use serverbench_results::load_laps;
use serverbench_results::record::LapStatus;

/// Two lines as serverbench wrote them before failures were typed: a failed lap whose failure is
/// one string, and an HTTPS lap with a new connection per request.
const OLD_LINES: &str = r#"{"suite": "quick", "server": "node/http", "scenario": "hello", "profile": "c50", "lap": 1, "status": "failed", "failure": "load tool failed: exit status 1\nserver log tail:\nlistening on 8080\nKilled", "tool": "serverbench", "started_at": "2026-11-20T10:00:12Z", "wall_s": 3.1, "params": {"mode": "http", "paths": ["/hello"], "connections": 50, "threads": 1, "duration_s": 3.0, "requests": null, "pipeline": 1, "rate": null, "warmup_s": 1.0, "message": null, "size": null}, "load": null, "server_stats": null}
{"suite": "quick", "server": "node/http", "scenario": "hello-tls", "profile": "c50", "lap": 1, "status": "ok", "failure": null, "tool": "serverbench", "started_at": "2026-11-20T10:00:16Z", "wall_s": 3.2, "params": {"mode": "http", "paths": ["/hello"], "connections": 50, "threads": 1, "duration_s": 3.0, "requests": null, "pipeline": 1, "rate": null, "warmup_s": 1.0, "message": null, "size": null, "tls": true, "new_conn": true, "tls_resume": "tickets"}, "load": null, "server_stats": null}
"#;

#[test]
fn a_results_folder_from_before_typed_failures_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("results.jsonl"), OLD_LINES).unwrap();
    let loaded = load_laps(dir.path()).unwrap();
    let [failed, tls] = &loaded.records[..] else {
        panic!("two records, got {}", loaded.records.len());
    };
    assert_eq!(failed.status, LapStatus::Failed);
    let failure = failed.failure.as_ref().unwrap();
    assert_eq!(failure.kind, FailureKind::Unknown);
    assert_eq!(failure.detail, "load tool failed: exit status 1");
    assert_eq!(
        failure.log_tail.as_deref(),
        Some("server log tail:\nlistening on 8080\nKilled")
    );
    assert!(failure
        .to_string()
        .starts_with("load tool failed: exit status 1\nserver log tail:"));
    let t = &tls.params.transport;
    assert_eq!((t.protocol, t.tls, t.new_conn), (Protocol::H1, true, true));
    assert_eq!(t.tls_resume, Some(TlsResume::Tickets));
    let again = serde_json::to_value(&tls.params).unwrap();
    assert_eq!(again["tls"], true);
    assert_eq!(again["tls_resume"], "tickets");
    assert!(again.get("transport").is_none(), "{again}");
}

#[test]
fn an_env_json_from_before_the_database_floor_reads_with_no_floor_and_a_new_one_keeps_it() {
    use serverbench_results::database::DatabaseFloor;
    use serverbench_results::env::Env;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("env.json");
    std::fs::write(&path, r#"{"serverbench_version": "0.1.0", "skipped": []}"#).unwrap();
    let old = Env::read(&path).unwrap().unwrap();
    assert!(old.database_floor.is_empty());
    let text = serde_json::to_string(&old).unwrap();
    assert!(!text.contains("database_floor"), "{text}");
    let floor = DatabaseFloor {
        clients: 16,
        threads: 1,
        round: 1,
        selects_per_s: 18_600.0,
        transactions: 55_800,
        pipelined_selects_per_s: Some(96_300.0),
        duration_s: 3.0,
        db_cpus: vec![0],
        client_cpus: vec![1],
    };
    let new = Env {
        database_floor: vec![floor.clone()],
        ..old
    };
    new.write(&path).unwrap();
    assert_eq!(Env::read(&path).unwrap().unwrap().database_floor, [floor]);
}
