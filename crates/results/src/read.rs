//! Reading a whole results folder: its laps and its `env.json`.

use crate::env::{Env, EnvError};
use crate::record::LapRecord;
use crate::{read_records, ResultsError, ENV_FILE, RESULTS_FILE};
use std::path::{Path, PathBuf};

/// Errors reading a results folder.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// No `results.jsonl`.
    #[error("{}: no {RESULTS_FILE} in this folder (is it a serverbench results folder?)", .0.display())]
    NotAResultsFolder(PathBuf),
    /// `results.jsonl` holds no complete lap.
    #[error("{}: holds no laps", .0.display())]
    Empty(PathBuf),
    /// The file could not be read or a line is not a lap.
    #[error(transparent)]
    Results(#[from] ResultsError),
}

/// The laps of a results folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// Every complete lap record, in file order.
    pub records: Vec<LapRecord>,
    /// `results.jsonl` ended with a partial line (a lap cut short), which was ignored.
    pub partial_tail: bool,
}

/// Reads the laps of `dir/results.jsonl`: an error naming the folder when the file is missing or
/// holds no lap.
pub fn load_laps(dir: &Path) -> Result<Loaded, LoadError> {
    let path = dir.join(RESULTS_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LoadError::NotAResultsFolder(dir.to_path_buf()))
        }
        Err(source) => return Err(ResultsError::Io { path, source }.into()),
    };
    let records = read_records(&path)?;
    let tail = bytes.rsplit(|b| *b == b'\n').next().unwrap_or_default();
    let partial_tail = !tail.iter().all(u8::is_ascii_whitespace);
    if records.is_empty() {
        return Err(LoadError::Empty(path));
    }
    Ok(Loaded {
        records,
        partial_tail,
    })
}

/// Reads `dir/env.json`: `Ok(None)` when there is none.
pub fn read_env(dir: &Path) -> Result<Option<Env>, EnvError> {
    Env::read(&dir.join(ENV_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_results_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = load_laps(dir.path()).unwrap_err().to_string();
        assert!(err.contains("no results.jsonl"), "{err}");
    }

    #[test]
    fn an_empty_results_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RESULTS_FILE), "").unwrap();
        assert!(matches!(load_laps(dir.path()), Err(LoadError::Empty(_))));
    }
}
