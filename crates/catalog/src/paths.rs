//! Where things live: the project root (the folder holding `servers/` and `spec/contract.md`),
//! when there is one, and the cache folder (stamps, setup logs, shared build caches).
//!
//! The root is needed only for the catalog's servers: an installed binary run outside a
//! checkout has none and still runs your own servers (`run --server`, `--url`), `load` and
//! `verify --url`, with its cache in the user's cache folder.

use std::path::{Path, PathBuf};

/// Environment variable naming the project root (overridden by `--root`).
pub const ROOT_ENV: &str = "SERVERBENCH_ROOT";
/// Environment variable naming the cache folder (default `<root>/.cache` in a checkout, else
/// `$XDG_CACHE_HOME/serverbench` or `~/.cache/serverbench`).
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
    /// A command that needs the catalog found no root.
    #[error(
        "{what} needs the catalog of a serverbench checkout and none is above {}: run inside a \
         checkout, pass --root DIR or set SERVERBENCH_ROOT",
        start.display()
    )]
    NoCatalog {
        /// What needed it (`serve`, `node/http`...).
        what: String,
        /// Where the search started.
        start: PathBuf,
    },
}

/// The project root, when there is one, and the cache folder, both absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The project root: `None` outside a checkout (no catalog, only your own servers).
    pub root: Option<PathBuf>,
    /// The cache folder (`SERVERBENCH_CACHE`, `<root>/.cache`, else the user's cache folder).
    pub cache: PathBuf,
}

impl Paths {
    /// Paths with an explicit root and cache folder (made absolute against the current folder).
    pub fn new(root: impl Into<PathBuf>, cache: impl Into<PathBuf>) -> Paths {
        Paths {
            root: Some(absolute(root.into())),
            cache: absolute(cache.into()),
        }
    }

    /// Paths without a root: `SERVERBENCH_CACHE`, else `$XDG_CACHE_HOME/serverbench`, else
    /// `~/.cache/serverbench` (`./.serverbench-cache` without a home folder).
    pub fn without_root() -> Paths {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let cache =
            cache_from_env().unwrap_or_else(|| user_cache(var("XDG_CACHE_HOME"), var("HOME")));
        Paths {
            root: None,
            cache: absolute(cache),
        }
    }

    /// Paths for `root` with the cache from `SERVERBENCH_CACHE` or `<root>/.cache`.
    pub fn for_root(root: impl Into<PathBuf>) -> Paths {
        let root = absolute(root.into());
        let cache = cache_from_env().unwrap_or_else(|| root.join(".cache"));
        Paths::new(root, cache)
    }

    /// The root, or [`PathsError::NoCatalog`] naming `what` when there is none.
    pub fn catalog_root(&self, what: &str) -> Result<&Path, PathsError> {
        self.root.as_deref().ok_or_else(|| no_catalog(what))
    }

    /// Where results folders go by default: `<root>/results` in a checkout, else `./results`.
    pub fn default_results(&self) -> PathBuf {
        match &self.root {
            Some(root) => root.join("results"),
            None => absolute(PathBuf::from("results")),
        }
    }

    /// Finds the root: `flag` (from `--root`), else `SERVERBENCH_ROOT`, else the first folder
    /// holding `servers/` and `spec/contract.md` walking up from the current folder, then from
    /// the executable's folder; without one, [`Paths::without_root`]. A root given by flag or
    /// environment that is not one is an error.
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
        Ok(Paths::without_root())
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

/// The user's cache folder for serverbench, from `XDG_CACHE_HOME` and `HOME`.
fn user_cache(xdg_cache_home: Option<PathBuf>, home: Option<PathBuf>) -> PathBuf {
    match (xdg_cache_home, home) {
        (Some(xdg), _) => xdg.join("serverbench"),
        (None, Some(home)) => home.join(".cache").join("serverbench"),
        (None, None) => PathBuf::from(".serverbench-cache"),
    }
}

/// `SERVERBENCH_CACHE` when set and not empty.
fn cache_from_env() -> Option<PathBuf> {
    std::env::var_os(CACHE_ENV)
        .filter(|c| !c.is_empty())
        .map(PathBuf::from)
}

/// [`PathsError::NoCatalog`] for `what`, from the current folder.
pub fn no_catalog(what: &str) -> PathsError {
    PathsError::NoCatalog {
        what: what.to_owned(),
        start: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
    }
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
    fn without_a_checkout_the_cache_is_the_users_cache_folder() {
        let xdg = Some(PathBuf::from("/x"));
        let home = Some(PathBuf::from("/home/u"));
        assert_eq!(user_cache(xdg, home.clone()), Path::new("/x/serverbench"));
        assert_eq!(
            user_cache(None, home),
            Path::new("/home/u/.cache/serverbench")
        );
    }

    #[test]
    fn without_a_checkout_results_go_to_the_current_folder() {
        let paths = Paths {
            root: None,
            cache: "/c".into(),
        };
        let here = std::env::current_dir().unwrap();
        assert_eq!(paths.default_results(), here.join("results"));
        assert_eq!(
            Paths::new("/r", "/c").default_results(),
            Path::new("/r/results")
        );
        let err = paths.catalog_root("serve").unwrap_err().to_string();
        assert!(
            err.starts_with("serve needs the catalog of a serverbench checkout"),
            "{err}"
        );
        assert!(err.contains("--root DIR or set SERVERBENCH_ROOT"), "{err}");
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
