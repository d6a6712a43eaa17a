//! `env.json`: the machine, the toolchains' versions, the serverbench commit, the exact suite
//! parameters and the CPU pinning, so a result can be trusted and redone.
//!
//! One typed [`Env`], written by the harness and read by reports, diagnostics and `--resume`
//! through [`Env::read`] and [`Env::write`] only. Every key is optional on reading, so folders
//! written by older versions still report.

use crate::Tool;
use serde::{Deserialize, Serialize};
use serverbench_model::suite::{Profile, Scenario, ServerSelection, Suite};
use serverbench_model::{format_duration, parse_duration};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Errors reading or writing `env.json`.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// I/O on the file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not JSON, or not the shape of `env.json`.
    #[error("{}: not a serverbench env.json: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// serde's message.
        message: String,
    },
}

/// Everything recorded about the run's environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Env {
    /// The serverbench version that ran.
    #[serde(default)]
    pub serverbench_version: Option<String>,
    /// The commit the serverbench binary was built from, baked in at build time (runs before
    /// it: the commit of the checkout the run was started in).
    #[serde(default)]
    pub git: Git,
    /// The catalog's commit (the repository holding the `--root` used), when a catalog was
    /// used; absent in older runs and runs of your own servers only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_git: Option<Git>,
    /// RFC 3339 UTC start time.
    #[serde(default)]
    pub started_at: Option<String>,
    /// The machine.
    #[serde(default)]
    pub machine: Machine,
    /// Toolchain versions by name (`rustc`); `None` when the toolchain is not installed.
    #[serde(default)]
    pub toolchains: BTreeMap<String, Option<String>>,
    /// Every catalog server's version (or why it could not run).
    #[serde(default)]
    pub servers: BTreeMap<String, ServerVersion>,
    /// The suite as it ran.
    #[serde(default)]
    pub suite: Option<SuiteRecord>,
    /// The load tool and its version, e.g. `wrk 4.1.0-4`.
    #[serde(default)]
    pub load_tool: Option<String>,
    /// How server and client were placed on CPUs.
    #[serde(default)]
    pub pinning: Option<Pinning>,
    /// Servers the run did not measure, and why.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// Every `--resume` of this folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed: Vec<Resumed>,
    /// `run --hosts`: the machines the run used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<HostsEnv>,
    /// `serverbench doctor`'s checks of the machine at the start of the run (a short probe);
    /// absent in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doctor: Option<Vec<serverbench_model::doctor::Check>>,
    /// The database's floor at each concurrency of the run's `/db` laps (issue 22), measured at
    /// the end of the run; absent in older runs and runs without `/db` laps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub database_floor: Vec<crate::database::DatabaseFloor>,
}

/// The machines of a `run --hosts`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostsEnv {
    /// The inventory file.
    pub inventory: String,
    /// Where the servers ran.
    pub server: HostEnv,
    /// Where the load came from.
    pub clients: Vec<HostEnv>,
    /// Where the database of database laps ran, when not on the server host (`--db-host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<HostEnv>,
}

/// One machine as `serverbench hosts check` saw it at the start of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostEnv {
    /// Its inventory name.
    pub name: String,
    /// The address the others reach it at.
    pub address: String,
    /// CPUs available there.
    pub cpus: usize,
    /// The CPUs the inventory pins to (empty: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pinned: Vec<usize>,
    /// `serverbench --version` there.
    pub version: Option<String>,
    /// Its clock minus the controller's, in milliseconds, and the round trip bounding it.
    pub clock_offset_ms: f64,
    pub rtt_ms: f64,
}

/// A commit: the binary's, or the catalog's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Git {
    /// The full commit hash, when known.
    #[serde(default)]
    pub commit: Option<String>,
    /// Uncommitted changes (in the binary's sources at build time; in the catalog at the start).
    #[serde(default)]
    pub dirty: Option<bool>,
}

/// The machine the run was on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    /// `model name` of /proc/cpuinfo.
    #[serde(default)]
    pub cpu_model: Option<String>,
    /// CPUs in the affinity mask.
    #[serde(default)]
    pub cpus_available: Option<usize>,
    /// Kernel release.
    #[serde(default)]
    pub kernel: Option<String>,
    /// `Debian 12.x`.
    #[serde(default)]
    pub os: Option<String>,
    /// The CPU frequency governor, when exposed.
    #[serde(default)]
    pub governor: Option<String>,
    /// Total memory.
    #[serde(default)]
    pub memory_kb: Option<u64>,
}

/// One catalog server's version, or why it could not run here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerVersion {
    /// It could run here.
    #[serde(default)]
    pub available: bool,
    /// Why not, when unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Its `version` command's output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The manifest's `framework_version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework_version: Option<String>,
    /// Deviations from the contract its manifest declares, by key, with the reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub deviations: BTreeMap<String, String>,
}

/// The suite as it ran, typed (the model's [`Suite`] parts). Every key is optional on reading:
/// reports need only a few, and [`SuiteRecord::suite`] gives the whole suite back (for
/// `--resume`) when it was recorded whole.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SuiteRecord {
    /// Suite name.
    #[serde(default)]
    pub name: String,
    /// One line.
    #[serde(default)]
    pub description: Option<String>,
    /// The seed experiment it reproduces.
    #[serde(default)]
    pub reproduces: Option<String>,
    /// The server whose speed is 1.00x.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Laps per cell.
    #[serde(default)]
    pub laps: Option<u32>,
    /// Warm-up per lap, as written (`"2s"`, `"500ms"`).
    #[serde(default)]
    pub warmup: Option<Warmup>,
    /// The load tool.
    #[serde(default)]
    pub tool: Option<Tool>,
    /// Database scenarios: the servers' pool size (`DATABASE_POOL`) unless a profile sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<u32>,
    /// Catalog ids or `"all"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<ServerSelection>,
    /// What is requested.
    #[serde(default, rename = "scenario", skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<Scenario>,
    /// How hard.
    #[serde(default, rename = "profile", skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<Profile>,
    /// `until_ci`: laps went on until each cell's interval was within ±this percent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serverbench_model::suite::until_ci::pct"
    )]
    pub until_ci: Option<f64>,
    /// With `until_ci`: the least laps per cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_laps: Option<u32>,
    /// With `until_ci`: the most laps per cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_laps: Option<u32>,
}

/// A suite's warm-up as recorded: its text (`"2s"`), or seconds in hand-made files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Warmup {
    Text(String),
    Seconds(f64),
}

impl std::fmt::Display for Warmup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warmup::Text(t) => f.write_str(t),
            Warmup::Seconds(s) => write!(f, "{s}s"),
        }
    }
}

impl From<&Suite> for SuiteRecord {
    /// The suite as `env.json` records it: whole.
    fn from(s: &Suite) -> SuiteRecord {
        SuiteRecord {
            name: s.name.clone(),
            description: Some(s.description.clone()),
            reproduces: Some(s.reproduces.clone()),
            baseline: s.baseline.clone(),
            laps: Some(s.laps),
            warmup: Some(Warmup::Text(format_duration(Duration::from_secs_f64(
                s.warmup,
            )))),
            tool: Some(s.tool),
            pool: s.pool,
            servers: Some(s.servers.clone()),
            scenarios: s.scenarios.clone(),
            profiles: s.profiles.clone(),
            until_ci: s.until_ci,
            min_laps: s.min_laps,
            max_laps: s.max_laps,
        }
    }
}

impl SuiteRecord {
    /// The whole suite, when it was recorded whole (a folder of serverbench's; not a
    /// hand-made or partial `env.json`).
    pub fn suite(&self) -> Option<Suite> {
        let warmup = match self.warmup.as_ref()? {
            Warmup::Text(t) => parse_duration(t).ok()?.as_secs_f64(),
            Warmup::Seconds(s) => *s,
        };
        Some(Suite {
            name: self.name.clone(),
            description: self.description.clone()?,
            reproduces: self.reproduces.clone()?,
            baseline: self.baseline.clone(),
            servers: self.servers.clone()?,
            laps: self.laps?,
            warmup,
            tool: self.tool?,
            pool: self.pool,
            scenarios: self.scenarios.clone(),
            profiles: self.profiles.clone(),
            until_ci: self.until_ci,
            min_laps: self.min_laps,
            max_laps: self.max_laps,
        })
        .filter(|s| !s.scenarios.is_empty() && !s.profiles.is_empty())
    }
}

/// How server and client were placed on CPUs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// One `--resume` of a results folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resumed {
    /// When it started.
    pub started_at: String,
    /// How it was pinned.
    pub pinning: Pinning,
}

impl Env {
    /// Reads `path`; `Ok(None)` when there is no such file.
    pub fn read(path: &Path) -> Result<Option<Env>, EnvError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(EnvError::Io {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| EnvError::Invalid {
                path: path.to_path_buf(),
                message: e.to_string(),
            })
    }

    /// Writes `path` (pretty, with a final newline) via a temporary file and a rename.
    pub fn write(&self, path: &Path) -> Result<(), EnvError> {
        let io = |source| EnvError::Io {
            path: path.to_path_buf(),
            source,
        };
        let tmp = path.with_extension("json.tmp");
        let mut text = serde_json::to_string_pretty(self).map_err(|e| io(e.into()))?;
        text.push('\n');
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// The first line of `server`'s version (its `version` output, else the manifest's
    /// `framework_version`).
    pub fn server_version(&self, server: &str) -> Option<&str> {
        let v = self.servers.get(server)?;
        let text = v.version.as_deref().or(v.framework_version.as_deref())?;
        Some(text.lines().next().unwrap_or("").trim()).filter(|s| !s.is_empty())
    }

    /// The deviations from the contract `server` declares (key, reason).
    pub fn deviations(&self, server: &str) -> Option<&BTreeMap<String, String>> {
        self.servers
            .get(server)
            .map(|v| &v.deviations)
            .filter(|d| !d.is_empty())
    }

    /// The suite's baseline server.
    pub fn baseline(&self) -> Option<&str> {
        self.suite.as_ref()?.baseline.as_deref()
    }

    /// How many CPUs the server was pinned to (`None` when unpinned or unknown).
    pub fn server_cpu_count(&self) -> Option<usize> {
        let n = self.pinning.as_ref()?.server_cpus.len();
        (n > 0).then_some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_env_round_trips_through_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("env.json");
        let mut env = Env {
            serverbench_version: Some("0.1.0".into()),
            ..Env::default()
        };
        env.servers.insert(
            "node/http".into(),
            ServerVersion {
                available: true,
                version: Some("v20.20.2\nmore".into()),
                ..ServerVersion::default()
            },
        );
        env.write(&path).unwrap();
        let back = Env::read(&path).unwrap().unwrap();
        assert_eq!(back, env);
        assert_eq!(back.server_version("node/http"), Some("v20.20.2"));
        assert_eq!(back.server_version("go/net-http"), None);
    }

    #[test]
    fn a_missing_file_is_none_and_a_foreign_one_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("env.json");
        assert!(Env::read(&path).unwrap().is_none());
        std::fs::write(&path, "{\"pinning\": \"cpu 0\"}").unwrap();
        let err = Env::read(&path).unwrap_err().to_string();
        assert!(err.contains("env.json"), "{err}");
    }

    #[test]
    fn a_partial_suite_reads_typed_and_gives_no_whole_suite() {
        let text = r#"{"suite": {"name": "quick", "baseline": "node/http", "laps": 2,
                      "warmup": "500ms", "tool": "wrk", "scenario": [{"name": "hello"}]}}"#;
        let env: Env = serde_json::from_str(text).unwrap();
        let suite = env.suite.as_ref().unwrap();
        assert_eq!(env.baseline(), Some("node/http"));
        assert_eq!(suite.tool, Some(Tool::Wrk));
        assert_eq!(suite.scenarios[0].name, "hello");
        assert_eq!(suite.warmup, Some(Warmup::Text("500ms".into())));
        assert!(suite.suite().is_none(), "no servers nor profiles");
    }

    #[test]
    fn a_suite_recorded_whole_comes_back_whole() {
        let text = r#"name = "q"
description = "d"
reproduces = "none"
servers = ["node/http"]
warmup = "500ms"
[[scenario]]
name = "hello"
paths = ["/hello"]
tls = true
[[profile]]
connections = 10
duration = "2s"
"#;
        let suite = Suite::parse(text, Path::new("q.toml")).unwrap();
        let record = SuiteRecord::from(&suite);
        let json = serde_json::to_string(&record).unwrap();
        assert!(json.contains(r#""tls":true"#), "{json}");
        let back: SuiteRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back.suite(), Some(suite));
    }
}
