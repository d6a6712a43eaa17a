//! Database laps over several machines, for real: the server in `sb-server`, the load from
//! `sb-client1`, and the private PostgreSQL on its own host `sb-db` (or on the server host by
//! default), each reached with OpenSSH (bench/netns-hosts.sh). The server is the fixture
//! catalog's python/db (psql sessions to DATABASE_URL). Needs root, `ip netns` and PostgreSQL 15
//! (or SERVERBENCH_SKIP_NETNS=1).

mod netns;
mod skip;

use netns::{bed, command_lines_in, Bed};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const SUITE: &str = r#"
name = "db-over-hosts"
description = "One /db lap at 4 connections, pool 3."
reproduces = "none: a test"
servers = "all"
laps = 1
warmup = "500ms"
pool = 3

[[scenario]]
name = "db"
paths = ["/db"]
requires = "db"

[[profile]]
name = "c4"
connections = 4
duration = "3s"
"#;

/// `serverbench run` of the suite for python/db over the bed, with `extra` flags.
fn run_db_lap(bed: &Bed, results: &Path, extra: &[&str]) -> Output {
    db_lap_command(bed, results, extra).output().unwrap()
}

fn db_lap_command(bed: &Bed, results: &Path, extra: &[&str]) -> Command {
    let suite = results.join("db.toml");
    std::fs::write(&suite, SUITE).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_serverbench"));
    cmd.arg("run")
        .arg(&suite)
        .arg("--root")
        .arg(netns::root().join("crates/hosts/tests/fixtures/catalog"))
        .args(["--servers", "python/db", "--hosts"])
        .arg(&bed.hosts)
        .args(["--server-host", "sb-server", "--client-hosts", "sb-client1"])
        .args(["--db-port", "5544", "--results"])
        .arg(results)
        .args(extra)
        .env("SERVERBENCH_CACHE", results.join("cache"));
    cmd
}

/// The results folder and its one lap.
fn the_lap(results: &Path) -> (std::path::PathBuf, serde_json::Value) {
    let dir = std::fs::read_dir(results)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.join("results.jsonl").exists())
        .expect("a results folder");
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let laps: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(laps.len(), 1, "{laps:?}");
    (dir, laps[0].clone())
}

/// An ok lap that ran one statement per request on a database sampled where it ran (`host`).
fn assert_db_lap(lap: &serde_json::Value, host: &str) {
    assert_eq!(lap["status"], "ok", "{lap}");
    assert_eq!(lap["hosts"]["server_host"], "sb-server", "{lap}");
    assert_eq!(
        lap["database"]["host"], host,
        "where the database ran: {lap}"
    );
    let per_request = lap["database"]["statements_per_request"].as_f64().unwrap();
    assert!(
        (0.95..=1.05).contains(&per_request),
        "one SELECT per /db request: {per_request} ({lap})"
    );
    let db_cpu = lap["roles"]["database"]["cpu_s"].as_f64().unwrap();
    assert!(db_cpu > 0.0, "the database is sampled on {host}: {lap}");
    let server_cpu = lap["server_stats"]["cpu_s"].as_f64().unwrap();
    assert!(
        server_cpu > 0.0,
        "the server is sampled on sb-server: {lap}"
    );
}

/// No postgres left in any namespace (nor anything else but sshd).
fn assert_no_postgres_left(bed: &Bed) {
    bed.assert_nothing_left();
    for ns in netns::NAMESPACES {
        let left: Vec<String> = command_lines_in(ns)
            .into_iter()
            .filter(|c| c.contains("postgres"))
            .collect();
        assert!(left.is_empty(), "postgres left in {ns}: {left:?}");
    }
}

#[test]
fn a_db_lap_with_the_database_on_its_own_host_counts_one_statement_per_request_and_leaves_nothing()
{
    let Some(bed) = bed() else { return };
    let results = tempfile::tempdir().unwrap();
    let out = run_db_lap(&bed, results.path(), &["--db-host", "sb-db"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let (dir, lap) = the_lap(results.path());
    assert_db_lap(&lap, "sb-db");
    let env: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("env.json")).unwrap()).unwrap();
    assert_eq!(
        env["hosts"]["database"]["name"], "sb-db",
        "{}",
        env["hosts"]
    );
    assert_eq!(env["hosts"]["database"]["address"], netns::DB_ADDR);
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("python/db") && l.contains("sb-db")),
        "the `db on` column names the host:\n{stdout}"
    );
    assert_no_postgres_left(&bed);
}

#[test]
fn without_db_host_the_database_runs_on_the_server_host() {
    let Some(bed) = bed() else { return };
    let results = tempfile::tempdir().unwrap();
    let out = run_db_lap(&bed, results.path(), &[]);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, lap) = the_lap(results.path());
    assert_db_lap(&lap, "sb-server");
    assert_no_postgres_left(&bed);
}

/// Starts a db lap of `seconds` with the database on sb-db and returns once the load runs.
fn a_long_db_lap(bed: &Bed, results: &Path, seconds: &str) -> std::process::Child {
    let child = db_lap_command(bed, results, &["--db-host", "sb-db", "-d", seconds])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let running = |ns: &str, what: &str| command_lines_in(ns).iter().any(|c| c.contains(what));
    let t = Instant::now();
    while !(running("sb-db", "postgres") && running("sb-client1", "load ")) {
        assert!(t.elapsed() < Duration::from_secs(60), "no db lap started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
    child
}

#[test]
fn ctrl_c_during_a_db_lap_stops_the_database_on_its_host() {
    let Some(bed) = bed() else { return };
    let results = tempfile::tempdir().unwrap();
    let mut child = a_long_db_lap(&bed, results.path(), "30s");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_no_postgres_left(&bed);
}

#[test]
fn a_run_killed_during_a_db_lap_leaves_no_database_running_on_its_host() {
    let Some(bed) = bed() else { return };
    let results = tempfile::tempdir().unwrap();
    let mut child = a_long_db_lap(&bed, results.path(), "30s");
    child.kill().unwrap();
    child.wait().unwrap();
    // Its ssh sessions end with it: each host's wrapper stops what it started (the database
    // with a fast shutdown).
    let t = Instant::now();
    loop {
        let left: Vec<String> = netns::NAMESPACES
            .iter()
            .flat_map(|ns| command_lines_in(ns))
            .filter(|c| !c.starts_with("/usr/sbin/sshd") && !c.starts_with("sshd"))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "left behind: {left:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_database_that_dies_on_its_host_mid_lap_fails_that_lap_naming_the_host() {
    let Some(bed) = bed() else { return };
    let results = tempfile::tempdir().unwrap();
    let mut child = a_long_db_lap(&bed, results.path(), "6s");
    let out = Command::new("ip")
        .args(["netns", "pids", "sb-db"])
        .output()
        .unwrap();
    let postmaster = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .find(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains("postgres\0-D\0")
        })
        .expect("the postmaster in sb-db")
        .parse::<i32>()
        .unwrap();
    // SAFETY: a process of the test's own run (the postmaster its `db run` started).
    unsafe { libc::kill(postmaster, libc::SIGKILL) };
    assert_eq!(
        child.wait().unwrap().code(),
        Some(3),
        "a failed lap: exit 3"
    );
    let (_, lap) = the_lap(results.path());
    assert_eq!(lap["status"], "failed", "{lap}");
    assert_eq!(lap["failure"]["kind"], "database", "{lap}");
    let why = lap["failure"]["detail"].as_str().unwrap();
    assert!(
        why.starts_with("the database on sb-db exited during the lap: sb-db:"),
        "{why}"
    );
    assert_no_postgres_left(&bed);
}

/// `psql URL -c QUERY` from namespace `ns`: its output, or its error.
fn psql_from(ns: &str, url: &str, query: &str) -> Result<String, String> {
    let out = Command::new("ip")
        .args([
            "netns", "exec", ns, "psql", url, "-X", "-A", "-t", "-c", query,
        ])
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_owned();
    if out.status.success() {
        Ok(text(&out.stdout))
    } else {
        Err(text(&out.stderr))
    }
}

#[test]
fn the_database_host_admits_the_server_host_with_the_password_and_refuses_a_client_host() {
    use std::io::{BufRead, BufReader};
    let Some(_bed) = bed() else { return };
    let catalog = netns::root().join("crates/hosts/tests/fixtures/catalog");
    let mut db = Command::new("ip")
        .args(["netns", "exec", "sb-db", env!("CARGO_BIN_EXE_serverbench")])
        .args([
            "db",
            "run",
            "--db-port",
            "5544",
            "--db-host",
            netns::DB_ADDR,
        ])
        .args(["--db-allow", netns::SERVER_ADDR, "--root"])
        .arg(&catalog)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(db.stdout.take().unwrap()).lines();
    let ready = lines.next().unwrap().unwrap();
    let json = ready
        .strip_prefix("serverbench-db-ready ")
        .unwrap_or_else(|| panic!("{ready}"));
    let ready: serde_json::Value = serde_json::from_str(json).unwrap();
    let url = ready["url"].as_str().unwrap().to_owned();
    assert!(url.contains(&format!("@{}:5544/", netns::DB_ADDR)), "{url}");
    let count = psql_from("sb-server", &url, "SELECT count(*) FROM world");
    let refused = psql_from("sb-client1", &url, "SELECT 1");
    let mut wrong = url.clone();
    wrong.replace_range(
        wrong.find(':').unwrap() + 3..wrong.find('@').unwrap(),
        "serverbench:x",
    );
    let bad_password = psql_from("sb-server", &wrong, "SELECT 1");
    drop(db.stdin.take());
    assert!(db.wait().unwrap().success());
    assert_eq!(count, Ok("10000".into()), "the server host logs in");
    let refused = refused.unwrap_err();
    assert!(
        refused.contains("no pg_hba.conf entry for host \"198.18.0.11\""),
        "{refused}"
    );
    let bad_password = bad_password.unwrap_err();
    assert!(
        bad_password.contains("password authentication failed"),
        "{bad_password}"
    );
}
