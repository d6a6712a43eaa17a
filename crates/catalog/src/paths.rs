//! Where things live: the project root (the folder holding `servers/` and `spec/contract.md`)
//! and the cache folder (stamps, setup logs, shared build caches).

use std::path::{Path, PathBuf};

/// Environment variable naming the project root (overridden by `--root`).
pub const ROOT_ENV: &str = "SERVERBENCH_ROOT";
/// Environment variable naming the cache folder (default `<root>/.cache`).
pub const CACHE_ENV: &str = "SERVERBENCH_CACHE";

/// Errors while locating the project root.
#[derive(Debug, thiserror::Error)]
pub enum PathsError {
    /// A root given explicitly (flag or environment) does not look like a serverbench root.
    #[error("{origin} names {path}, which does not hold servers/ and spec/contract.md")]
    NotARoot {
        /// `--root` or `SERVERBENCH_ROOT`.
        origin: String,
        /// The folder given.
        path: PathBuf,
    },
    /// No root found walking up from the current folder or the executable.
    #[error(
        "cannot find the serverbench root (a folder holding servers/ and spec/contract.md) above \
         {start}; pass --root or set SERVERBENCH_ROOT"
    )]
    NotFound {
        /// Where the search started.
        start: PathBuf,
    },
}

/// The project root and the cache folder, both absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The project root.
    pub root: PathBuf,
    /// The cache folder (`SERVERBENCH_CACHE` or `<root>/.cache`).
    pub cache: PathBuf,
}

impl Paths {
    /// Paths with an explicit root and cache folder (made absolute against the current folder).
    pub fn new(root: impl Into<PathBuf>, cache: impl Into<PathBuf>) -> Paths {
        Paths {
            root: absolute(root.into()),
            cache: absolute(cache.into()),
        }
    }

    /// Paths for `root` with the cache from `SERVERBENCH_CACHE` or `<root>/.cache`.
    pub fn for_root(root: impl Into<PathBuf>) -> Paths {
        let root = absolute(root.into());
        let cache = match std::env::var_os(CACHE_ENV) {
            Some(c) if !c.is_empty() => PathBuf::from(c),
            _ => root.join(".cache"),
        };
        Paths::new(root, cache)
    }

    /// Finds the root: `flag` (from `--root`), else `SERVERBENCH_ROOT`, else the first folder
    /// holding `servers/` and `spec/contract.md` walking up from the current folder, then from
    /// the executable's folder.
    pub fn discover(flag: Option<&Path>) -> Result<Paths, PathsError> {
        if let Some(p) = flag {
            return explicit(p, "--root");
        }
        if let Some(p) = std::env::var_os(ROOT_ENV).filter(|p| !p.is_empty()) {
            return explicit(Path::new(&p), ROOT_ENV);
        }
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        if let Some(root) = find_root_above(&cwd) {
            return Ok(Paths::for_root(root));
        }
        if let Some(root) = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().and_then(find_root_above))
        {
            return Ok(Paths::for_root(root));
        }
        Err(PathsError::NotFound { start: cwd })
    }

    /// `<root>/servers`.
    pub fn servers_dir(&self) -> PathBuf {
        self.root.join("servers")
    }

    /// `<cache>/stamps`.
    pub fn stamps_dir(&self) -> PathBuf {
        self.cache.join("stamps")
    }

    /// `<cache>/logs`.
    pub fn logs_dir(&self) -> PathBuf {
        self.cache.join("logs")
    }

    /// The setup stamp of a server: `<cache>/stamps/<lang>__<name>`.
    pub fn stamp_file(&self, server_id: &str) -> PathBuf {
        self.stamps_dir().join(slug(server_id))
    }

    /// The setup log of a server: `<cache>/logs/<lang>__<name>.setup.log`.
    pub fn setup_log(&self, server_id: &str) -> PathBuf {
        self.logs_dir()
            .join(format!("{}.setup.log", slug(server_id)))
    }
}

/// A server id as a file name: `node/http` -> `node__http`.
pub fn slug(server_id: &str) -> String {
    server_id.replace('/', "__")
}

/// True when `dir` holds `servers/` and `spec/contract.md`.
pub fn is_root(dir: &Path) -> bool {
    dir.join("servers").is_dir() && dir.join("spec").join("contract.md").is_file()
}

fn explicit(p: &Path, origin: &str) -> Result<Paths, PathsError> {
    if is_root(p) {
        Ok(Paths::for_root(p))
    } else {
        Err(PathsError::NotARoot {
            origin: origin.to_string(),
            path: p.to_path_buf(),
        })
    }
}

fn find_root_above(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| is_root(d))
        .map(Path::to_path_buf)
}

fn absolute(p: PathBuf) -> PathBuf {
    if p.is_absolute() {
        p
    } else {
        std::env::current_dir().map(|c| c.join(&p)).unwrap_or(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_root() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("servers")).unwrap();
        std::fs::create_dir_all(dir.path().join("spec")).unwrap();
        std::fs::write(dir.path().join("spec/contract.md"), "x").unwrap();
        dir
    }

    #[test]
    fn root_is_found_walking_up_from_a_nested_folder() {
        let dir = fake_root();
        let nested = dir.path().join("servers/node/http");
        std::fs::create_dir_all(&nested).unwrap();
        assert_eq!(find_root_above(&nested).as_deref(), Some(dir.path()));
    }

    #[test]
    fn explicit_root_without_spec_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let err = Paths::discover(Some(dir.path())).unwrap_err();
        assert!(err.to_string().contains("--root"), "{err}");
    }

    #[test]
    fn stamp_and_log_files_use_the_slug() {
        let paths = Paths::new("/r", "/c");
        assert_eq!(
            paths.stamp_file("node/http"),
            Path::new("/c/stamps/node__http")
        );
        assert_eq!(
            paths.setup_log("rust/hyper"),
            Path::new("/c/logs/rust__hyper.setup.log")
        );
    }
}
