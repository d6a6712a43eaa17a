//! The library against a real private cluster: start pinned, the statement reader's kinds on
//! real `pg_stat_statements` rows (the referee's own role left out, nested statements apart),
//! world rows, reset, and a drop that leaves nothing running. Needs PostgreSQL 15 (installed by
//! `prepare` as root); SERVERBENCH_SKIP_DB=1 skips it, saying so with a `SKIP:` line that
//! `make test` counts (scripts/test-summary.awk).

use serverbench_database::{
    connect, read_worlds, reset_statements, Cluster, Config, Snapshot, StatementKind, World,
};

/// True when SERVERBENCH_SKIP_DB=1, with the `SKIP: <binary>::<test>: <why>` line written past
/// the harness's capture (as crates/cli/tests/skip/mod.rs does).
fn skipped() -> bool {
    use std::io::Write;
    if std::env::var_os("SERVERBENCH_SKIP_DB").is_none_or(|v| v != "1") {
        return false;
    }
    let test = std::thread::current().name().unwrap_or("main").to_owned();
    let line = format!(
        "SKIP: {}::{test}: SERVERBENCH_SKIP_DB=1 (no PostgreSQL 15 for the db tests)\n",
        env!("CARGO_CRATE_NAME")
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
    true
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.split(") ").nth(1).is_some_and(|r| !r.starts_with('Z')))
}

#[test]
fn a_started_cluster_is_pinned_counts_statements_by_kind_and_stops_when_dropped() {
    if skipped() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut config = Config::new(tmp.path());
    config.port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    config.cpus = vec![0];
    let cluster = Cluster::prepare(&config).unwrap();
    let db = cluster.start().unwrap();
    let pid = db.pid;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(
        status.lines().any(|l| l == "Cpus_allowed_list:\t0"),
        "the postmaster is pinned to CPU 0:\n{status}"
    );
    assert_eq!(cluster.status().running.map(|p| p.pid), Some(pid));
    let env = db.env(8);
    assert!(env.contains(&("DATABASE_POOL".into(), "8".into())));
    assert!(env.contains(&("DATABASE_URL".into(), db.url().expose())));

    // `c` runs a server's statements; `r`, the referee's role, reads and takes the snapshots.
    let mut c = connect(&db.url()).unwrap();
    let mut r = connect(&db.referee_url()).unwrap();
    reset_statements(&mut r).unwrap();
    let before = Snapshot::take(&mut r).unwrap();
    for id in 1..=5 {
        c.query("SELECT id, randomnumber FROM world WHERE id = $1", &[&id])
            .unwrap();
    }
    c.query(
        "SELECT id, randomnumber FROM world WHERE id IN (1, 2, 3)",
        &[],
    )
    .unwrap();
    c.execute(
        "UPDATE world SET randomnumber = 77 WHERE id = ANY($1)",
        &[&vec![10i32, 11]],
    )
    .unwrap();
    c.query("SELECT id, message FROM fortune", &[]).unwrap();
    c.batch_execute(
        "DO $$ BEGIN FOR i IN 1..20 LOOP \
         EXECUTE 'SELECT id, randomnumber FROM world WHERE id = $1' USING i; END LOOP; END $$",
    )
    .unwrap();
    r.query("SELECT id, randomnumber FROM world WHERE id = $1", &[&1i32])
        .unwrap();
    let delta = before.delta(&Snapshot::take(&mut r).unwrap());
    assert_eq!(delta.get(StatementKind::WorldById).calls, 5, "{delta:#?}");
    assert_eq!(
        delta.get(StatementKind::WorldById).nested_calls,
        20,
        "a DO block's reads are nested, not round trips"
    );
    assert_eq!(delta.get(StatementKind::WorldById).rows, 5);
    assert_eq!(delta.get(StatementKind::WorldMany).calls, 1);
    assert_eq!(delta.get(StatementKind::WorldUpdate).rows, 2);
    assert_eq!(delta.get(StatementKind::Fortune).rows, 12);
    assert_eq!(
        delta.statements(),
        9,
        "top level, the referee's left out: {delta:#?}"
    );
    let quiet = std::time::Duration::from_millis(50);
    let settled = Snapshot::take_settled(&mut r, quiet, quiet * 20).unwrap();
    assert_eq!(
        before.delta(&settled).statements(),
        9,
        "a quiet database settles at once, its own reads left out"
    );
    assert_eq!(
        read_worlds(&mut r, &[11, 10, 99999]).unwrap(),
        [
            World {
                id: 10,
                random_number: 77
            },
            World {
                id: 11,
                random_number: 77
            }
        ]
    );
    drop((c, r));
    drop(db);
    assert!(!alive(pid), "PID {pid} still runs after the drop");
    assert_eq!(cluster.status().running, None);
}

#[test]
fn pgbench_measures_the_floor_of_world_by_id_selects_on_the_cluster() {
    if skipped() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut config = Config::new(tmp.path());
    config.port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cluster = Cluster::prepare(&config).unwrap();
    let db = cluster.start().unwrap();
    let mut c = connect(&db.referee_url()).unwrap();
    reset_statements(&mut c).unwrap();
    let before = Snapshot::take(&mut c).unwrap();
    let spec = serverbench_database::FloorSpec {
        clients: 4,
        cpus: vec![0],
        duration: std::time::Duration::from_secs(1),
        mode: serverbench_database::FloorMode::Plain,
    };
    let floor =
        serverbench_database::measure_floor(&db.url(), &spec, &tmp.path().join("floor")).unwrap();
    let pipelined_spec = serverbench_database::FloorSpec {
        mode: serverbench_database::FloorMode::Pipeline,
        ..spec.clone()
    };
    let pipelined =
        serverbench_database::measure_floor(&db.url(), &pipelined_spec, &tmp.path().join("floor"))
            .unwrap();
    assert!(
        pipelined.transactions > 0 && pipelined.transactions.is_multiple_of(20),
        "{pipelined:?}"
    );
    let delta = before.delta(&Snapshot::take(&mut c).unwrap());
    assert_eq!(
        (floor.clients, floor.threads, floor.duration_s),
        (4, 1, 1.0)
    );
    assert!(floor.selects_per_s > 0.0, "{floor:?}");
    let by_id = delta.get(StatementKind::WorldById).calls;
    assert!(
        by_id >= floor.transactions + pipelined.transactions && by_id > 0,
        "every pgbench transaction is one world-by-id select: {by_id} vs {floor:?}"
    );
}
