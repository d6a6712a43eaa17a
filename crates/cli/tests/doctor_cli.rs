//! `serverbench doctor` on this machine: every check reported, the table within 120 columns.

use std::path::Path;
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
    assert_eq!(checks.len(), 15);
    for c in checks {
        let status = c["status"].as_str().unwrap();
        assert!(["ok", "warn", "unknown"].contains(&status), "{c}");
        if status == "warn" {
            assert!(c["fix"].is_string(), "a warning without a fix: {c}");
        }
    }
    for kind in ["io_uring", "udp_buffers", "udp_offload"] {
        assert!(checks.iter().any(|c| c["kind"] == kind), "{kind}");
    }
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
fn a_root_that_is_not_one_is_an_error_not_another_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["doctor", "--revert", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not hold servers/"));
}

#[test]
fn doctor_revert_with_nothing_applied_says_so() {
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["doctor", "--revert", "--root"])
        .arg(workspace())
        .env("SERVERBENCH_CACHE", cache.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("nothing to revert"));
}

/// A fake sysfs and procfs tree with the settings doctor fixes, all in need of a fix: two CPUs
/// on `powersave`, boost on, a short port range, tcp_tw_reuse off, and somaxconn at 128.
fn fake_machine(root: &Path) {
    let files = [
        ("sys/devices/system/cpu/online", "0-1\n"),
        (
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "powersave\n",
        ),
        (
            "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
            "powersave\n",
        ),
        ("sys/devices/system/cpu/cpufreq/boost", "1\n"),
        ("proc/sys/net/ipv4/ip_local_port_range", "32768\t40000\n"),
        ("proc/sys/net/ipv4/tcp_tw_reuse", "0\n"),
        ("proc/sys/net/core/somaxconn", "128\n"),
    ];
    for (path, text) in files {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
}

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path))
        .unwrap()
        .trim()
        .to_owned()
}

/// The checkout: the project root, whose cache holds the undo record.
fn workspace() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `doctor` on the fake tree `sys`, its undo record in the cache `cache` (and a state folder
/// beside it, should the record ever be looked for there).
fn doctor_on(sys: &Path, cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["doctor", "--probe", "100ms", "--root"])
        .arg(workspace())
        .arg("--sysroot")
        .arg(sys)
        .args(args)
        .env("SERVERBENCH_CACHE", cache)
        .env("XDG_STATE_HOME", cache.join("state"))
        .output()
        .unwrap()
}

const GOV0: &str = "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";

#[test]
fn doctor_apply_stopped_halfway_leaves_a_record_that_revert_restores_in_full() {
    let dir = tempfile::tempdir().unwrap();
    let (sys, cache) = (dir.path().join("sys"), dir.path().join("cache"));
    fake_machine(&sys);
    // somaxconn, the last setting doctor writes, is a symlink: doctor refuses to write through
    // it, so --apply stops after the settings before it.
    let somaxconn = sys.join("proc/sys/net/core/somaxconn");
    let aside = dir.path().join("somaxconn-elsewhere");
    std::fs::rename(&somaxconn, &aside).unwrap();
    std::os::unix::fs::symlink(&aside, &somaxconn).unwrap();

    let out = doctor_on(&sys, &cache, &["--apply"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stderr.contains("stopped after changing 5 settings"),
        "{stderr}"
    );
    assert!(stderr.contains("/proc/sys/net/core/somaxconn"), "{stderr}");
    assert_eq!(stdout.matches("\nset ").count(), 5, "{stdout}");
    assert_eq!(read(&sys, GOV0), "performance");
    assert_eq!(read(&sys, "proc/sys/net/ipv4/tcp_tw_reuse"), "1");
    assert_eq!(read(dir.path(), "somaxconn-elsewhere"), "128");
    // Six lines: each old value is recorded before its write, somaxconn's too.
    let record = std::fs::read_to_string(cache.join("doctor-undo.jsonl")).unwrap();
    assert_eq!(record.lines().count(), 6, "{record}");

    let out = doctor_on(&sys, &cache, &["--revert"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fresh = dir.path().join("fresh");
    fake_machine(&fresh);
    for path in [
        GOV0,
        "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
        "sys/devices/system/cpu/cpufreq/boost",
        "proc/sys/net/ipv4/ip_local_port_range",
        "proc/sys/net/ipv4/tcp_tw_reuse",
    ] {
        assert_eq!(read(&sys, path), read(&fresh, path), "{path}");
    }
    assert!(!cache.join("doctor-undo.jsonl").exists());
}

#[test]
fn doctor_revert_refuses_a_symlinked_undo_record_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (sys, cache) = (dir.path().join("sys"), dir.path().join("cache"));
    fake_machine(&sys);
    std::fs::write(sys.join(GOV0), "performance\n").unwrap();
    let planted = dir.path().join("planted.jsonl");
    std::fs::write(
        &planted,
        "{\"path\":\"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor\",\
         \"old\":\"powersave\",\"new\":\"performance\"}\n",
    )
    .unwrap();
    std::fs::create_dir_all(&cache).unwrap();
    std::os::unix::fs::symlink(&planted, cache.join("doctor-undo.jsonl")).unwrap();

    let out = doctor_on(&sys, &cache, &["--revert"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("refused as an undo record: a symlink"),
        "{stderr}"
    );
    assert_eq!(read(&sys, GOV0), "performance");
    assert!(planted.exists());
}

#[test]
fn doctor_revert_refuses_a_path_outside_its_settings_naming_it_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (sys, cache) = (dir.path().join("sys"), dir.path().join("cache"));
    fake_machine(&sys);
    std::fs::write(sys.join(GOV0), "performance\n").unwrap();
    std::fs::create_dir_all(sys.join("etc")).unwrap();
    std::fs::write(sys.join("etc/sudoers"), "root ALL=(ALL) ALL\n").unwrap();
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(
        cache.join("doctor-undo.jsonl"),
        "{\"path\":\"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor\",\
         \"old\":\"powersave\",\"new\":\"performance\"}\n\
         {\"path\":\"/etc/sudoers\",\"old\":\"ALL ALL=(ALL) NOPASSWD: ALL\",\"new\":\"x\"}\n",
    )
    .unwrap();

    let out = doctor_on(&sys, &cache, &["--revert"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            ":2: refused as an undo record: /etc/sudoers is not a setting doctor changes"
        ),
        "{stderr}"
    );
    assert_eq!(read(&sys, GOV0), "performance");
    assert_eq!(read(&sys, "etc/sudoers"), "root ALL=(ALL) ALL");
}
