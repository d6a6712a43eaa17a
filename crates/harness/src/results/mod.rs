//! The results folder: `results.jsonl` (one flushed line per lap), `env.json`, server logs.

pub mod clock;
pub mod env;
pub mod record;
mod writer;

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
