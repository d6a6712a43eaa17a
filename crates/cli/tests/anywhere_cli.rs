//! The binary works anywhere: installed into a prefix and run from a folder with no checkout
//! above it (no catalog, no SERVERBENCH_ROOT), it benchmarks your own server, checks one by URL,
//! keeps its results and cache out of any checkout, and says how to point at a catalog when a
//! command needs one. And what it records names its own commit, not the repository around the
//! catalog it was pointed at.

mod common;
#[path = "common/contract.rs"]
mod contract;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `cargo install --path crates/cli --root PREFIX` builds this package and copies its one binary
/// to PREFIX/bin; copying the binary cargo built for these tests there gives the same file in
/// the same place without a second (release) build of the workspace. What is under test is the
/// binary's behaviour away from its checkout: PREFIX is a temporary folder, so neither the
/// working folder nor the executable's folder has a checkout above it.
fn install(prefix: &Path) -> PathBuf {
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("serverbench");
    std::fs::copy(env!("CARGO_BIN_EXE_serverbench"), &exe).unwrap();
    exe
}

/// The installed binary run in `cwd` with no hint of a checkout: no SERVERBENCH_ROOT, no
/// SERVERBENCH_CACHE, HOME in the test's folder.
///
/// A copy just written may be briefly "busy" (ETXTBSY): a child forked by another test thread
/// while the copy was open for writing holds the descriptor until it execs, so running it is
/// retried for up to a few seconds, as Cargo's own test suite does.
fn installed(exe: &Path, cwd: &Path, home: &Path, args: &[&str]) -> Output {
    let mut tries = 0;
    loop {
        let out = Command::new(exe)
            .args(args)
            .current_dir(cwd)
            .env_remove("SERVERBENCH_ROOT")
            .env_remove("SERVERBENCH_CACHE")
            .env_remove("XDG_CACHE_HOME")
            .env("HOME", home)
            .output();
        match out {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other.unwrap(),
        }
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The one results folder under `parent`.
fn run_dir(parent: &Path) -> PathBuf {
    std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.jsonl").is_file())
        .unwrap_or_else(|| panic!("no results folder in {}", parent.display()))
}

fn env_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("env.json")).unwrap()).unwrap()
}

/// The commit of the checkout these tests were built from (`None` outside git): the one the
/// binary baked in, since cargo builds it again when HEAD moves.
fn source_commit() -> Option<String> {
    let out = Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| text(&out.stdout).trim().to_owned())
}

#[test]
fn an_installed_binary_benchmarks_and_verifies_your_server_from_a_folder_without_a_checkout() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = install(&tmp.path().join("prefix"));
    let (work, home) = (tmp.path().join("work"), tmp.path().join("home"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(work.join("fixture.py"), common::HELLO_PY).unwrap();
    let args = ["run", "--server", "mine=exec python3 fixture.py", "-c", "2"];
    let rest = ["-d", "1s", "--laps", "1", "--warmup", "0s"];
    let out = installed(&exe, &work, &home, &[&args[..], &rest[..]].concat());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Results in ./results, the cache in the user's cache folder, nothing else in the folder.
    let dir = run_dir(&work.join("results"));
    let records = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let lap: serde_json::Value = serde_json::from_str(records.lines().next().unwrap()).unwrap();
    assert_eq!(
        (lap["server"].as_str(), lap["status"].as_str()),
        (Some("mine"), Some("ok")),
        "{lap}"
    );
    assert!(lap["load"]["requests"].as_u64().unwrap() > 0, "{lap}");
    let mut left: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["fixture.py", "results"]);
    let env = env_json(&dir);
    assert_eq!(env["git"]["commit"].as_str(), source_commit().as_deref());
    assert!(
        env.get("catalog_git").is_none(),
        "no catalog was used: {env}"
    );
    // verify --url from the same folder.
    let port = contract::in_process_server();
    let url = format!("http://127.0.0.1:{port}");
    let verify = ["verify", "--url", &url, "--implements", "hello"];
    let out = installed(&exe, &work, &home, &verify);
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("PASS"), "{}", text(&out.stdout));
}

#[test]
fn a_catalog_command_outside_a_checkout_says_how_to_point_at_one() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = install(&tmp.path().join("prefix"));
    for args in [
        &["serve", "node/http"][..],
        &["list"],
        &["verify", "node/http"],
    ] {
        let out = installed(&exe, tmp.path(), tmp.path(), args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        assert!(
            stderr.contains("needs the catalog of a serverbench checkout")
                && stderr
                    .contains("run inside a checkout, pass --root DIR or set SERVERBENCH_ROOT"),
            "{args:?}: {stderr}"
        );
    }
}

/// A git repository holding a copy of the fixture catalog, with one commit; its hash.
fn catalog_in_another_repository(dir: &Path) -> String {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures");
    let from = fixtures.join("run-catalog/servers/python/fast");
    let to = dir.join("servers/python/fast");
    std::fs::create_dir_all(&to).unwrap();
    for f in std::fs::read_dir(&from).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
    }
    let server = fixtures.join("run-catalog/server.py");
    std::fs::copy(server, dir.join("server.py")).unwrap();
    std::fs::create_dir_all(dir.join("spec")).unwrap();
    std::fs::write(dir.join("spec/contract.md"), "the contract\n").unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
        text(&out.stdout).trim().to_owned()
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "a catalog"]);
    git(&["rev-parse", "HEAD"])
}

#[test]
fn env_json_names_the_binarys_commit_not_the_repository_around_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let other = catalog_in_another_repository(&repo);
    let results = tmp.path().join("results");
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["run", "--root"])
        .arg(&repo)
        .arg("--results")
        .arg(&results)
        .args(["--servers", "python/fast", "-c", "2", "-d", "500ms"])
        .args(["--laps", "1", "--warmup", "0s"])
        .env("SERVERBENCH_CACHE", tmp.path().join("cache"))
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let env = env_json(&run_dir(&results));
    let commit = env["git"]["commit"].as_str();
    assert_ne!(commit, Some(other.as_str()), "{env}");
    assert_eq!(commit, source_commit().as_deref(), "{env}");
    assert_eq!(env["catalog_git"]["commit"], other.as_str(), "{env}");
    assert_eq!(env["catalog_git"]["dirty"], false, "{env}");
    // The toolchain is a version or null (absent), never a shell's error.
    let rustc = &env["toolchains"]["rustc"];
    assert!(
        rustc.is_null() || rustc.as_str().unwrap().starts_with("rustc "),
        "{env}"
    );
    // --version names the same commit.
    let version = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("--version")
        .output()
        .unwrap();
    let short = commit.map_or("unknown".to_owned(), |c| c[..12].to_owned());
    assert!(
        text(&version.stdout).contains(&format!("(commit {short}")),
        "{version:?}"
    );
}
