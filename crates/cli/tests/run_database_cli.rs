//! `serverbench run` with a database suite: the harness starts its private PostgreSQL, hands
//! the server DATABASE_URL and DATABASE_POOL, samples the database as a role, counts the
//! statements per request, and stops it at the end. The server is the test's own: Python's
//! http.server answering /db through a pool of `psql` processes (no driver to install).
//!
//! Needs PostgreSQL 15 (Debian's postgresql-15) and root (initdb runs as the `postgres` user);
//! without them it fails, unless SERVERBENCH_SKIP_DATABASE=1 says to skip it (printed).

mod skip;

use std::path::{Path, PathBuf};
use std::process::Command;

const PG: &str = "/usr/lib/postgresql/15/bin/postgres";

/// A user's server answering `/db` with one random World row and `/queries?queries=N` with N,
/// each row through one `SELECT` on a pool of `DATABASE_POOL` (at most 4) long-lived `psql`
/// sessions.
const DB_SERVER: &str = r#"
import json, os, queue, random, subprocess
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
url, size = os.environ["DATABASE_URL"], min(int(os.environ["DATABASE_POOL"]), 4)
pool = queue.Queue()
for _ in range(size):
    pool.put(subprocess.Popen(["psql", url, "-X", "-A", "-t", "-q", "-F", ","], text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1))
def world(p):
    p.stdin.write("SELECT id, randomnumber FROM world WHERE id = %d;\n" % random.randint(1, 10000))
    p.stdin.flush()
    i, n = p.stdout.readline().strip().split(",")
    return {"id": int(i), "randomNumber": int(n)}
def worlds(n):
    p = pool.get()
    try:
        return [world(p) for _ in range(n)]
    finally:
        pool.put(p)
def count(path):
    try:
        return min(max(int(path.split("queries=", 1)[1]), 1), 500)
    except (IndexError, ValueError):
        return 1
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        if self.path == "/db":
            body, code = json.dumps(worlds(1)[0]).encode(), 200
        elif self.path.startswith("/queries"):
            body, code = json.dumps(worlds(count(self.path))).encode(), 200
        else:
            body, code = b"Hello, World!", 200 if self.path == "/hello" else 404
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
ThreadingHTTPServer((os.environ["HOST"], int(os.environ["PORT"])), H).serve_forever()
"#;

const SUITE: &str = r#"
name = "tiny-database"
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
duration = "2s"
"#;

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/run-catalog")
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Whether this machine can run the test; a printed skip only when asked for.
fn database_available() -> bool {
    if Path::new(PG).exists() && nix_is_root() {
        return true;
    }
    if std::env::var("SERVERBENCH_SKIP_DATABASE").as_deref() == Ok("1") {
        skip::say_skipped(&format!(
            "needs {PG} and root (SERVERBENCH_SKIP_DATABASE=1)"
        ));
        return false;
    }
    panic!("needs PostgreSQL 15 ({PG}) and root; SERVERBENCH_SKIP_DATABASE=1 skips this test");
}

fn nix_is_root() -> bool {
    let out = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// The postgres processes whose command line names `data` (the test's own cluster).
fn postgres_of(data: &Path) -> Vec<String> {
    let out = Command::new("ps")
        .args(["-eo", "pid,args"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let needle = data.to_string_lossy().into_owned();
    text.lines()
        .filter(|l| l.contains("postgres") && l.contains(&needle))
        .map(str::to_owned)
        .collect()
}

/// `serverbench run SUITE` with the servers given as `--server` flags; the output and the laps.
fn run(tmp: &Path, suite: &str, servers: &[&str]) -> (bool, String, Vec<serde_json::Value>) {
    std::fs::write(tmp.join("db_server.py"), DB_SERVER).unwrap();
    std::fs::write(tmp.join("tiny.toml"), suite).unwrap();
    let port = free_port().to_string();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_serverbench"));
    cmd.args(["run", "tiny.toml", "--root"])
        .arg(fixture_root())
        .arg("--results")
        .arg(tmp.join("results"));
    for s in servers {
        cmd.args(["--server", &format!("{s}=exec python3 db_server.py")]);
    }
    let out = cmd
        .args(["--implements", "db", "--db-port", &port, "--no-verify"])
        .env("SERVERBENCH_CACHE", tmp.join("cache"))
        .current_dir(tmp)
        .output()
        .unwrap();
    let output = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = std::fs::read_dir(tmp.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.jsonl").is_file())
        .expect("a results folder");
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let laps = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.success(), output, laps)
}

/// A temporary folder the `postgres` user can reach (its cluster lives in the cache below).
fn reachable_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    tmp
}

#[test]
fn a_database_lap_starts_postgres_samples_it_counts_statements_and_stops_it() {
    if !database_available() {
        return;
    }
    let tmp = reachable_tempdir();
    let (ok, output, laps) = run(tmp.path(), SUITE, &["mine"]);
    assert!(ok, "{output}");
    assert_eq!(laps.len(), 1, "{laps:?}");
    let lap = &laps[0];
    assert_eq!(lap["status"], "ok", "{lap}");
    assert_eq!(lap["params"]["pool"], 3, "the pool is recorded: {lap}");
    let per_request = lap["database"]["statements_per_request"].as_f64().unwrap();
    assert!(
        (0.99..=1.01).contains(&per_request),
        "one SELECT per /db request: {per_request} ({lap})"
    );
    assert!(
        lap["database"]["rows_per_s"].as_f64().unwrap() > 0.0,
        "{lap}"
    );
    let db_cpu = lap["roles"]["database"]["cpu_s"].as_f64().unwrap();
    assert!(
        db_cpu > 0.0,
        "the database's process tree is sampled: {lap}"
    );
    assert!(
        lap["server_stats"]["cpu_s"].as_f64().unwrap() > 0.0,
        "{lap}"
    );
    assert_eq!(lap["database"]["in_flight_at_end"], 4, "{lap}");
    assert!(
        lap["database"]["off_contract"].is_null(),
        "judged at the N it ran, within the statement rules: {lap}"
    );
    let floor = floor_of(tmp.path());
    assert!(
        floor["pipelined_selects_per_s"].as_f64().unwrap() > 0.0,
        "the floor in pipeline mode beside the plain one: {floor}"
    );
    assert_eq!(
        floor["clients"], 3,
        "the floor has as many sessions as the pool: {floor}"
    );
    assert!(floor["selects_per_s"].as_f64().unwrap() > 0.0, "{floor}");
    assert!(
        output.contains("database floor, 3 sessions, round 1:"),
        "{output}"
    );
    let left = postgres_of(&tmp.path().join("cache"));
    assert!(left.is_empty(), "postgres left running: {left:?}");
}

/// The one floor recorded in the run's env.json.
fn floor_of(tmp: &Path) -> serde_json::Value {
    let dir = std::fs::read_dir(tmp.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("env.json").is_file())
        .expect("a results folder");
    let text = std::fs::read_to_string(dir.join("env.json")).unwrap();
    let env: serde_json::Value = serde_json::from_str(&text).unwrap();
    let floors = env["database_floor"].as_array().expect("database_floor");
    assert_eq!(floors.len(), 1, "{floors:?}");
    floors[0].clone()
}

#[test]
fn a_database_that_dies_mid_lap_fails_that_lap_and_the_next_server_gets_a_fresh_one() {
    if !database_available() {
        return;
    }
    let tmp = reachable_tempdir();
    let pid_file = tmp.path().join("cache/postgres/1/data/postmaster.pid");
    let results = tmp.path().join("results");
    // Kills the postmaster 2.5 s after the first server's log appears: within its 4 s lap.
    let killer = std::thread::spawn(move || {
        let started = std::time::Instant::now();
        let log = |r: &Path| -> Option<PathBuf> {
            let dir = std::fs::read_dir(r).ok()?.next()?.ok()?.path();
            Some(dir.join("logs/first.lap1.log")).filter(|l| l.exists())
        };
        while log(&results).is_none() {
            if started.elapsed() > std::time::Duration::from_secs(120) {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(2500));
        let text = std::fs::read_to_string(&pid_file).unwrap_or_default();
        let Some(pid) = text.lines().next() else {
            return false;
        };
        Command::new("kill")
            .args(["-KILL", pid])
            .status()
            .unwrap()
            .success()
    });
    let suite = SUITE.replace("duration = \"2s\"", "duration = \"4s\"");
    let (_, output, laps) = run(tmp.path(), &suite, &["first", "second"]);
    assert!(
        killer.join().unwrap(),
        "the postmaster was not killed: {output}"
    );
    let lap = |name: &str| laps.iter().find(|l| l["server"] == name).unwrap().clone();
    let first = lap("first");
    assert_eq!(first["status"], "failed", "{first}");
    assert_eq!(first["failure"]["kind"], "database", "{first}");
    let why = first["failure"]["detail"].as_str().unwrap();
    assert!(why.contains("the database (postgres"), "{why}");
    let second = lap("second");
    assert_eq!(
        second["status"], "ok",
        "a fresh database for the next server: {second}"
    );
    let left = postgres_of(&tmp.path().join("cache"));
    assert!(left.is_empty(), "postgres left running: {left:?}");
}

#[test]
fn ctrl_c_during_a_database_lap_stops_the_database_too() {
    if !database_available() {
        return;
    }
    let tmp = reachable_tempdir();
    std::fs::write(tmp.path().join("db_server.py"), DB_SERVER).unwrap();
    let suite = SUITE.replace("duration = \"2s\"", "duration = \"20s\"");
    std::fs::write(tmp.path().join("tiny.toml"), suite).unwrap();
    let port = free_port().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["run", "tiny.toml", "--root"])
        .arg(fixture_root())
        .arg("--results")
        .arg(tmp.path().join("results"))
        .args([
            "--server",
            "mine=exec python3 db_server.py",
            "--implements",
            "db",
        ])
        .args(["--db-port", &port, "--no-verify"])
        .env("SERVERBENCH_CACHE", tmp.path().join("cache"))
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let cache = tmp.path().join("cache");
    let started = std::time::Instant::now();
    // The run's postmaster (initdb's and the schema's come and go before it).
    let log_seen = |r: &Path| {
        std::fs::read_dir(r)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .is_some_and(|e| e.path().join("logs/mine.lap1.log").exists())
    };
    while !log_seen(&tmp.path().join("results")) {
        assert!(started.elapsed().as_secs() < 120, "the lap never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(
        !postgres_of(&cache).is_empty(),
        "the database runs during the lap"
    );
    let pid = child.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("serverbench did not stop within 60 s of Ctrl-C");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(
        !status.success(),
        "an interrupted run does not exit 0: {status}"
    );
    let left = postgres_of(&cache);
    assert!(
        left.is_empty(),
        "postgres left running after Ctrl-C: {left:?}"
    );
}

#[test]
fn a_capacity_search_on_the_database_is_not_judged_by_one_steps_requests() {
    if !database_available() {
        return;
    }
    let tmp = reachable_tempdir();
    let suite = SUITE.replace(
        "duration = \"2s\"",
        "duration = \"500ms\"\nfind_max = { slo = \"p99<=500ms\", start_rate = 20, max_steps = 3 }",
    );
    let (ok, output, laps) = run(tmp.path(), &suite, &["mine"]);
    assert!(ok, "{output}");
    let lap = &laps[0];
    assert_eq!(lap["status"], "ok", "{lap}");
    let steps = lap["load"]["capacity"]["steps"].as_array().unwrap();
    let measured: u64 = steps.iter().map(|s| s["requests"].as_u64().unwrap()).sum();
    let statements = lap["database"]["statements"].as_u64().unwrap();
    assert!(
        statements > measured,
        "every step and its warm-up ran statements: {statements} vs {measured}"
    );
    assert!(
        lap["database"]["off_contract"].is_null(),
        "a search's statements are not one step's: {lap}"
    );
    assert!(
        lap["database"]["statements_per_request"].is_null(),
        "no one request count to divide by: {lap}"
    );
    let left = postgres_of(&tmp.path().join("cache"));
    assert!(left.is_empty(), "postgres left running: {left:?}");
}
