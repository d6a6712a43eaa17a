//! Ctrl-C typed into a real terminal: `serverbench run` under `script(1)`, which gives it a
//! pseudo-terminal, so the interrupt character reaches the terminal's foreground process group
//! as a user's Ctrl-C does (not a `kill -INT` of the harness alone). The lap in flight must be
//! dropped, never recorded as failed, and `--resume` must redo it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/run-catalog")
}

fn run_args(results: &Path) -> Vec<String> {
    let root = fixture_root();
    [
        "run",
        "--root",
        root.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
        "--servers",
        "python/fast",
        "--scenario",
        "hello",
        "-c",
        "2",
        "-d",
        "2s",
        "--laps",
        "2",
        "--warmup",
        "2s",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// `serverbench run` inside a pseudo-terminal; its whole output is collected in the background.
fn in_terminal(results: &Path) -> (Child, Arc<Mutex<String>>) {
    let bin = env!("CARGO_BIN_EXE_serverbench");
    let cmd = format!("exec {bin} {}", run_args(results).join(" "));
    let mut child = Command::new("script")
        .args(["-qfec", &cmd, "/dev/null"])
        .env("SERVERBENCH_CACHE", results.join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("script(1) from util-linux runs the test in a pseudo-terminal");
    let seen = Arc::new(Mutex::new(String::new()));
    let (mut out, sink) = (child.stdout.take().unwrap(), Arc::clone(&seen));
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    (child, seen)
}

fn wait_for(seen: &Mutex<String>, text: &str) {
    let start = Instant::now();
    while !seen.lock().unwrap().contains(text) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "never saw {text:?}:\n{}",
            seen.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_exit(child: &mut Child) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("serverbench did not stop after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn records(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn results_dir(results: &Path) -> PathBuf {
    std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("env.json").is_file())
        .expect("a results folder")
}

/// Types Ctrl-C once `phase` shows, then resumes and counts the laps.
fn ctrl_c_during_then_resume(phase: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let (mut child, seen) = in_terminal(tmp.path());
    wait_for(&seen, phase);
    std::thread::sleep(Duration::from_millis(300));
    child.stdin.as_mut().unwrap().write_all(b"\x03").unwrap();
    let code = wait_exit(&mut child);
    let output = seen.lock().unwrap().clone();
    assert_eq!(code, 130, "{output}");
    let dir = results_dir(tmp.path());
    let before = records(&dir);
    assert!(
        before.iter().all(|r| r["status"] == "ok"),
        "a cancelled lap was recorded as failed: {before:?}\n{output}"
    );
    assert!(before.len() < 2, "Ctrl-C came after the run: {output}");
    let mut args = run_args(tmp.path());
    args.extend(["--resume".to_owned(), dir.display().to_string()]);
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(&args)
        .env("SERVERBENCH_CACHE", tmp.path().join("cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let after = records(&dir);
    let laps: Vec<u64> = after.iter().map(|r| r["lap"].as_u64().unwrap()).collect();
    assert_eq!(laps.len(), 2, "{after:?}");
    assert!(laps.contains(&1) && laps.contains(&2), "{laps:?}");
    assert!(after.iter().all(|r| r["status"] == "ok"), "{after:?}");
}

#[test]
fn ctrl_c_in_a_terminal_during_warm_up_drops_the_lap_and_resume_redoes_it() {
    ctrl_c_during_then_resume("warm-up");
}

#[test]
fn ctrl_c_in_a_terminal_during_a_lap_drops_it_and_resume_redoes_it() {
    ctrl_c_during_then_resume("lap 1/2");
}
