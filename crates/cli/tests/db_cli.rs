//! `serverbench db`: the private PostgreSQL's life through the real binary. Needs root (or the
//! postgres user's rights) and PostgreSQL 15, installed by `db up` when missing; set
//! SERVERBENCH_SKIP_DB=1 to skip these tests on a machine that cannot have them.

mod skip;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn skip() -> bool {
    let skip = std::env::var_os("SERVERBENCH_SKIP_DB").is_some_and(|v| v == "1");
    if skip {
        skip::say_skipped("SERVERBENCH_SKIP_DB=1 (no PostgreSQL 15 for the db tests)");
    }
    skip
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The binary with a cache of its own; `db down` when dropped, so a failed test leaves nothing.
struct Db {
    cache: PathBuf,
    port: u16,
}

impl Db {
    fn run(&self, args: &[&str]) -> Output {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let port = self.port.to_string();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_serverbench"));
        cmd.arg("db").args(&args[..1]).args(["--db-port", &port]);
        cmd.args(&args[1..])
            .env("SERVERBENCH_ROOT", root)
            .env("SERVERBENCH_CACHE", &self.cache)
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "db {args:?} failed:\n{text}");
        text
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let _ = self.run(&["down"]);
    }
}

fn pid_in(text: &str) -> u32 {
    let at = text
        .find("(PID ")
        .unwrap_or_else(|| panic!("no PID in {text}"))
        + 5;
    text[at..].split(')').next().unwrap().parse().unwrap()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.split(") ").nth(1).is_some_and(|r| !r.starts_with('Z')))
}

#[test]
fn the_database_goes_up_answers_goes_down_and_is_reused_then_rebuilt_for_an_old_schema() {
    if skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let db = Db {
        cache: tmp.path().join("cache"),
        port: free_port(),
    };
    let up = db.ok(&["up"]);
    assert!(up.contains("database: created in"), "{up}");
    let status = db.ok(&["status"]);
    let pid = pid_in(&status);
    assert!(status.contains("database: running"), "{status}");
    assert!(
        status.contains(&format!("listens   127.0.0.1:{} and socket ", db.port)),
        "{status}"
    );
    assert!(
        status.contains("url       postgres://serverbench:***@127.0.0.1:"),
        "{status}"
    );
    let password = db.cache.join("postgres/1/password");
    let mode = std::os::unix::fs::PermissionsExt::mode(&password.metadata().unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);

    let rows = db.ok(&[
        "psql",
        "--",
        "-Atc",
        "SELECT count(*), min(id), max(id) FROM world",
    ]);
    assert_eq!(rows.trim(), "10000|1|10000");
    let fortunes = db.ok(&["psql", "--", "-Atc", "SELECT count(*) FROM fortune"]);
    assert_eq!(fortunes.trim(), "12");

    assert!(db.ok(&["down"]).contains(&format!("stopped (PID {pid})")));
    assert!(!alive(pid), "PID {pid} still runs after db down");
    assert!(db.ok(&["status"]).starts_with("database: stopped"));

    let again = db.ok(&["up"]);
    assert!(again.contains("database: reusing"), "{again}");
    db.ok(&["down"]);

    // A cluster stamped with an older schema version is rebuilt, and older version folders go.
    std::fs::write(
        db.cache.join("postgres/1/stamp"),
        "schema 0 sql 0 postgresql 15\n",
    )
    .unwrap();
    std::fs::create_dir_all(db.cache.join("postgres/0/data")).unwrap();
    let rebuilt = db.ok(&["up"]);
    assert!(
        rebuilt.contains("database: rebuilt") && rebuilt.contains("schema 0"),
        "{rebuilt}"
    );
    assert!(!db.cache.join("postgres/0").exists());
    let pid = pid_in(&db.ok(&["status"]));
    assert_eq!(
        db.ok(&["psql", "--", "-Atc", "SELECT count(*) FROM world"])
            .trim(),
        "10000"
    );
    db.ok(&["down"]);
    assert!(!alive(pid), "PID {pid} still runs after db down");
}

#[test]
fn a_taken_port_is_named_in_one_line_and_fails() {
    if skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let db = Db {
        cache: tmp.path().join("cache"),
        port: taken.local_addr().unwrap().port(),
    };
    let out = db.run(&["up"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!(
            "serverbench: error: port {} on 127.0.0.1 is taken by another process \
             (choose another with --db-port)",
            db.port
        )
    );
}

#[test]
fn psql_without_a_running_database_says_how_to_start_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db {
        cache: tmp.path().join("cache"),
        port: free_port(),
    };
    let out = db.run(&["psql"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`serverbench db up`"));
}
