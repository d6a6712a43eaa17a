//! `serverbench doctor` on this machine: every check reported, the table within 120 columns.

use std::process::{Command, Output};

fn doctor(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("doctor")
        .args(["--probe", "200ms"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn doctor_reports_every_check_as_json_with_a_status() {
    let out = doctor(&["-f", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = checks.as_array().unwrap();
    assert_eq!(checks.len(), 13);
    for c in checks {
        let status = c["status"].as_str().unwrap();
        assert!(["ok", "warn", "unknown"].contains(&status), "{c}");
        if status == "warn" {
            assert!(c["fix"].is_string(), "a warning without a fix: {c}");
        }
    }
    assert!(checks.iter().any(|c| c["kind"] == "io_uring"));
}

#[test]
fn doctor_prints_a_table_within_120_columns_with_a_fix_under_each_warning() {
    let out = doctor(&[]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for line in text.lines() {
        assert!(
            line.chars().count() <= 120,
            "{} columns: {line}",
            line.len()
        );
    }
    let warns = text.lines().filter(|l| l.starts_with("warn ")).count();
    let fixes = text
        .lines()
        .filter(|l| l.trim_start().starts_with("fix: "))
        .count();
    assert_eq!(warns, fixes, "{text}");
    assert!(text.contains("steal"), "{text}");
}

#[test]
fn doctor_revert_with_nothing_applied_says_so() {
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["doctor", "--revert", "--root"])
        .arg(env!("CARGO_MANIFEST_DIR"))
        .env("SERVERBENCH_CACHE", cache.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("nothing to revert"));
}
