//! `doctor --apply` and `doctor --revert`: write the fixes the checks printed (sysctl and sysfs
//! files only), keeping each file's old value in a state file so that `--revert` restores it.

use super::{Check, Status, Write};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One file changed by `--apply`, with the value it had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    pub path: String,
    pub old: String,
    pub new: String,
}

/// Why applying or reverting failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("{path}: {source} (doctor --apply needs root)")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    State {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a doctor state file: {source}", path.display())]
    Corrupt {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// Writes every fix of the `warn` checks (the files under `root`, `/` on the live machine);
/// appends what it changed to `state` and returns it. Files already at their value are left.
pub fn apply(checks: &[Check], root: &Path, state: &Path) -> Result<Vec<Applied>, ApplyError> {
    let mut done = read_state(state)?;
    let mut now = Vec::new();
    let writes = checks
        .iter()
        .filter(|c| c.status == Status::Warn)
        .flat_map(|c| &c.writes);
    for Write { path, value } in writes {
        let file = root.join(path.trim_start_matches('/'));
        let old = std::fs::read_to_string(&file)
            .map_err(|source| ApplyError::Write {
                path: path.clone(),
                source,
            })?
            .trim()
            .to_owned();
        if old == *value {
            continue;
        }
        std::fs::write(&file, value).map_err(|source| ApplyError::Write {
            path: path.clone(),
            source,
        })?;
        let a = Applied {
            path: path.clone(),
            old,
            new: value.clone(),
        };
        // The first old value is the one to restore.
        if !done.iter().any(|d| d.path == a.path) {
            done.push(a.clone());
        }
        now.push(a);
    }
    write_state(state, &done)?;
    Ok(now)
}

/// Restores every file in `state` to its old value and removes the state file.
pub fn revert(root: &Path, state: &Path) -> Result<Vec<Applied>, ApplyError> {
    let done = read_state(state)?;
    for a in &done {
        let file = root.join(a.path.trim_start_matches('/'));
        std::fs::write(&file, &a.old).map_err(|source| ApplyError::Write {
            path: a.path.clone(),
            source,
        })?;
    }
    match std::fs::remove_file(state) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(ApplyError::State {
            path: state.to_path_buf(),
            source: e,
        }),
        _ => Ok(done),
    }
}

fn read_state(state: &Path) -> Result<Vec<Applied>, ApplyError> {
    match std::fs::read_to_string(state) {
        Ok(text) => serde_json::from_str(&text).map_err(|source| ApplyError::Corrupt {
            path: state.to_path_buf(),
            source,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(ApplyError::State {
            path: state.to_path_buf(),
            source,
        }),
    }
}

fn write_state(state: &Path, done: &[Applied]) -> Result<(), ApplyError> {
    let err = |source| ApplyError::State {
        path: state.to_path_buf(),
        source,
    };
    if let Some(dir) = state.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let text = serde_json::to_string_pretty(done).expect("plain strings serialize");
    std::fs::write(state, text).map_err(err)
}
