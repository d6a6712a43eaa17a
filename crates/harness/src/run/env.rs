//! Collecting `env.json` at the start of a run: the machine, the toolchains, the binary's own
//! commit (baked in at build time) and the catalog's, every server's version, the suite and the
//! pinning (the typed [`serverbench_results::env::Env`] is written and read by
//! serverbench-results).

use crate::catalog::command::{output_within, version_of};
use crate::catalog::{availability, Availability, Catalog};
use crate::paths::Paths;
use crate::suite::Suite;
use serverbench_results::env::{Env, Git, Machine, ServerVersion, Skipped, SuiteRecord};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// `git ARGS` in `dir`, its trimmed output when it succeeded.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The commit of the repository holding the catalog at `root`, and whether its `servers/`
/// has uncommitted changes; nothing known when it is not in git.
pub fn catalog_commit(root: &Path) -> Git {
    let commit = git(root, &["rev-parse", "HEAD"]).filter(|c| c.len() == 40);
    let dirty = commit
        .as_ref()
        .and_then(|_| git(root, &["status", "--porcelain", "--", "servers"]))
        .map(|s| !s.is_empty());
    Git { commit, dirty }
}

/// `rustc --version`, `None` when rustc is not installed (never the shell's error).
fn rustc_version() -> Option<String> {
    let exe = crate::catalog::on_path("rustc")?;
    let mut c = Command::new(exe);
    c.arg("--version");
    output_within(c, Duration::from_secs(10)).filter(|v| v.starts_with("rustc "))
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

/// Builds `env.json`: its `git` is `opts.build`, the binary's own commit (baked in when it was
/// built); the catalog's commit is read from the root, when there is one.
pub fn gather(
    paths: &Paths,
    catalog: &Catalog,
    opts: &super::RunOptions,
    skipped: &[Skipped],
    started_at: &str,
) -> Env {
    let (suite, pinning) = (&opts.suite, &opts.pinning);
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    Env {
        serverbench_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        git: opts.build.clone(),
        catalog_git: paths.root.as_deref().map(catalog_commit),
        started_at: Some(started_at.to_owned()),
        machine: Machine {
            cpu_model: serverbench_machine::process::cpu_model(),
            cpus_available: Some(cpus),
            kernel: serverbench_machine::process::kernel_release(),
            os: serverbench_machine::process::debian_release(),
            governor: serverbench_machine::process::cpu_governor(),
            memory_kb: serverbench_machine::process::memory_kb(),
        },
        toolchains: BTreeMap::from([("rustc".to_owned(), rustc_version())]),
        servers: server_versions(catalog, paths),
        suite: Some(suite_record(suite)),
        load_tool: Some(crate::tools::describe(suite.tool)),
        pinning: Some(pinning.clone()),
        skipped: skipped.to_vec(),
        resumed: Vec::new(),
        hosts: opts.hosts.as_ref().map(|h| h.env.clone()),
        doctor: opts.doctor.clone(),
        database_floor: Vec::new(),
    }
}
