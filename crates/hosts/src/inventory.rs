//! `hosts.toml`: the strict inventory format of spec/hosts.md.
//!
//! Parsing is strict like the catalog manifests: an unknown key, a wrong type or a missing
//! required key is an error naming the file, the line and the key.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Errors reading an inventory.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    /// The file cannot be read.
    #[error("{}: {source}", file.display())]
    Read {
        /// The inventory file.
        file: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file does not follow spec/hosts.md.
    #[error("{}:{line}: key `{key}`: {message}", file.display())]
    Invalid {
        /// The inventory file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// The key at fault, e.g. `hosts.db.cpus`.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A host named on the command line is not in the inventory.
    #[error("{}: no host `{name}` (hosts: {known})", file.display())]
    UnknownHost {
        /// The inventory file.
        file: PathBuf,
        /// The name asked for.
        name: String,
        /// The names the file has, comma-separated.
        known: String,
    },
}

/// The file as written (before defaults are applied).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    defaults: Defaults,
    #[serde(default)]
    hosts: BTreeMap<String, Entry>,
}

/// `[defaults]`: what every host inherits unless it sets its own.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Defaults {
    checkout: Option<PathBuf>,
    binary: Option<PathBuf>,
    ssh_config: Option<PathBuf>,
    #[serde(default)]
    ssh_options: Vec<String>,
}

/// `[hosts.NAME]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    ssh: String,
    address: String,
    checkout: Option<PathBuf>,
    binary: Option<PathBuf>,
    cpus: Option<Vec<usize>>,
    ssh_config: Option<PathBuf>,
    ssh_options: Option<Vec<String>>,
}

/// One host, defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Its name in the inventory (and on the command line, in results and messages).
    pub name: String,
    /// The ssh destination: `user@host`, `host` or an alias of the ssh config.
    pub ssh: String,
    /// The address the other hosts reach it at (what the server binds and clients connect to).
    pub address: String,
    /// The serverbench checkout on that host.
    pub checkout: PathBuf,
    /// The serverbench binary on that host.
    pub binary: PathBuf,
    /// CPUs to use there (empty: all).
    pub cpus: Vec<usize>,
    /// `ssh -F`: this file instead of `~/.ssh/config`.
    pub ssh_config: Option<PathBuf>,
    /// `ssh -o` options, `Key=value`.
    pub ssh_options: Vec<String>,
}

/// Where the controller itself runs from: the defaults for `checkout` and `binary`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Local {
    /// The local checkout (the default `checkout` of every host).
    pub checkout: PathBuf,
    /// The running serverbench binary: inside the checkout, the same relative path on each
    /// host; elsewhere, the same absolute path.
    pub binary: PathBuf,
}

/// A parsed inventory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inventory {
    /// The file it came from.
    pub file: PathBuf,
    /// Hosts by name, in name order.
    pub hosts: Vec<Host>,
}

impl Inventory {
    /// Reads and validates `file`.
    pub fn load(file: &Path, local: &Local) -> Result<Inventory, InventoryError> {
        let text = std::fs::read_to_string(file).map_err(|source| InventoryError::Read {
            file: file.to_path_buf(),
            source,
        })?;
        Inventory::parse(&text, file, local)
    }

    /// Parses inventory text; `file` names the source in errors and anchors relative paths.
    pub fn parse(text: &str, file: &Path, local: &Local) -> Result<Inventory, InventoryError> {
        let parsed: File = toml::from_str(text).map_err(|e| toml_error(text, file, &e))?;
        let invalid = |key: String, message: String| InventoryError::Invalid {
            file: file.to_path_buf(),
            line: line_of_key(text, &key),
            key,
            message,
        };
        if parsed.hosts.is_empty() {
            return Err(invalid("hosts".into(), "no [hosts.NAME] table".into()));
        }
        let base = file.parent().unwrap_or(Path::new("."));
        let anchored = |p: &Path| -> PathBuf {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                base.join(p)
            }
        };
        let d = &parsed.defaults;
        let mut hosts = Vec::new();
        for (name, e) in &parsed.hosts {
            validate_entry(name, e, d).map_err(|(field, why)| {
                invalid(format!("hosts.{}.{field}", name_key(name)), why)
            })?;
            let checkout = e
                .checkout
                .clone()
                .or_else(|| d.checkout.clone())
                .unwrap_or_else(|| local.checkout.clone());
            let binary = e
                .binary
                .clone()
                .or_else(|| d.binary.clone())
                .unwrap_or_else(|| same_binary(local, &checkout));
            hosts.push(Host {
                name: name.clone(),
                ssh: e.ssh.clone(),
                address: e.address.clone(),
                checkout,
                binary,
                cpus: e.cpus.clone().unwrap_or_default(),
                ssh_config: e
                    .ssh_config
                    .as_ref()
                    .or(d.ssh_config.as_ref())
                    .map(|p| anchored(p)),
                ssh_options: d
                    .ssh_options
                    .iter()
                    .chain(e.ssh_options.iter().flatten())
                    .cloned()
                    .collect(),
            });
        }
        Ok(Inventory {
            file: file.to_path_buf(),
            hosts,
        })
    }

    /// The host called `name`.
    pub fn host(&self, name: &str) -> Result<&Host, InventoryError> {
        self.hosts
            .iter()
            .find(|h| h.name == name)
            .ok_or_else(|| InventoryError::UnknownHost {
                file: self.file.clone(),
                name: name.to_string(),
                known: self.names().join(", "),
            })
    }

    /// The hosts called `names`, in that order.
    pub fn select(&self, names: &[String]) -> Result<Vec<Host>, InventoryError> {
        names.iter().map(|n| self.host(n).cloned()).collect()
    }

    /// Every host name.
    pub fn names(&self) -> Vec<String> {
        self.hosts.iter().map(|h| h.name.clone()).collect()
    }
}

/// The local binary's path as seen from a host whose checkout is `checkout`.
fn same_binary(local: &Local, checkout: &Path) -> PathBuf {
    same_path(local, checkout, &local.binary)
}

/// A local path as seen from a host whose checkout is `checkout`: inside the local checkout,
/// the same relative path in the host's; elsewhere, the same absolute path.
fn same_path(local: &Local, checkout: &Path, path: &Path) -> PathBuf {
    match path.strip_prefix(&local.checkout) {
        Ok(rel) => checkout.join(rel),
        Err(_) => path.to_path_buf(),
    }
}

impl Host {
    /// `path` (on the controller) as seen on this host: see [`Local`].
    pub fn path_there(&self, local: &Local, path: &Path) -> PathBuf {
        same_path(local, &self.checkout, path)
    }
}

/// Checks one entry; the error is (field, why).
fn validate_entry(name: &str, e: &Entry, d: &Defaults) -> Result<(), (&'static str, String)> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err((
            "ssh",
            format!("host name `{name}`: use letters, digits, `-`, `_` and `.` only"),
        ));
    }
    if e.ssh.trim().is_empty() || e.ssh.starts_with('-') || e.ssh.contains(char::is_whitespace) {
        return Err((
            "ssh",
            format!("`{}` is not an ssh destination (user@host or host)", e.ssh),
        ));
    }
    if e.address.trim().is_empty() || e.address.contains(['/', ' ']) {
        return Err((
            "address",
            format!("`{}` is not a host name or IP address", e.address),
        ));
    }
    for (field, path) in [("checkout", &e.checkout), ("binary", &e.binary)] {
        if let Some(p) = path {
            if !p.is_absolute() {
                return Err((field, format!("`{}` must be an absolute path", p.display())));
            }
        }
    }
    if let Some(cpus) = &e.cpus {
        if cpus.is_empty() {
            return Err(("cpus", "give at least one CPU or leave `cpus` out".into()));
        }
    }
    let options = d.ssh_options.iter().chain(e.ssh_options.iter().flatten());
    if let Some(bad) = options
        .clone()
        .find(|o| !o.contains('=') || o.starts_with('-'))
    {
        return Err((
            "ssh_options",
            format!("`{bad}` is not an ssh option of the form Key=value"),
        ));
    }
    Ok(())
}

/// A host name as it appears in a TOML key (quoted when it has a dot).
fn name_key(name: &str) -> String {
    if name.contains('.') {
        format!("\"{name}\"")
    } else {
        name.to_string()
    }
}

/// Turns a toml error into `InventoryError::Invalid` with the line and the key.
fn toml_error(text: &str, file: &Path, err: &toml::de::Error) -> InventoryError {
    let message = err.message().trim().to_string();
    let offset = err.span().map_or(0, |s| s.start).min(text.len());
    let line = text[..offset].bytes().filter(|&b| b == b'\n').count() + 1;
    // The table in effect at the end of the error's line (a header line is its own table).
    let eol = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let table = table_at(text, eol);
    let named = message
        .split('`')
        .nth(1)
        .filter(|_| message.starts_with("unknown field") || message.starts_with("missing field"));
    let field = match named {
        Some(k) => k.to_string(),
        None => text
            .lines()
            .nth(line - 1)
            .unwrap_or("")
            .split('=')
            .next()
            .unwrap_or("?")
            .trim()
            .to_string(),
    };
    let key = match table {
        Some(t) if !field.starts_with('[') => format!("{t}.{field}"),
        _ => field.trim_matches(|c| c == '[' || c == ']').to_string(),
    };
    InventoryError::Invalid {
        file: file.to_path_buf(),
        line,
        key,
        message,
    }
}

/// The `[table]` header in effect at `offset`, if any.
fn table_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    text[..offset].lines().rev().find_map(|l| {
        let l = l.trim();
        (l.starts_with('[') && l.ends_with(']'))
            .then(|| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
    })
}

/// The line where `key` (`table.field`, or a table) is set, for validation errors.
fn line_of_key(text: &str, key: &str) -> usize {
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with('[') && t.ends_with(']') {
            current = t.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            if current == key {
                return i + 1;
            }
            continue;
        }
        let field = t.split('=').next().unwrap_or("").trim();
        if !field.is_empty() && format!("{current}.{field}") == key {
            return i + 1;
        }
    }
    // A key that is not written (a missing field): the line of its table.
    match key.rsplit_once('.') {
        Some((table, _)) => line_of_key(text, table),
        None => 1,
    }
}

#[cfg(test)]
mod tests;
