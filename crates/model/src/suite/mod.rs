//! Suites: `suites/*.toml`, parsed strictly (unknown keys are errors naming file, line and key).
//!
//! A suite names the servers to run, the scenarios (what is requested) and the load profiles
//! (how hard), the number of laps, the warm-up and the load tool.

use crate::spec::{Address, LoadSpec, Origin, Table, Work};
use crate::toml_pos::line_of_key;
use crate::Feature;
use crate::Tool;
pub use crate::{Mode, Protocol, TlsResume, Transport};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Default number of laps.
pub const DEFAULT_LAPS: u32 = 3;
/// The pool size a database lap gives the server when the suite names none.
pub const DEFAULT_POOL: u32 = 16;
/// Default warm-up in seconds.
pub const DEFAULT_WARMUP_S: f64 = 2.0;
/// The longest lap `--quick` keeps for a suite's shortest profile, in seconds (longer profiles
/// keep their ratio to it).
pub const QUICK_MAX_DURATION_S: f64 = 2.0;

/// A parse or validation error, naming the file, the line and the key.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The suite file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Bad TOML, an unknown key, a wrong type, a missing key or an invalid value.
    #[error("{}:{line}: {key}: {message}", file.display())]
    Invalid {
        /// The suite file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// The offending key, e.g. `profile[2].duration`.
        key: String,
        /// What is wrong.
        message: String,
    },
}

/// Which servers a suite runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ServerSelection {
    /// `"all"`: every catalog server that can run here and implements a scenario.
    All(AllServers),
    /// Catalog ids.
    List(Vec<String>),
}

/// The literal `"all"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AllServers {
    /// Every server.
    All,
}

/// One `[[scenario]]`: what is requested, and over which protocol.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Label in results, e.g. `hello`, `routes`, `echo-stream`.
    pub name: String,
    /// What each connection does (`mode`, `paths`, `message`, `size`, `binary`,
    /// `reconnect_every`, `mix`, `method`, `body`, `body_size`), shared with the lap record.
    /// [`Suite::load`] makes `mix` absolute and reads its entries.
    #[serde(flatten)]
    pub work: Work,
    /// How it travels: `protocol` (`h1`, `h2` needs the feature `h2`, `h2c` the feature
    /// `h2c`), `tls` (needs the feature `tls`, implied by `protocol = "h2"`), `new_conn`,
    /// `tls_resume` and `streams`, as keys of the scenario.
    #[serde(flatten)]
    pub transport: Transport,
    /// Contract features a server must implement to run this scenario.
    #[serde(default, deserialize_with = "one_or_many")]
    pub requires: Vec<Feature>,
    /// Only the profiles of these connection counts (empty: every profile), e.g. the
    /// database suite's queries-per-request points at one concurrency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<u32>,
    /// `http`: the body sent `Transfer-Encoding: chunked`, in `chunk_size` pieces.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chunked: bool,
    /// With `chunked`: bytes per chunk (`"16KB"`; default [`crate::spec::DEFAULT_CHUNK_SIZE`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::size::opt_text"
    )]
    pub chunk_size: Option<u64>,
}

impl Scenario {
    /// Whether the suite runs this scenario at `profile` (see [`Scenario::connections`]).
    pub fn runs_at(&self, profile: &Profile) -> bool {
        self.connections.is_empty() || self.connections.contains(&profile.connections)
    }
}

/// One `[[profile]]`: how hard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Label in results, e.g. `c100`; defaults to `<connections>conn/<duration or requests>`.
    #[serde(default)]
    pub name: String,
    /// Concurrent connections.
    pub connections: u32,
    /// Client threads (default: the tool's default, i.e. the client CPUs for serverbench).
    #[serde(default)]
    pub threads: Option<u32>,
    /// Duration of a lap, e.g. `"10s"` (exclusive with `requests`).
    #[serde(default, with = "opt_duration")]
    pub duration: Option<f64>,
    /// Requests per lap (exclusive with `duration`).
    #[serde(default)]
    pub requests: Option<u64>,
    /// Requests in flight per connection (HTTP pipelining).
    #[serde(default = "one")]
    pub pipeline: u32,
    /// Open-loop rate, requests/s in total.
    #[serde(default)]
    pub rate: Option<f64>,
    /// A core sweep: run each server at each of these server CPU counts (`[1, 2, 4, "all"]`),
    /// `WORKERS` following; see [`Suite::expand_sweeps`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_cpus: Vec<CpuCount>,
    /// Set by [`Suite::expand_sweeps`]: the server CPU count of this expanded profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    /// Database scenarios: the server's pool size (`DATABASE_POOL`); default the suite's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<u32>,
    /// A capacity search per lap (`find_max = { slo = "p99<=5ms" }`): `duration` is each
    /// step's length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find_max: Option<crate::capacity::FindMax>,
}

/// A whole suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// Short name, used in the results folder name.
    pub name: String,
    /// One line.
    pub description: String,
    /// Which seed experiment it reproduces (`/work/shared/seeds/…`), or `none`.
    pub reproduces: String,
    /// Server whose speed is 1.00x in reports.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Catalog ids or `"all"`.
    pub servers: ServerSelection,
    /// Laps per server x scenario x profile.
    #[serde(default = "default_laps")]
    pub laps: u32,
    /// Warm-up before each measured lap, not recorded (e.g. `"2s"`).
    #[serde(default = "default_warmup", with = "duration")]
    pub warmup: f64,
    /// The load tool.
    #[serde(default)]
    pub tool: Tool,
    /// Database scenarios: the server's pool size (`DATABASE_POOL`) unless a profile sets its
    /// own; default [`DEFAULT_POOL`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<u32>,
    /// Laps go on until each cell's 95% interval of the median is within ±this percent
    /// (`"5%"`), between `min_laps` and `max_laps` ([`Suite::until_ci_rule`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "until_ci::pct"
    )]
    pub until_ci: Option<f64>,
    /// With `until_ci`: laps every cell runs first (default: `laps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_laps: Option<u32>,
    /// With `until_ci`: laps after which a cell stops, clear or not (default: 3 x `laps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_laps: Option<u32>,
    /// What is requested.
    #[serde(rename = "scenario")]
    pub scenarios: Vec<Scenario>,
    /// How hard.
    #[serde(rename = "profile")]
    pub profiles: Vec<Profile>,
}

fn one() -> u32 {
    1
}
fn default_laps() -> u32 {
    DEFAULT_LAPS
}
fn default_warmup() -> f64 {
    DEFAULT_WARMUP_S
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Feature>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(Feature),
        Many(Vec<Feature>),
    }
    Ok(
        match OneOrMany::deserialize(d).map_err(|_| {
            serde::de::Error::custom(format!(
                "expected a feature or a list of features ({})",
                Feature::ALL.map(|f| f.as_str()).join(" ")
            ))
        })? {
            OneOrMany::One(f) => vec![f],
            OneOrMany::Many(v) => v,
        },
    )
}

impl Profile {
    /// How hard scenario `s` is loaded at this profile (the scenario gives the chunk size).
    pub fn pace(&self, s: &Scenario) -> crate::spec::Pace {
        crate::spec::Pace {
            connections: self.connections,
            threads: self.threads,
            duration: self
                .duration
                .map(|d| std::time::Duration::try_from_secs_f64(d).unwrap_or_default()),
            requests: self.requests,
            pipeline: self.pipeline,
            rate: self.rate,
            chunked: s.chunk(),
        }
    }

    /// Changes how long the profile runs and keeps its label truthful: a default label is
    /// recomputed, a custom one ending in the old length (`t4c100/30s`) gets the new one,
    /// any other custom label gets the new length appended in brackets.
    pub fn set_length(&mut self, duration: Option<f64>, requests: Option<u64>) {
        if (duration, requests) == (self.duration, self.requests) {
            return;
        }
        let old_length = self.length_label();
        let was_default = self.name == self.default_name();
        (self.duration, self.requests) = (duration, requests);
        let new_length = self.length_label();
        self.name = match self.name.strip_suffix(&old_length) {
            _ if was_default => self.default_name(),
            Some(stem) if stem.ends_with('/') => format!("{stem}{new_length}"),
            _ => format!("{} ({new_length})", self.name),
        };
    }

    /// `10s`, `10000req` or empty.
    fn length_label(&self) -> String {
        match (self.duration, self.requests) {
            (Some(d), _) => duration_text(d),
            (None, Some(n)) => format!("{n}req"),
            (None, None) => String::new(),
        }
    }

    /// The default label: `100conn/10s` or `100conn/10000req`.
    pub fn default_name(&self) -> String {
        match self.length_label() {
            l if l.is_empty() => format!("{}conn", self.connections),
            l => format!("{}conn/{l}", self.connections),
        }
    }
}

use durations::{duration, duration_text, opt_duration, scaled};

mod body;
mod changes;
mod durations;
mod find_max;
mod scenarios;
mod sweep;
mod toml_error;
pub mod until_ci;

pub use sweep::CpuCount;

impl Suite {
    /// Reads and validates a suite file.
    pub fn load(path: &Path) -> Result<Suite, SuiteError> {
        let text = std::fs::read_to_string(path).map_err(|source| SuiteError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut suite = Suite::parse(&text, path)?;
        let dir = path.parent().unwrap_or(Path::new(""));
        suite
            .read_mixes(dir)
            .map_err(|(i, message)| SuiteError::Invalid {
                file: path.to_path_buf(),
                line: line_of_key(&text, &format!("scenario[{}].mix", i + 1)),
                key: format!("scenario[{}].mix", i + 1),
                message,
            })?;
        Ok(suite)
    }

    /// Parses and validates suite text; `file` names the source in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Suite, SuiteError> {
        let mut suite: Suite =
            toml::from_str(text).map_err(|e| toml_error::invalid(text, file, &e))?;
        for s in &mut suite.scenarios {
            // h2 is HTTP/2 over TLS and h3 carries TLS 1.3 in QUIC: recorded as such.
            s.transport.tls |= matches!(s.transport.protocol, Protocol::H2 | Protocol::H3);
        }
        for p in &mut suite.profiles {
            if p.name.is_empty() {
                p.name = p.default_name();
            }
        }
        suite
            .validate()
            .map_err(|(key, message)| SuiteError::Invalid {
                file: file.to_path_buf(),
                line: line_of_key(text, &key),
                key,
                message,
            })?;
        Ok(suite)
    }

    /// Checks values serde cannot: returns the key and the message.
    fn validate(&self) -> Result<(), (String, String)> {
        let bad = |k: &str, m: &str| Err((k.to_string(), m.to_string()));
        if self.laps == 0 {
            return bad("laps", "must be at least 1");
        }
        if let ServerSelection::List(l) = &self.servers {
            if l.is_empty() {
                return bad("servers", "names no server (use \"all\" or a list of ids)");
            }
        }
        if self.scenarios.is_empty() {
            return bad("scenario", "the suite needs at least one [[scenario]]");
        }
        if self.profiles.is_empty() {
            return bad("profile", "the suite needs at least one [[profile]]");
        }
        for (i, s) in self.scenarios.iter().enumerate() {
            let k = |f: &str| format!("scenario[{}].{f}", i + 1);
            if let Err((key, message)) = s.validate_shape() {
                return bad(&k(key), message);
            }
            if let Err((key, message)) = s.validate_protocol() {
                return bad(&k(key), message);
            }
            if let Err((key, message)) = s.validate_body() {
                return bad(&k(key), &message);
            }
            self.validate_loads(i)?;
            if !self.profiles.iter().any(|p| s.runs_at(p)) {
                return bad(&k("connections"), "no profile has these connections");
            }
        }
        for (i, p) in self.profiles.iter().enumerate() {
            let k = |f: &str| format!("profile[{}].{f}", i + 1);
            match (p.duration, p.requests) {
                (Some(_), Some(_)) => {
                    return bad(&k("requests"), "give duration or requests, not both")
                }
                (None, None) => return bad(&k("duration"), "give duration or requests"),
                _ => {}
            }
            if let Some(why) = p.find_max_conflict(self.tool) {
                return bad(&k("find_max"), why);
            }
        }
        Ok(())
    }

    /// Scenario `i` at each profile, as the load a lap runs ([`LoadSpec::lap`]), checked by
    /// [`LoadSpec::validate`]: the error names the scenario's or the profile's key.
    fn validate_loads(&self, i: usize) -> Result<(), (String, String)> {
        let s = &self.scenarios[i];
        let at = Address {
            http_base: match s.transport.tls {
                true => "https://server".into(),
                false => "http://server".into(),
            },
            echo: "server:0".into(),
            ca_file: None,
        };
        for (j, p) in self.profiles.iter().enumerate() {
            let origin = Origin::Suite {
                scenario: s.name.clone(),
                profile: p.name.clone(),
            };
            let spec = LoadSpec::lap(&s.work, &s.transport, &p.pace(s), &at);
            if let Err(e) = spec.validate(&origin) {
                let key = match e.key.table() {
                    Table::Scenario => format!("scenario[{}].{}", i + 1, e.key.suite_key()),
                    Table::Profile => format!("profile[{}].{}", j + 1, e.key.suite_key()),
                };
                return Err((key, e.message()));
            }
        }
        Ok(())
    }

    /// Shortens the suite for a smoke run (`--quick`): at most 2 laps after at most 0.5 s of
    /// warm-up; the shortest timed profile is capped at 2 s and the longer ones keep their
    /// ratio to it (10 s and 60 s become 2 s and 12 s), so each keeps its own label; request
    /// counts are divided by 10. Explicit overrides (`--laps`, `-d`) are applied after this,
    /// so they win.
    pub fn quicken(&mut self) {
        self.laps = self.laps.min(2);
        // A smoke run is short: a fixed number of laps, not "until the interval is clear".
        self.until_ci = None;
        self.min_laps = None;
        self.max_laps = None;
        self.warmup = self.warmup.min(0.5);
        let factor = self
            .shortest_duration()
            .map_or(1.0, |s| (QUICK_MAX_DURATION_S / s).min(1.0));
        let originals = self.labels();
        for p in &mut self.profiles {
            let duration = p.duration.map(|d| scaled(d, factor));
            let requests = p.requests.map(|n| (n / 10).max(1));
            p.set_length(duration, requests);
        }
        self.keep_labels_distinct(&originals);
    }

    /// `-d` with a suite: the shortest timed profile runs for `seconds` and the longer ones
    /// keep their ratio to it (tcp-echo's 10 s and 60 s with `-d 5s`: 5 s and 30 s), so no
    /// two profiles end up with one label and pooled laps; request-bound profiles run for
    /// `seconds`.
    pub fn set_duration(&mut self, seconds: f64) {
        let factor = self.shortest_duration().map(|s| seconds / s);
        let originals = self.labels();
        for p in &mut self.profiles {
            let d = match (p.duration, factor) {
                (Some(d), Some(f)) => scaled(d, f),
                _ => seconds,
            };
            p.set_length(Some(d), None);
        }
        self.keep_labels_distinct(&originals);
    }

    /// The shortest duration of the timed profiles.
    fn shortest_duration(&self) -> Option<f64> {
        self.profiles
            .iter()
            .filter_map(|p| p.duration)
            .min_by(f64::total_cmp)
    }

    fn labels(&self) -> Vec<String> {
        self.profiles.iter().map(|p| p.name.clone()).collect()
    }

    /// Profiles an override gave one label (a request-bound one turned timed next to a timed
    /// one) get their original label with the new length in brackets, so laps never pool.
    fn keep_labels_distinct(&mut self, originals: &[String]) {
        let labels = self.labels();
        for (i, p) in self.profiles.iter_mut().enumerate() {
            let shared = labels.iter().filter(|l| **l == labels[i]).count() > 1;
            if shared && originals[i] != labels[i] {
                p.name = format!("{} ({})", originals[i], p.length_label());
            }
        }
    }

    /// Every feature some scenario requires, transports included.
    pub fn required_features(&self) -> Vec<Feature> {
        let mut v: Vec<Feature> = self.scenarios.iter().flat_map(Scenario::needs).collect();
        v.sort();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod grpc_tests;
#[cfg(test)]
mod h3_tests;
#[cfg(test)]
mod tests;
