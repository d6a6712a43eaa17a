//! A suite's `find_max` profile through `serverbench run --hosts`: the server in the sb-server
//! namespace, each step of the search split across two client namespaces and merged
//! (bench/netns-hosts.sh). Needs root and `ip netns` (or SERVERBENCH_SKIP_NETNS=1); the bed takes its own
//! file lock (see netns/mod.rs).

mod netns;
mod skip;

use netns::{bed, processes_in, root, Bed};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// python/queue's capacity: 4 workers x 10 ms.
const CAPACITY: f64 = 400.0;

const SUITE: &str = r#"
name = "hosts-capacity"
description = "d"
reproduces = "none"
servers = ["python/queue"]
laps = 1
warmup = "500ms"

[[scenario]]
name = "hello"
paths = ["/hello"]
requires = "hello"

[[profile]]
name = "p99-60ms"
connections = 16
duration = "2s"
find_max = { slo = "SLO", start_rate = 100 }
"#;

/// `serverbench run SUITE --hosts …` of the queue fixture searching for p99 ≤ 60 ms, results
/// under `dir`.
fn run_over_hosts(bed: &Bed, dir: &Path) -> Command {
    run_for(bed, dir, "p99<=60ms")
}

/// [`run_over_hosts`] for the goal `slo`.
fn run_for(bed: &Bed, dir: &Path, slo: &str) -> Command {
    let suite = dir.join("hosts-capacity.toml");
    std::fs::write(&suite, SUITE.replace("SLO", slo)).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_serverbench"));
    cmd.args(["run", "--root"])
        .arg(root().join("crates/hosts/tests/fixtures/catalog"))
        .arg("--hosts")
        .arg(&bed.hosts)
        .args(["--server-host", "sb-server"])
        .args(["--client-hosts", "sb-client1,sb-client2", "--results"])
        .arg(dir.join("results"))
        .arg(&suite)
        .env("SERVERBENCH_CACHE", dir.join("cache"));
    cmd
}

/// Every lap record of the results folder under `dir` (none when there is none).
fn laps(dir: &Path) -> Vec<serde_json::Value> {
    let folders = std::fs::read_dir(dir.join("results")).into_iter().flatten();
    let folder = folders
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.jsonl").is_file());
    let text = folder.map(|f| std::fs::read_to_string(f.join("results.jsonl")).unwrap());
    let lines = text.unwrap_or_default();
    lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn names(clients: &serde_json::Value) -> Vec<String> {
    let clients = clients.as_array().expect("the client hosts");
    let name = |c: &serde_json::Value| c["host"].as_str().unwrap().to_string();
    clients.iter().map(name).collect()
}

#[test]
fn a_find_max_lap_over_two_client_hosts_records_the_servers_capacity_within_ten_percent() {
    let Some(bed) = bed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = run_over_hosts(&bed, dir.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let laps = laps(dir.path());
    assert_eq!(laps.len(), 1, "{laps:?}");
    let lap = &laps[0];
    assert_eq!(lap["status"], "ok", "{lap}");
    let capacity = &lap["load"]["capacity"];
    let found = capacity["capacity_rps"].as_f64().expect("a capacity");
    assert!(
        (found - CAPACITY).abs() <= 0.1 * CAPACITY,
        "found {found}/s, true {CAPACITY}/s: {capacity:#}"
    );
    let steps = capacity["steps"].as_array().unwrap();
    assert!(steps.len() >= 4, "a ramp and a bisection: {capacity:#}");
    // Each step's server CPU, sampled on the server host over that step alone; the lap's is
    // its capacity step's.
    for s in steps {
        let us = s["server_cpu_us_per_request"].as_f64();
        assert!(us.is_some_and(|us| us > 0.0), "{s}");
    }
    let at = steps
        .iter()
        .rev()
        .find(|s| s["met"] == true && s["rate_target"].as_f64() == Some(found))
        .unwrap();
    assert_eq!(
        lap["server_stats"]["cpu_us_per_request"], at["server_cpu_us_per_request"],
        "{lap}"
    );
    // The capacity step was split over both client hosts: their parts add up to it.
    let clients = &lap["hosts"]["clients"];
    assert_eq!(names(clients), ["sb-client1", "sb-client2"], "{lap}");
    let parts: Vec<u64> = clients
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["load"]["requests"].as_u64().unwrap())
        .collect();
    assert!(parts.iter().all(|&n| n > 0), "{parts:?}");
    let sum: u64 = parts.iter().sum();
    assert_eq!(lap["load"]["requests"].as_u64(), Some(sum), "{lap}");
    bed.assert_nothing_left();
}

/// The PIDs of the `serverbench load` processes (and their session wrappers) in `ns`.
fn loads_in(ns: &str) -> Vec<u32> {
    let procs = processes_in(ns).into_iter();
    procs
        .filter(|(_, c)| c.contains(" load "))
        .map(|(pid, _)| pid)
        .collect()
}

/// Waits until a `serverbench load` none of whose processes is in `before` runs in `ns` (a
/// step after those), and returns its PIDs.
fn wait_for_load_in(ns: &str, before: &[u32]) -> Vec<u32> {
    for _ in 0..1200 {
        let now = loads_in(ns);
        if !now.is_empty() && now.iter().all(|p| !before.contains(p)) {
            return now;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no new serverbench load started in {ns}");
}

/// The search of [`run_over_hosts`] started quietly, once its first step's load runs in
/// sb-client1 (returned: its PIDs there).
fn search_under_way(bed: &Bed, dir: &Path) -> (std::process::Child, Vec<u32>) {
    let child = run_over_hosts(bed, dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let first = wait_for_load_in("sb-client1", &[]);
    (child, first)
}

#[test]
fn a_client_host_dying_mid_search_fails_the_lap_naming_it_and_keeps_the_steps_so_far() {
    let Some(bed) = bed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (mut child, first) = search_under_way(&bed, dir.path());
    // The second step (200/s) released: its warm-up (1 s) over, it measures for 2 s. sb-client1
    // dies between the release and the result: a host fault, never the client's limit.
    wait_for_load_in("sb-client1", &first);
    std::thread::sleep(Duration::from_millis(2200));
    bed.script(&["kill-sshd", "sb-client1"]);
    bed.script(&["start-sshd", "sb-client1"]);
    assert_eq!(
        child.wait().unwrap().code(),
        Some(3),
        "a failed lap: exit 3"
    );
    let laps = laps(dir.path());
    let lap = &laps[0];
    assert_eq!(lap["status"], "failed", "{lap}");
    assert_eq!(lap["failure"]["kind"], "hosts", "{lap}");
    let why = lap["failure"]["detail"].as_str().unwrap();
    assert!(why.starts_with("sb-client1: ssh:"), "{why}");
    let capacity = &lap["load"]["capacity"];
    assert_eq!(capacity["ending"], "aborted", "{lap}");
    assert!(capacity["note"].as_str().unwrap().contains("sb-client1"));
    let steps = capacity["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "the step before is kept: {capacity:#}");
    assert!(steps[0]["client_limit"].is_null(), "{capacity:#}");
    // The failing step's record: what sb-client2 measured, if that step was released.
    let kept = names(&lap["hosts"]["clients"]);
    assert!(!kept.contains(&"sb-client1".to_string()), "{lap}");
    bed.assert_nothing_left();
}

#[test]
fn ctrl_c_mid_search_over_the_hosts_records_no_failure_and_leaves_nothing_behind() {
    let Some(bed) = bed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (mut child, _) = search_under_way(&bed, dir.path());
    std::thread::sleep(Duration::from_secs(5));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let failed = laps(dir.path())
        .into_iter()
        .filter(|l| l["status"] == "failed")
        .count();
    assert_eq!(failed, 0, "an interrupted lap is not a failure");
    bed.assert_nothing_left();
}

#[test]
fn a_goal_missed_at_the_first_rate_over_the_hosts_fails_the_lap_with_its_step_kept() {
    let Some(bed) = bed() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Every request takes 10 ms: p99 ≤ 5 ms holds at no rate.
    let out = run_for(&bed, dir.path(), "p99<=5ms").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let laps = laps(dir.path());
    let lap = &laps[0];
    assert_eq!(lap["status"], "failed", "{lap}");
    let why = lap["failure"]["detail"].as_str().unwrap();
    assert!(
        why.contains("the goal failed at the first rate, 100/s"),
        "{why}"
    );
    let capacity = &lap["load"]["capacity"];
    assert_eq!(capacity["ending"], "goal-missed-at-start", "{lap}");
    assert_eq!(capacity["steps"].as_array().unwrap().len(), 1, "{lap}");
    bed.assert_nothing_left();
}
