//! serverbench-catalog owns the catalog: every `servers/<language>/<name>/server.toml`, parsed
//! strictly and validated; where the project and its cache live ([`paths`]); whether a server can
//! run here ([`availability`]); its setup with content-hash stamps ([`setup`]); and the one
//! environment a manifest's commands run with ([`command`]), for setup, start and version alike;
//! and where a key stands in TOML text ([`toml_pos`]), for manifest and suite errors.
//!
//! A broken manifest does not hide the others: [`Catalog::load`] keeps it in
//! [`Catalog::broken`] with its error, and [`Catalog::get`] returns that error for its id.
//!
//! It must not generate load, sample processes or know about results.

mod availability;
pub mod command;
pub mod custom;
pub mod logs;
pub mod manifest;
pub mod paths;
pub mod setup;
mod stamps;
/// Where a key stands in TOML text: the model's, kept at this path.
use serverbench_model::toml_pos;

pub use availability::{
    apt_package_for, availability, not_ready, on_path, Availability, MissingCommand,
};
pub use manifest::{Commands, DatabaseClient, Deviation, Manifest, Requires, ShapeLibraries};

use std::path::{Path, PathBuf};

/// A feature of the server contract: the model's, kept at this path.
use serverbench_model::Feature;

/// Errors of the catalog.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A file or folder could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A manifest is malformed or invalid.
    #[error("{}:{line}: key `{key}`: {message}", file.display())]
    Manifest {
        /// The `server.toml`.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// The key (`table.key` inside a table).
        key: String,
        /// What is wrong.
        message: String,
    },
    /// No server has this id.
    #[error("no server `{id}` in the catalog{}", closest_hint(closest))]
    UnknownServer {
        /// The id asked for.
        id: String,
        /// The closest ids that exist.
        closest: Vec<String>,
    },
    /// A catalog server was asked for and there is no catalog (no root): an installed binary
    /// run outside a checkout.
    #[error("{0}")]
    NoCatalog(String),
}

fn closest_hint(closest: &[String]) -> String {
    if closest.is_empty() {
        String::new()
    } else {
        format!(" (closest: {})", closest.join(", "))
    }
}

/// A server of the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// `<language>/<name>`.
    pub id: String,
    /// The server's folder (absolute).
    pub dir: PathBuf,
    /// The parsed manifest.
    pub manifest: Manifest,
}

impl Server {
    /// `<dir>/server.toml`.
    pub fn manifest_path(&self) -> PathBuf {
        self.dir.join("server.toml")
    }

    /// True when the server implements `feature`.
    pub fn implements(&self, feature: Feature) -> bool {
        self.manifest.implements(feature)
    }

    /// True when it serves HTTP on `PORT` (an endpoint, a database workload, a WebSocket
    /// upgrade or gRPC over h2c).
    pub fn serves_http(&self) -> bool {
        let on_port =
            |f: &Feature| f.is_http() || f.is_database() || f.is_websocket() || f.is_grpc();
        self.manifest.implements.iter().any(on_port)
    }
}

/// A server folder whose manifest is broken.
#[derive(Debug)]
pub struct BrokenServer {
    /// `<language>/<name>` of the folder.
    pub id: String,
    /// The folder.
    pub dir: PathBuf,
    /// Why it is broken.
    pub error: CatalogError,
}

/// Every server of `<root>/servers`, sorted by id.
#[derive(Debug, Default)]
pub struct Catalog {
    /// Servers with a valid manifest.
    pub servers: Vec<Server>,
    /// Server folders with a broken manifest.
    pub broken: Vec<BrokenServer>,
    /// True when there is no catalog (no root): only servers added to it (your own) are known.
    pub absent: bool,
}

impl Catalog {
    /// The catalog of `paths`' root, or an empty one marked [`Catalog::absent`] without a root
    /// (then [`Catalog::get`] of any other id says how to point at a catalog).
    pub fn of(paths: &paths::Paths) -> Result<Catalog, CatalogError> {
        match &paths.root {
            Some(root) => Catalog::load(root),
            None => Ok(Catalog {
                absent: true,
                ..Catalog::default()
            }),
        }
    }

    /// The catalog of `paths`' root; without one, [`CatalogError::NoCatalog`] naming `what`.
    pub fn required(paths: &paths::Paths, what: &str) -> Result<Catalog, CatalogError> {
        let root = paths
            .catalog_root(what)
            .map_err(|e| CatalogError::NoCatalog(e.to_string()))?;
        Catalog::load(root)
    }

    /// Reads every `<root>/servers/*/*/server.toml`. Only an unreadable `servers/` folder is an
    /// error; a broken manifest goes to [`Catalog::broken`].
    pub fn load(root: &Path) -> Result<Catalog, CatalogError> {
        let servers_dir = root.join("servers");
        let mut catalog = Catalog::default();
        for lang_dir in sorted_subdirs(&servers_dir)? {
            for dir in sorted_subdirs(&lang_dir)? {
                if !dir.join("server.toml").is_file() {
                    continue;
                }
                let id = format!("{}/{}", file_name(&lang_dir), file_name(&dir));
                match load_server(&id, &dir) {
                    Ok(server) => catalog.servers.push(server),
                    Err(error) => catalog.broken.push(BrokenServer { id, dir, error }),
                }
            }
        }
        Ok(catalog)
    }

    /// The server with this id; a broken one gives its manifest error, an unknown one an error
    /// listing the closest ids.
    pub fn get(&self, id: &str) -> Result<&Server, CatalogError> {
        if let Some(s) = self.servers.iter().find(|s| s.id == id) {
            return Ok(s);
        }
        if let Some(b) = self.broken.iter().find(|b| b.id == id) {
            return Err(reload_error(b));
        }
        if self.absent {
            let e = paths::no_catalog("not a server of yours; running a catalog server");
            return Err(CatalogError::NoCatalog(e.to_string()));
        }
        Err(CatalogError::UnknownServer {
            id: id.to_string(),
            closest: closest_ids(id, self.ids()),
        })
    }

    /// Every id (valid and broken), sorted.
    pub fn ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self.servers.iter().map(|s| s.id.as_str()).collect();
        ids.extend(self.broken.iter().map(|b| b.id.as_str()));
        ids.sort_unstable();
        ids
    }
}

/// Errors are not `Clone` (io::Error); rebuild an equivalent one for `get`.
fn reload_error(b: &BrokenServer) -> CatalogError {
    match &b.error {
        CatalogError::Manifest {
            file,
            line,
            key,
            message,
        } => CatalogError::Manifest {
            file: file.clone(),
            line: *line,
            key: key.clone(),
            message: message.clone(),
        },
        CatalogError::Io { path, source } => CatalogError::Io {
            path: path.clone(),
            source: std::io::Error::new(source.kind(), source.to_string()),
        },
        CatalogError::UnknownServer { id, closest } => CatalogError::UnknownServer {
            id: id.clone(),
            closest: closest.clone(),
        },
        CatalogError::NoCatalog(why) => CatalogError::NoCatalog(why.clone()),
    }
}

/// Parses and validates one server folder.
pub fn load_server(id: &str, dir: &Path) -> Result<Server, CatalogError> {
    let file = dir.join("server.toml");
    let text = std::fs::read_to_string(&file).map_err(|source| CatalogError::Io {
        path: file.clone(),
        source,
    })?;
    let manifest = Manifest::parse(&text, &file)?;
    validate(id, dir, &file, &text, &manifest)?;
    Ok(Server {
        id: id.to_string(),
        dir: dir.to_path_buf(),
        manifest,
    })
}

fn validate(
    id: &str,
    dir: &Path,
    file: &Path,
    text: &str,
    m: &Manifest,
) -> Result<(), CatalogError> {
    let invalid = |key: &str, message: String| CatalogError::Manifest {
        file: file.to_path_buf(),
        line: toml_pos::line_of_key(text, key),
        key: key.to_string(),
        message,
    };
    if m.name != id {
        return Err(invalid(
            "name",
            format!("is \"{}\" but the folder is servers/{id}", m.name),
        ));
    }
    if m.implements.is_empty() {
        return Err(invalid("implements", "declares no feature".into()));
    }
    if m.implements(Feature::H3) && !m.implements(Feature::Tls) {
        return Err(invalid(
            "implements",
            "declares h3 without tls: an HTTP/3 server also serves HTTPS on TLS_PORT, whose \
             Alt-Svc header announces H3_PORT and which the harness waits for"
                .into(),
        ));
    }
    if m.commands.run.trim().is_empty() {
        return Err(invalid("commands.run", "is empty".into()));
    }
    if let Some(missing) = m
        .requires
        .lockfiles
        .iter()
        .find(|l| !dir.join(l.as_str()).is_file())
    {
        return Err(invalid(
            "requires.lockfiles",
            format!("lockfile {missing} does not exist in {}", dir.display()),
        ));
    }
    Ok(())
}

fn sorted_subdirs(dir: &Path) -> Result<Vec<PathBuf>, CatalogError> {
    let entries = std::fs::read_dir(dir).map_err(|source| CatalogError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !file_name(p).starts_with('.'))
        .collect();
    dirs.sort();
    Ok(dirs)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Up to three ids closest to `id` (substring matches first, then by edit distance).
pub fn closest_ids(id: &str, ids: Vec<&str>) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = ids
        .into_iter()
        .map(|c| {
            let d = if c.contains(id) || id.contains(c) {
                0
            } else {
                strsim::levenshtein(id, c)
            };
            (d, c)
        })
        .filter(|(d, c)| *d <= c.len().max(id.len()) / 2 + 1)
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_string())
        .collect()
}

#[cfg(test)]
mod tests;
