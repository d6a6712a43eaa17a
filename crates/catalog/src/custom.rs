//! Servers of the user's own, outside the catalog: a command (`run --server NAME=COMMAND`), a
//! folder holding a `server.toml` anywhere on disk (`--server-dir DIR`), or a server that is
//! already running (`run --url NAME=URL`). They become [`Server`] values like catalog servers,
//! so the run loop starts, pins, samples, verifies and ranks them the same way.

use crate::manifest::{Commands, Manifest, Requires};
use crate::{manifest, CatalogError, Feature, Server};
use std::path::Path;

/// The language shown for a server known only by its command.
pub const CUSTOM_LANGUAGE: &str = "(yours)";

/// Why a server of the user's own was refused, naming it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CustomError {
    /// The name given is not a server name.
    #[error(
        "`{0}` is not a server name (letters, digits, - _ . and at most one /, e.g. my/server)"
    )]
    BadName(String),
    /// `--server NAME=` with nothing after the `=`.
    #[error("{0}: the command is empty")]
    EmptyCommand(String),
}

/// Checks a user-given server name: letters, digits, `-`, `_`, `.` and at most one `/`.
pub fn check_name(name: &str) -> Result<(), CustomError> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if name.is_empty() || !ok_chars || name.matches('/').count() > 1 || name.starts_with('/') {
        return Err(CustomError::BadName(name.to_owned()));
    }
    Ok(())
}

fn manifest(name: &str, framework: &str, run: &str, implements: &[Feature]) -> Manifest {
    Manifest {
        name: name.to_owned(),
        language: CUSTOM_LANGUAGE.to_owned(),
        framework: framework.to_owned(),
        framework_version: "-".to_owned(),
        description: format!("your own server: {framework}"),
        implements: implements.to_vec(),
        tuning: "as you run it".to_owned(),
        ready_timeout_s: manifest::DEFAULT_READY_TIMEOUT_S,
        min_warmup_s: 0,
        deviations: Default::default(),
        database: None,
        shapes: None,
        requires: Requires::default(),
        commands: Commands {
            setup: String::new(),
            build: String::new(),
            run: run.to_owned(),
            version: String::new(),
        },
    }
}

impl Server {
    /// A server started by `command` (`sh -c`, in `dir`, with `HOST`, `PORT`, `WORKERS` set).
    pub fn from_command(
        name: &str,
        command: &str,
        dir: &Path,
        implements: &[Feature],
    ) -> Result<Server, CustomError> {
        check_name(name)?;
        if command.trim().is_empty() {
            return Err(CustomError::EmptyCommand(name.to_owned()));
        }
        Ok(Server {
            id: name.to_owned(),
            dir: dir.to_path_buf(),
            manifest: manifest(name, command, command, implements),
        })
    }

    /// A server that is already running at `url`: nothing to start or stop.
    pub fn attached(name: &str, url: &str, implements: &[Feature]) -> Result<Server, CustomError> {
        check_name(name)?;
        Ok(Server {
            id: name.to_owned(),
            dir: std::env::temp_dir(),
            manifest: manifest(name, url, "", implements),
        })
    }

    /// Whether the server is already running (nothing to start).
    pub fn is_attached(&self) -> bool {
        self.manifest.commands.run.is_empty()
    }

    /// The server described by `dir/server.toml`, anywhere on disk; its id is the manifest's
    /// `name` (which need not match the folder).
    pub fn from_dir(dir: &Path) -> Result<Server, CatalogError> {
        let manifest = Manifest::read(&dir.join("server.toml"))?;
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        crate::load_server(&manifest.name, &dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_name("mine").is_ok());
        assert!(check_name("me/v2.1").is_ok());
        assert!(check_name("a/b/c").is_err());
        assert!(check_name("has space").is_err());
        assert!(check_name("").is_err());
    }

    #[test]
    fn a_command_server_implements_what_it_is_told_and_needs_no_setup() {
        let s = Server::from_command("mine", "exec ./srv", Path::new("/tmp"), &[Feature::Hello])
            .unwrap();
        assert_eq!(s.manifest.commands.run, "exec ./srv");
        assert!(s.implements(Feature::Hello) && !s.implements(Feature::Json));
        assert!(!s.is_attached());
        let a = Server::attached("theirs", "http://127.0.0.1:8080/", &[Feature::Hello]).unwrap();
        assert!(a.is_attached());
    }

    #[test]
    fn a_folder_anywhere_is_read_by_its_manifest_name() {
        let dir = tempfile::tempdir().unwrap();
        let text = "name = \"me/srv\"\nlanguage = \"Go\"\nframework = \"net/http\"\n\
            framework_version = \"1\"\ndescription = \"d\"\nimplements = [\"hello\"]\n\
            tuning = \"t\"\n[requires]\ncommands = []\n[commands]\nrun = \"exec ./srv\"\n\
            version = \"./srv -v\"\n";
        std::fs::write(dir.path().join("server.toml"), text).unwrap();
        let s = Server::from_dir(dir.path()).unwrap();
        assert_eq!(s.id, "me/srv");
    }
}
