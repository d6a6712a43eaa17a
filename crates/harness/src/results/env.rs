//! `env.json`: the machine, the toolchains' versions, the serverbench commit, the exact suite
//! parameters and the CPU pinning, so a result can be trusted and redone.

use crate::catalog::{availability, Availability, Catalog};
use crate::paths::Paths;
use crate::suite::Suite;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How server and client were placed on CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pinning {
    /// CPUs the server's process group is pinned to (empty = not pinned).
    pub server_cpus: Vec<usize>,
    /// CPUs the load tool is pinned to (empty = not pinned).
    pub client_cpus: Vec<usize>,
    /// `WORKERS` given to servers.
    pub workers: usize,
    /// `default (first half / second half of the affinity mask)`, `flags` or `one CPU: no pinning`.
    pub how: String,
}

/// A server the run did not measure, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Catalog id (or the unknown name).
    pub server: String,
    /// Why.
    pub why: String,
}

/// The first line of a file, trimmed.
fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.lines().next().unwrap_or("").trim().to_string())
        .filter(|s| !s.is_empty())
}

fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// Runs `sh -c command` in `dir` and returns its output (stdout, else stderr), killing it after
/// `timeout`.
pub fn command_output(command: &str, dir: &Path, timeout: Duration) -> Option<String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    let text = if out.stdout.iter().any(|b| !b.is_ascii_whitespace()) {
        out.stdout
    } else {
        out.stderr
    };
    Some(String::from_utf8_lossy(&text).trim().to_string())
}

fn git_commit(root: &Path) -> Value {
    let commit = command_output("git rev-parse HEAD", root, Duration::from_secs(5));
    let dirty = command_output("git status --porcelain", root, Duration::from_secs(10))
        .map(|s| !s.is_empty());
    json!({ "commit": commit.filter(|c| c.len() == 40), "dirty": dirty })
}

/// Every catalog server's `version` output (servers that cannot run here are listed with why).
fn server_versions(catalog: &Catalog, paths: &Paths) -> Value {
    let mut map = serde_json::Map::new();
    for s in &catalog.servers {
        let v = match availability(s, paths) {
            a @ (Availability::Unavailable { .. } | Availability::MissingCommands { .. }) => {
                json!({ "available": false, "why": a.to_string() })
            }
            _ => {
                let out = command_output(
                    &s.manifest.commands.version,
                    &s.dir,
                    Duration::from_secs(10),
                );
                json!({ "available": true, "version": out, "framework_version": s.manifest.framework_version })
            }
        };
        map.insert(s.id.clone(), v);
    }
    Value::Object(map)
}

/// Builds `env.json`.
pub fn collect(
    paths: &Paths,
    catalog: &Catalog,
    suite: &Suite,
    pinning: &Pinning,
    skipped: &[Skipped],
    started_at: &str,
) -> Value {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    json!({
        "serverbench_version": env!("CARGO_PKG_VERSION"),
        "git": git_commit(&paths.root),
        "started_at": started_at,
        "machine": {
            "cpu_model": cpu_model(),
            "cpus_available": cpus,
            "kernel": read_trimmed("/proc/sys/kernel/osrelease"),
            "os": read_trimmed("/etc/debian_version").map(|v| format!("Debian {v}")),
            "governor": read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            "memory_kb": std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
                m.lines().next().and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse::<u64>().ok())
            }),
        },
        "toolchains": {
            "rustc": command_output("rustc --version", &paths.root, Duration::from_secs(10)),
        },
        "servers": server_versions(catalog, paths),
        "suite": suite,
        "load_tool": crate::tools::describe(suite.tool),
        "pinning": pinning,
        "skipped": skipped,
    })
}

/// Writes `value` to `path` (pretty, with a final newline) via a temporary file and a rename.
pub fn write(path: &Path, value: &Value) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}
