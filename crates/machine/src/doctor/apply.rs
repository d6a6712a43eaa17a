//! `doctor --apply` and `doctor --revert`: write the fixes the checks printed (a fixed list of
//! sysfs and procfs files, [`Setting`](serverbench_model::doctor::Setting)), each file's old
//! value appended to the undo record before the file is written, so that `--revert` restores
//! everything `--apply` changed, even when `--apply` stopped halfway.

use super::record::{self, Appender, Applied, ApplyError};
use super::{Check, Status, Write};
use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// `--apply` stopped at `error` after changing `done` (all of them in the undo record).
#[derive(Debug, thiserror::Error)]
#[error("{error} (after changing {} settings; doctor --revert restores them)", done.len())]
pub struct ApplyFailure {
    pub done: Vec<Applied>,
    pub error: ApplyError,
}

/// Writes every fix of the `warn` checks (the files under `root`, `/` on the live machine),
/// recording each old value in the undo record at `state` before writing; returns what it
/// changed. Files already at their value are left, and a setting already in the record keeps
/// its first old value.
pub fn apply(checks: &[Check], root: &Path, state: &Path) -> Result<Vec<Applied>, ApplyFailure> {
    let mut done = Vec::new();
    let fail = |done: Vec<Applied>, error| ApplyFailure { done, error };
    let recorded = match record::read(state) {
        Ok(r) => r,
        Err(e) => return Err(fail(done, e)),
    };
    let mut appender: Option<Appender> = None;
    let writes = checks
        .iter()
        .filter(|c| c.status == Status::Warn)
        .flat_map(|c| &c.writes);
    for Write { setting, value } in writes {
        let setting = *setting;
        let file = root.join(setting.path().trim_start_matches('/'));
        let old = match std::fs::read_to_string(&file) {
            Ok(t) => t.trim().to_owned(),
            Err(source) => return Err(fail(done, ApplyError::Write { setting, source })),
        };
        if old == *value {
            continue;
        }
        let a = Applied {
            setting,
            old,
            new: value.clone(),
        };
        if !recorded.iter().any(|r| r.setting == setting) {
            let app = match appender.take() {
                Some(app) => app,
                None => match Appender::open(state) {
                    Ok(app) => app,
                    Err(e) => return Err(fail(done, e)),
                },
            };
            let app = appender.insert(app);
            if let Err(e) = app.append(&a) {
                return Err(fail(done, e));
            }
        }
        if let Err(source) = write_setting(&file, value) {
            return Err(fail(done, ApplyError::Write { setting, source }));
        }
        done.push(a);
    }
    Ok(done)
}

/// Writes `value` to an existing file, refusing a symlink in its last component.
fn write_setting(file: &Path, value: &str) -> std::io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(file)?;
    f.write_all(value.as_bytes())
}

/// Restores every setting of the undo record at `state` to its first recorded value (newest
/// change first) and removes the record. The whole record is checked before anything is
/// written: a symlink, another user's file, or a path or value outside doctor's list refuses
/// it. Settings already at their old value are left as they are.
pub fn revert(root: &Path, state: &Path) -> Result<Vec<Applied>, ApplyError> {
    let entries = record::read(state)?;
    let mut first: Vec<Applied> = Vec::new();
    for a in entries {
        if !first.iter().any(|f| f.setting == a.setting) {
            first.push(a);
        }
    }
    for a in first.iter().rev() {
        let file = root.join(a.setting.path().trim_start_matches('/'));
        let now = std::fs::read_to_string(&file).map_err(|source| ApplyError::Write {
            setting: a.setting,
            source,
        })?;
        if now.trim() == a.old.trim() {
            continue;
        }
        write_setting(&file, &a.old).map_err(|source| ApplyError::Write {
            setting: a.setting,
            source,
        })?;
    }
    match std::fs::remove_file(state) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(ApplyError::State {
            path: state.to_path_buf(),
            source: e,
        }),
        _ => Ok(first),
    }
}
