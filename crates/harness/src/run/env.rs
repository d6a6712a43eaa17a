//! Collecting `env.json` at the start of a run: the machine, the toolchains, the serverbench
//! commit, every server's version, the suite and the pinning (the typed
//! [`serverbench_results::env::Env`] is written and read by serverbench-results).

use crate::catalog::command::{output_within, version_of};
use crate::catalog::{availability, Availability, Catalog};
use crate::paths::Paths;
use crate::suite::Suite;
use serverbench_results::env::{Env, Git, Machine, Pinning, ServerVersion, Skipped, SuiteRecord};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The first line of a file, trimmed.
fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.lines().next().unwrap_or("").trim().to_string())
        .filter(|s| !s.is_empty())
}

/// `sh -c command` in `dir`, its output within `timeout`.
fn shell(command: &str, dir: &Path, timeout: Duration) -> Option<String> {
    let mut c = Command::new("sh");
    c.arg("-c").arg(command).current_dir(dir);
    output_within(c, timeout)
}

fn git_commit(root: &Path) -> Git {
    let commit = shell("git rev-parse HEAD", root, Duration::from_secs(5));
    let dirty =
        shell("git status --porcelain", root, Duration::from_secs(10)).map(|s| !s.is_empty());
    Git {
        commit: commit.filter(|c| c.len() == 40),
        dirty,
    }
}

/// Every catalog server's `version` output (servers that cannot run here are listed with why).
fn server_versions(catalog: &Catalog, paths: &Paths) -> BTreeMap<String, ServerVersion> {
    let mut map = BTreeMap::new();
    for s in &catalog.servers {
        let v = match availability(s, paths) {
            a @ (Availability::Unavailable { .. } | Availability::MissingCommands { .. }) => {
                ServerVersion {
                    available: false,
                    why: Some(a.to_string()),
                    ..ServerVersion::default()
                }
            }
            _ => ServerVersion {
                available: true,
                why: None,
                version: version_of(s, paths),
                framework_version: Some(s.manifest.framework_version.clone()),
                deviations: s
                    .manifest
                    .deviations
                    .iter()
                    .map(|(d, why)| (d.as_str().to_owned(), why.clone()))
                    .collect(),
            },
        };
        map.insert(s.id.clone(), v);
    }
    map
}

/// The suite as recorded: its own serialization, typed where reports read it.
pub fn suite_record(suite: &Suite) -> SuiteRecord {
    SuiteRecord::from(suite)
}

/// Builds `env.json`.
pub fn gather(
    paths: &Paths,
    catalog: &Catalog,
    suite: &Suite,
    pinning: &Pinning,
    skipped: &[Skipped],
    started_at: &str,
) -> Env {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let rustc = shell("rustc --version", &paths.root, Duration::from_secs(10));
    Env {
        serverbench_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        git: git_commit(&paths.root),
        started_at: Some(started_at.to_owned()),
        machine: Machine {
            cpu_model: serverbench_machine::process::cpu_model(),
            cpus_available: Some(cpus),
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
            os: read_trimmed("/etc/debian_version").map(|v| format!("Debian {v}")),
            governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            memory_kb: serverbench_machine::process::memory_kb(),
        },
        toolchains: BTreeMap::from([("rustc".to_owned(), rustc)]),
        servers: server_versions(catalog, paths),
        suite: Some(suite_record(suite)),
        load_tool: Some(crate::tools::describe(suite.tool)),
        pinning: Some(pinning.clone()),
        skipped: skipped.to_vec(),
        resumed: Vec::new(),
        hosts: None,
        doctor: None,
        database_floor: Vec::new(),
    }
}
