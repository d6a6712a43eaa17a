//! `serverbench history` through the real binary, from an empty history: a user's own server
//! that slows down after some runs is caught at the run where it did, with the regression exit
//! code; pure noise gives none. Synthetic results folders (serverbench_history::synth).

use serverbench_history::synth::{write_run, RunSpec};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Writes one results folder per level (the server's req/s relative to 100k), an hour apart.
fn folders(parent: &Path, levels: &[f64], seed: u64) -> Vec<String> {
    levels
        .iter()
        .enumerate()
        .map(|(i, level)| {
            let spec = RunSpec {
                servers: vec![("mine".into(), 100_000.0 * level)],
                cv: 0.01,
                seed: seed * 1000 + i as u64,
                at_s: i as u64 * 3600,
                commit: Some(format!("c{i:06}")),
                ..RunSpec::default()
            };
            let dir: PathBuf = write_run(parent, &format!("run{i:03}"), &spec).unwrap();
            dir.to_str().unwrap().to_owned()
        })
        .collect()
}

fn import(db: &str, dirs: &[String]) -> Output {
    let mut args = vec!["history", "import", "--history", db];
    args.extend(dirs.iter().map(String::as_str));
    serverbench(&args)
}

#[test]
fn a_server_that_slows_down_after_some_runs_fails_the_check_at_that_run() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.db");
    let db = db.to_str().unwrap();
    let mut levels = vec![1.0; 24];
    levels.extend([0.88; 6]);
    let out = import(db, &folders(tmp.path(), &levels, 1));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = serverbench(&["history", "check", "--history", db]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("regression: mine hello c64 h1 rps changed -12.")
            && stdout.contains("at c000024"),
        "{stdout}"
    );
}

#[test]
fn a_regression_and_its_fix_show_both_change_points_in_show_check_and_the_trend_page() {
    // A user's own server recorded 30 times: 12 runs as it was, 10 about 16% slower, 8 back.
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.db");
    let db = db.to_str().unwrap();
    let mut levels = vec![1.0; 12];
    levels.extend([0.84; 10]);
    levels.extend([1.0; 8]);
    let out = import(db, &folders(tmp.path(), &levels, 5));
    assert!(out.status.success(), "{}", text(&out.stderr));

    let show = text(&serverbench(&["history", "show", "mine hello", "--history", db]).stdout);
    assert!(
        show.contains("◆ change at run 13 (c000012): -16."),
        "{show}"
    );
    assert!(show.contains("◆ change at run 23 (c000022): +1"), "{show}");
    let marked: Vec<&str> = show
        .lines()
        .filter(|l| l.starts_with("◆ ") && !l.starts_with("◆ change"))
        .collect();
    assert_eq!(marked.len(), 2, "{show}");
    assert!(
        marked[0].contains("c000012") && marked[1].contains("c000022"),
        "{show}"
    );

    let out = serverbench(&["history", "check", "--history", db]);
    let check = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{check}{}", text(&out.stderr));
    assert!(
        check.contains("rps changed -16.") && check.contains("at c000012 (run 13)"),
        "{check}"
    );
    assert!(
        check.contains("rps changed +1") && check.contains("at c000022 (run 23)"),
        "{check}"
    );

    let page = tmp.path().join("trend.html");
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["history", "trend", "--history", db, "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("change -16.") && html.contains("at c000012"),
        "trend page"
    );
    assert!(
        html.contains("change +1") && html.contains("at c000022"),
        "trend page"
    );
}

#[test]
fn pure_noise_passes_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.db");
    let db = db.to_str().unwrap();
    let out = import(db, &folders(tmp.path(), &[1.0; 30], 2));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = serverbench(&["history", "check", "--history", db]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// Two runs of one server at `rps` and `rps * level`, `laps` laps each, noisy by `cv`.
fn two_runs(parent: &Path, rps: f64, level: f64, laps: u32, cv: f64, seed: u64) -> Vec<String> {
    [1.0, level]
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let spec = RunSpec {
                servers: vec![("mine".into(), rps * l)],
                laps,
                cv,
                seed: seed * 1000 + i as u64,
                at_s: i as u64 * 3600,
                commit: Some(format!("c{i:06}")),
                ..RunSpec::default()
            };
            let dir = write_run(parent, &format!("run{i:03}"), &spec).unwrap();
            dir.to_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn an_inconclusive_check_warns_with_the_laps_that_would_decide_and_fails_only_when_strict() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.db");
    let db = db.to_str().unwrap();
    let out = import(db, &two_runs(tmp.path(), 100_000.0, 0.955, 3, 0.02, 7));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let args = ["history", "check", "--history", db, "--measure", "rps"];
    let out = serverbench(&args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.contains("inconclusive"), "{stdout}");
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains("inconclusive (exit 0; --strict exits 9)")
            && stderr.contains("laps per run would decide (now 3)"),
        "{stderr}"
    );
    assert!(stdout.contains("laps per run would decide"), "{stdout}");
    let strict = serverbench(&[&args[..], &["--strict"]].concat());
    assert_eq!(strict.status.code(), Some(9), "{}", text(&strict.stdout));
}

#[test]
fn a_p99_from_a_few_latencies_per_lap_says_it_is_too_few_to_judge() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.db");
    let db = db.to_str().unwrap();
    // About 25 req/s for 10 s: about 250 requests a lap, 2 of them above the p99.
    let out = import(db, &two_runs(tmp.path(), 25.0, 1.0, 3, 0.01, 8));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = serverbench(&["history", "check", "--history", db]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("mine hello c64 h1 p99: p99 from about 2 latencies above it per lap"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("rps: p99 from"),
        "only the p99 row: {stdout}"
    );
}

#[test]
fn importing_again_records_nothing_new_and_list_and_show_read_the_series() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.db");
    let db = db.to_str().unwrap();
    let dirs = folders(tmp.path(), &[1.0, 1.0, 0.9], 3);
    assert!(import(db, &dirs).status.success());
    let again = import(db, &dirs);
    assert!(
        text(&again.stderr).contains("already recorded as run 1"),
        "{}",
        text(&again.stderr)
    );
    let list = text(&serverbench(&["history", "list", "--history", db]).stdout);
    assert!(
        list.contains("mine hello c64 h1") && list.contains("   3 "),
        "{list}"
    );
    let show = serverbench(&["history", "show", "mine hello", "--history", db]);
    assert!(
        text(&show.stdout).contains("c000002"),
        "{}",
        text(&show.stdout)
    );
    let none = serverbench(&["history", "show", "nobody", "--history", db]);
    assert_eq!(none.status.code(), Some(1));
    assert!(text(&none.stderr).contains("no series matches `nobody`"));
}

#[test]
fn the_ci_formats_are_written_to_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.db");
    let db = db.to_str().unwrap();
    let mut levels = vec![1.0; 5];
    levels.push(0.7);
    assert!(import(db, &folders(tmp.path(), &levels, 4))
        .status
        .success());
    let junit = tmp.path().join("check.xml");
    let out = serverbench(&[
        "history",
        "check",
        "--history",
        db,
        "--format",
        "junit",
        "-o",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(4));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<failure message=\"regression beyond 5.0%\""),
        "{xml}"
    );
    let bmf = serverbench(&["history", "check", "--history", db, "--format", "bmf"]);
    let json: serde_json::Value = serde_json::from_slice(&bmf.stdout).unwrap();
    assert!(json["mine hello c64 h1"]["throughput"]["value"].is_number());
    let html = tmp.path().join("trend.html");
    let out = serverbench(&[
        "history",
        "trend",
        "--history",
        db,
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
}

#[test]
fn a_foreign_history_file_and_a_corrupt_folder_are_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let foreign = tmp.path().join("notes.txt");
    std::fs::write(
        &foreign,
        "these are my notes, not a database at all, honestly\n",
    )
    .unwrap();
    let out = serverbench(&["history", "list", "--history", foreign.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("notes.txt") && err.contains("not a serverbench history"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let dirs = folders(tmp.path(), &[1.0], 5);
    std::fs::write(Path::new(&dirs[0]).join("results.jsonl"), "{not json}\n").unwrap();
    let db = tmp.path().join("history.db");
    let out = import(db.to_str().unwrap(), &dirs);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("results.jsonl:1"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn checking_an_empty_history_is_an_error_and_listing_it_says_how_to_fill_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.db");
    let db = db.to_str().unwrap();
    let list = serverbench(&["history", "list", "--history", db]);
    assert!(list.status.success());
    assert!(text(&list.stdout).contains("no runs yet"));
    let out = serverbench(&["history", "check", "--history", db]);
    assert_eq!(out.status.code(), Some(1));
}

/// An HTTP/1.1 keep-alive server inside this test process answering every request with
/// `Hello World!`, until the test ends.
fn in_process_server() -> u16 {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut out = stream;
                loop {
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let reply = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nHello World!";
                    if out.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn run_record_adds_each_run_to_the_history_with_its_commit_and_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let port = in_process_server();
    let url = format!("mine=http://127.0.0.1:{port}/");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/run-catalog");
    let db = tmp.path().join("h.db");
    for commit in ["aaaaaaa1", "bbbbbbb2"] {
        let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
            .args(["run", "--root", root.to_str().unwrap(), "--results"])
            .arg(tmp.path().join("results"))
            .args([
                "--url", &url, "-c", "1", "-d", "500ms", "--laps", "2", "--warmup", "0s",
            ])
            .args([
                "--record",
                "--history",
                db.to_str().unwrap(),
                "--commit",
                commit,
            ])
            .args(["--branch", "main"])
            .env("SERVERBENCH_CACHE", tmp.path().join("cache"))
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(err.contains("added as run"), "{err}");
    }
    let show = serverbench(&["history", "show", "mine", "--history", db.to_str().unwrap()]);
    let stdout = text(&show.stdout);
    assert!(
        stdout.contains("aaaaaaa") && stdout.contains("bbbbbbb"),
        "{stdout}"
    );
    assert!(stdout.contains("main"), "{stdout}");
}
