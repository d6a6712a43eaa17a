//! serverbench-results owns the results folder: `results.jsonl` (one flushed line per lap, a
//! [`record::LapRecord`]), `env.json` (the typed [`env::Env`]) and the servers' logs, and the
//! key every other crate passes around for a lap: [`LapKey`] (the load's `Mode` and the `Tool`
//! that ran it are serverbench-model's).
//!
//! Everything that reads or writes a results folder goes through this crate. It must not run
//! processes, compute statistics or print (a warning about a partial line is returned, not shown).

pub mod clock;
pub mod database;
pub mod env;
mod read;
pub mod record;
pub mod roles;
mod settings;
mod writer;

pub use read::{load_laps, read_env, LoadError, Loaded};
pub use record::LapKey;
pub use roles::{ProcessStats, Role};
use serverbench_model::{Tool, Transport};
pub use writer::{read_records, ResultsError, ResultsWriter};

use std::path::{Path, PathBuf};

/// File name of the lap records.
pub const RESULTS_FILE: &str = "results.jsonl";
/// File name of the environment description.
pub const ENV_FILE: &str = "env.json";
/// Folder of the servers' logs.
pub const LOGS_DIR: &str = "logs";

/// `<parent>/<YYYYmmddTHHMMSSZ>-<suite>`.
pub fn new_run_dir(parent: &Path, suite: &str, now: std::time::SystemTime) -> PathBuf {
    let safe: String = suite
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    parent.join(format!("{}-{safe}", clock::compact_utc(now)))
}
