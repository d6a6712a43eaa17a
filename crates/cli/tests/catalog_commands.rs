//! `serverbench list` and `serverbench setup` against the fixture catalog.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/catalog")
}

fn serverbench(root: &Path, cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(args)
        .arg("--root")
        .arg(root)
        .env("SERVERBENCH_CACHE", cache)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn line_of<'a>(text: &'a str, id: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(&format!("{id} ")))
        .unwrap_or_else(|| panic!("{id} not listed in\n{text}"))
}

#[test]
fn list_shows_why_servers_cannot_run() {
    let cache = tempfile::tempdir().unwrap();
    let out = serverbench(&fixture_root(), cache.path(), &["list"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(line_of(&text, "python/unavailable").ends_with("unavailable: needs a GPU"));
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("missing serverbench-no-such-tool (apt: serverbench-no-such-package)"),
        "{text}"
    );
    assert!(line_of(&text, "python/setup-counter").ends_with("needs setup"));
    let good = line_of(&text, "python/good");
    assert!(
        good.contains("hello routes json payload pingpong echo"),
        "{good}"
    );
    assert!(good.ends_with("ready"), "{good}");
}

#[test]
fn list_of_the_real_catalog_fits_120_columns() {
    let cache = tempfile::tempdir().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = serverbench(&root, cache.path(), &["list"]);
    let text = stdout(&out);
    assert!(text.lines().count() > 30, "{text}");
    for line in text.lines() {
        let n = line.chars().count();
        assert!(n <= 120, "{n} columns: {line}");
    }
}

#[test]
fn list_shows_declared_deviations_by_key_and_json_gives_the_reason() {
    let cache = tempfile::tempdir().unwrap();
    let out = serverbench(&fixture_root(), cache.path(), &["list"]);
    let text = stdout(&out);
    assert!(
        line_of(&text, "python/deviant").contains("  http10_keep_alive  "),
        "{text}"
    );
    assert!(line_of(&text, "python/good").contains("  -  "), "{text}");
    let out = serverbench(&fixture_root(), cache.path(), &["list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let deviant = v
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "python/deviant")
        .unwrap();
    let why = deviant["deviations"]["http10_keep_alive"].as_str().unwrap();
    assert!(why.contains("closes every HTTP/1.0 connection"), "{why}");
}

#[test]
fn list_json_is_an_array_with_a_status_per_server() {
    let cache = tempfile::tempdir().unwrap();
    let out = serverbench(&fixture_root(), cache.path(), &["list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let good = v
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "python/good")
        .unwrap();
    assert_eq!(good["status"], "ready");
    assert_eq!(good["implements"].as_array().unwrap().len(), 6);
}

#[test]
fn list_shows_a_broken_manifest_with_its_line_next_to_the_others() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("spec")).unwrap();
    std::fs::write(root.path().join("spec/contract.md"), "x").unwrap();
    let good = fixture_root().join("servers/python/crash/server.toml");
    let text = std::fs::read_to_string(good).unwrap();
    for (name, body) in [
        ("ok", text.replace("python/crash", "python/ok")),
        (
            "bad",
            text.replace("python/crash", "python/bad") + "colour = 1\n",
        ),
    ] {
        let dir = root.path().join("servers/python").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("server.toml"), body).unwrap();
    }
    let out = serverbench(root.path(), root.path(), &["list"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(line_of(&text, "python/ok").ends_with("ready"));
    let bad = line_of(&text, "python/bad");
    assert!(bad.contains("server.toml:"), "{bad}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("key `commands.colour`"), "{text}");
}

#[test]
fn setup_runs_once_then_reports_up_to_date() {
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "setup",
        "--no-apt",
        "python/setup-counter",
        "python/unavailable",
    ];
    let first = serverbench(&fixture_root(), cache.path(), &args);
    assert!(first.status.success(), "{}", stdout(&first));
    let text = stdout(&first);
    assert!(text.contains("[python/setup-counter] ok: setup "), "{text}");
    assert!(
        text.contains("[python/unavailable] skipped: unavailable: needs a GPU"),
        "{text}"
    );
    let second = serverbench(&fixture_root(), cache.path(), &args);
    assert!(stdout(&second).contains("[python/setup-counter] ok: up to date"));
    let count = std::fs::read_to_string(cache.path().join("setup-count")).unwrap();
    assert_eq!(count.lines().count(), 1);
}

/// A server folder in a new root whose setup command is `setup` (a copy of setup-counter's
/// manifest).
fn root_with_setup(name: &str, setup: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("spec")).unwrap();
    std::fs::write(root.path().join("spec/contract.md"), "x").unwrap();
    let manifest = fixture_root().join("servers/python/setup-counter/server.toml");
    let text = std::fs::read_to_string(manifest)
        .unwrap()
        .replace("python/setup-counter", &format!("python/{name}"))
        .replace(
            "setup = 'echo ran >> \"$SERVERBENCH_CACHE/setup-count\"'",
            &format!("setup = '{setup}'"),
        );
    let dir = root.path().join("servers/python").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("server.toml"), text).unwrap();
    root
}

#[test]
fn setup_prints_one_line_per_server_within_120_columns_and_logs_the_commands_whole() {
    // A 561-column command, as long as the longest of `make bench`'s, succeeding and failing.
    let long = format!("true {}", "--some-flag=value ".repeat(31));
    let ok = root_with_setup("long", &long);
    let failing = root_with_setup(
        "long-fail",
        &format!("{long}; echo {}; exit 3", "y".repeat(300)),
    );
    for (root, code) in [(&ok, 0), (&failing, 7)] {
        let out = serverbench(root.path(), root.path(), &["setup", "--no-apt"]);
        assert_eq!(out.status.code(), Some(code));
        let text = stdout(&out) + &String::from_utf8_lossy(&out.stderr);
        for line in text.lines() {
            assert!(
                line.chars().count() <= 120,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        let log = std::fs::read_dir(root.path().join("logs"))
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect::<String>();
        assert!(
            log.contains(&long),
            "the setup log holds the whole command: {log}"
        );
    }
    let out = serverbench(ok.path(), ok.path(), &["setup", "--no-apt", "--force"]);
    let text = stdout(&out);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("[python/long]"))
        .collect();
    assert_eq!(lines.len(), 1, "one line for the server: {text}");
    assert!(lines[0].starts_with("[python/long] ok: setup "), "{text}");
}

#[test]
fn a_failing_setup_exits_non_zero_with_the_log_tail() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("spec")).unwrap();
    std::fs::write(root.path().join("spec/contract.md"), "x").unwrap();
    let text =
        std::fs::read_to_string(fixture_root().join("servers/python/setup-counter/server.toml"))
            .unwrap()
            .replace("python/setup-counter", "python/failing")
            .replace("echo ran >>", "echo compiler exploded; exit 2; echo >>");
    let dir = root.path().join("servers/python/failing");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("server.toml"), text).unwrap();
    let out = serverbench(root.path(), root.path(), &["setup", "--no-apt"]);
    assert_eq!(out.status.code(), Some(7), "a failed setup, not bad input");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[python/failing] FAILED at setup"), "{err}");
    assert!(err.contains("compiler exploded"), "{err}");
    assert!(!root.path().join("stamps/python__failing").exists());
}

#[test]
fn an_unknown_server_names_the_closest_ones() {
    let cache = tempfile::tempdir().unwrap();
    let out = serverbench(&fixture_root(), cache.path(), &["setup", "python/god"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no server `python/god`"), "{err}");
    assert!(err.contains("python/good"), "{err}");
}

#[test]
fn list_takes_format_json_and_its_old_spelling_json_alike() {
    let cache = tempfile::tempdir().unwrap();
    let new = serverbench(&fixture_root(), cache.path(), &["list", "-f", "json"]);
    let old = serverbench(&fixture_root(), cache.path(), &["list", "--json"]);
    assert!(
        new.status.success(),
        "{}",
        String::from_utf8_lossy(&new.stderr)
    );
    assert_eq!(stdout(&new), stdout(&old));
    assert!(stdout(&new).trim_start().starts_with('['));
}

#[test]
fn setup_takes_servers_by_flag_as_run_does() {
    let cache = tempfile::tempdir().unwrap();
    let args = ["setup", "--no-apt", "--servers", "python/god"];
    let out = serverbench(&fixture_root(), cache.path(), &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no server `python/god`"), "{err}");
}

#[test]
fn setup_with_a_suite_sets_up_only_the_servers_that_suite_would_run() {
    let cache = tempfile::tempdir().unwrap();
    let suite = cache.path().join("json.toml");
    std::fs::write(
        &suite,
        r#"name = "json-only"
description = "GET /json on two servers, one of which lacks json"
reproduces = "none: a test"
servers = ["python/setup-counter", "python/good"]

[[scenario]]
name = "json"
paths = ["/json"]
requires = "json"

[[profile]]
name = "c1"
connections = 1
duration = "1s"
"#,
    )
    .unwrap();
    let out = serverbench(
        &fixture_root(),
        cache.path(),
        &["setup", "--no-apt", "--suite", suite.to_str().unwrap()],
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("[python/good]"), "{text}");
    assert!(!text.contains("setup-counter"), "{text}");
    assert!(
        !cache.path().join("setup-count").exists(),
        "setup-counter (no json) was set up"
    );
}
