//! The undo record of `doctor --apply`: one JSON line per changed setting, appended (and synced)
//! before the setting is written. It is opened without following a symlink, created 0600, and
//! refused when it belongs to another user or others may write it.

use serde::{Deserialize, Serialize};
use serverbench_model::doctor::Setting;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write as _};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// One setting changed by `--apply`, with the value it had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub setting: Setting,
    pub old: String,
    pub new: String,
}

/// Why applying or reverting failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("{setting}: {source} (doctor --apply needs root)")]
    Write {
        setting: Setting,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    State {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: refused as an undo record: {why}", path.display())]
    Untrusted { path: PathBuf, why: String },
    #[error("{}:{line}: refused as an undo record: {why}", path.display())]
    Corrupt {
        path: PathBuf,
        line: usize,
        why: String,
    },
}

/// The record's name in its folder.
pub const RECORD_NAME: &str = "doctor-undo.jsonl";

/// One line as written: the file's path, its value before and after.
#[derive(Serialize, Deserialize)]
struct Line {
    path: String,
    old: String,
    new: String,
}

/// Where the undo record lives when there is no project cache: `$XDG_STATE_HOME/serverbench`,
/// else `$HOME/.local/state/serverbench` (relative values are ignored, as the XDG spec says).
pub fn state_folder(xdg_state_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let absolute = |v: Option<&str>| v.filter(|v| v.starts_with('/')).map(PathBuf::from);
    absolute(xdg_state_home)
        .or_else(|| absolute(home).map(|h| h.join(".local/state")))
        .map(|d| d.join("serverbench"))
}

/// Why a record's file is not to be trusted, from its metadata; `me` is the effective user.
pub(super) fn untrusted(meta: &std::fs::Metadata, me: u32) -> Option<String> {
    if !meta.file_type().is_file() {
        return Some("not a regular file".into());
    }
    if meta.uid() != me {
        return Some(format!("owned by user {}, not by {me}", meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!(
            "others may write it (mode {:o})",
            meta.mode() & 0o777
        ));
    }
    None
}

fn me() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn open_checked(path: &Path, opts: &OpenOptions) -> Result<Option<File>, ApplyError> {
    let file = match opts.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(ApplyError::Untrusted {
                path: path.to_path_buf(),
                why: "a symlink".into(),
            })
        }
        Err(source) => return Err(state_err(path, source)),
    };
    let meta = file.metadata().map_err(|e| state_err(path, e))?;
    match untrusted(&meta, me()) {
        Some(why) => Err(ApplyError::Untrusted {
            path: path.to_path_buf(),
            why,
        }),
        None => Ok(Some(file)),
    }
}

fn state_err(path: &Path, source: std::io::Error) -> ApplyError {
    ApplyError::State {
        path: path.to_path_buf(),
        source,
    }
}

/// Every entry of the record at `path` (none when it does not exist), each a setting of the
/// fixed list with a value of its file's shape; anything else refuses the whole record.
pub fn read(path: &Path) -> Result<Vec<Applied>, ApplyError> {
    let mut opts = OpenOptions::new();
    opts.read(true).custom_flags(libc::O_NOFOLLOW);
    let Some(mut file) = open_checked(path, &opts)? else {
        return Ok(Vec::new());
    };
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(|e| state_err(path, e))?;
    let mut out = Vec::new();
    for (i, raw) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let bad = |why: String| ApplyError::Corrupt {
            path: path.to_path_buf(),
            line: i + 1,
            why,
        };
        let line: Line = serde_json::from_str(raw).map_err(|e| bad(e.to_string()))?;
        let setting = Setting::from_path(&line.path)
            .ok_or_else(|| bad(format!("{} is not a setting doctor changes", line.path)))?;
        for v in [&line.old, &line.new] {
            if !setting.accepts(v) {
                return Err(bad(format!("{v:?} is not a value of {setting}")));
            }
        }
        out.push(Applied {
            setting,
            old: line.old,
            new: line.new,
        });
    }
    Ok(out)
}

/// The record opened for appending: created 0600 (its folder 0700) if absent, never through a
/// symlink, refused if another user owns it.
pub struct Appender {
    path: PathBuf,
    file: File,
}

impl Appender {
    pub fn open(path: &Path) -> Result<Appender, ApplyError> {
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| state_err(dir, e))?;
        }
        let mut opts = OpenOptions::new();
        opts.append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW);
        let file = open_checked(path, &opts)?
            .ok_or_else(|| state_err(path, std::io::Error::from(std::io::ErrorKind::NotFound)))?;
        Ok(Appender {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Appends one entry and waits until it is on disk.
    pub fn append(&mut self, a: &Applied) -> Result<(), ApplyError> {
        let line = Line {
            path: a.setting.path(),
            old: a.old.clone(),
            new: a.new.clone(),
        };
        let mut text = serde_json::to_string(&line).expect("plain strings serialize");
        text.push('\n');
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| state_err(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_folder_follows_xdg_then_home() {
        let f = |x, h| state_folder(x, h).map(|p| p.display().to_string());
        assert_eq!(f(Some("/s"), Some("/h")).unwrap(), "/s/serverbench");
        assert_eq!(
            f(Some("rel"), Some("/h")).unwrap(),
            "/h/.local/state/serverbench"
        );
        assert_eq!(f(None, None), None);
    }

    #[test]
    fn a_record_of_another_user_or_writable_by_others_is_untrusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RECORD_NAME);
        Appender::open(&path).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert_eq!(untrusted(&meta, meta.uid()), None);
        let why = untrusted(&meta, meta.uid() + 1).unwrap();
        assert!(why.starts_with("owned by user"), "{why}");
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert!(untrusted(&meta, meta.uid())
            .unwrap()
            .contains("others may write"));
    }

    #[test]
    fn a_symlinked_record_is_neither_read_nor_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "").unwrap();
        let path = dir.path().join(RECORD_NAME);
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert!(matches!(read(&path), Err(ApplyError::Untrusted { .. })));
        assert!(matches!(
            Appender::open(&path),
            Err(ApplyError::Untrusted { .. })
        ));
    }
}
