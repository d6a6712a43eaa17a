//! Whether a server can run here: toolchain on PATH, set up and built, or why not.

use crate::paths::Paths;
use crate::Server;
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;

/// A command a server needs that is not on PATH.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MissingCommand {
    /// The executable.
    pub command: String,
    /// Debian packages that would provide it (may be empty).
    pub apt: Vec<String>,
}

/// Whether a server can run here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Availability {
    /// `requires.unavailable` says it cannot run on this kind of machine.
    Unavailable {
        /// The manifest's reason.
        reason: String,
    },
    /// Commands of `requires.commands` are not on PATH.
    MissingCommands {
        /// Each missing command with the packages that would provide it.
        missing: Vec<MissingCommand>,
    },
    /// Toolchain present, but `setup`/`build` has not run on the current content.
    NotSetUp,
    /// Can run now.
    Ready,
}

impl Availability {
    /// True for [`Availability::Ready`].
    pub fn is_ready(&self) -> bool {
        matches!(self, Availability::Ready)
    }
}

impl fmt::Display for Availability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Availability::Unavailable { reason } => write!(f, "unavailable: {reason}"),
            Availability::MissingCommands { missing } => {
                let parts: Vec<String> = missing
                    .iter()
                    .map(|m| {
                        if m.apt.is_empty() {
                            m.command.clone()
                        } else {
                            format!("{} (apt: {})", m.command, m.apt.join(" "))
                        }
                    })
                    .collect();
                write!(f, "missing {}", parts.join(", "))
            }
            Availability::NotSetUp => f.write_str("needs setup"),
            Availability::Ready => f.write_str("ready"),
        }
    }
}

/// Whether `server` can run here (see [`Availability`]).
pub fn availability(server: &Server, paths: &Paths) -> Availability {
    let req = &server.manifest.requires;
    if !req.unavailable.trim().is_empty() {
        return Availability::Unavailable {
            reason: req.unavailable.trim().to_string(),
        };
    }
    let missing: Vec<MissingCommand> = req
        .commands
        .iter()
        .filter(|c| on_path(c).is_none())
        .map(|c| MissingCommand {
            command: c.clone(),
            apt: apt_package_for(c, &req.apt),
        })
        .collect();
    if !missing.is_empty() {
        return Availability::MissingCommands { missing };
    }
    if crate::stamps::needs_setup(server, paths) {
        Availability::NotSetUp
    } else {
        Availability::Ready
    }
}

/// Why `server` cannot start here, as the one line every command that starts a catalog server
/// says (`needs setup (try `serverbench setup node/net`)`), or `None` when it is ready.
pub fn not_ready(server: &Server, paths: &Paths) -> Option<String> {
    match availability(server, paths) {
        Availability::Ready => None,
        a @ Availability::Unavailable { .. } => Some(a.to_string()),
        a => Some(format!("{a} (try `serverbench setup {}`)", server.id)),
    }
}

/// The full path of an executable found on PATH (or the path itself when it has a `/`).
pub fn on_path(command: &str) -> Option<PathBuf> {
    which::which(command).ok()
}

/// Debian packages providing well-known commands.
const KNOWN: &[(&str, &str)] = &[
    ("node", "nodejs"),
    ("npm", "npm"),
    ("npx", "npm"),
    ("python3", "python3"),
    ("pip3", "python3-pip"),
    ("go", "golang-go"),
    ("cargo", "cargo"),
    ("rustc", "rustc"),
    ("java", "openjdk-17-jdk-headless"),
    ("javac", "openjdk-17-jdk-headless"),
    ("mvn", "maven"),
    ("gcc", "gcc"),
    ("cc", "gcc"),
    ("make", "make"),
    ("erl", "erlang-nox"),
    ("elixir", "elixir"),
    ("ocaml", "ocaml-nox"),
    ("php", "php-cli"),
    ("ruby", "ruby"),
    ("dotnet", "dotnet-sdk-8.0"),
    ("zig", "zig"),
    ("deno", "deno"),
    ("bun", "bun"),
];

/// The apt packages that would provide `command`: the well-known mapping when the manifest's
/// `requires.apt` lists that package (or lists nothing), else the manifest's whole list.
pub fn apt_package_for(command: &str, manifest_apt: &[String]) -> Vec<String> {
    let known = KNOWN.iter().find(|(c, _)| *c == command).map(|(_, p)| *p);
    match known {
        Some(p) if manifest_apt.is_empty() || manifest_apt.iter().any(|a| a == p) => {
            vec![p.to_string()]
        }
        _ => manifest_apt.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_commands_map_to_their_debian_package() {
        assert_eq!(apt_package_for("node", &[]), vec!["nodejs"]);
        assert_eq!(
            apt_package_for("node", &["nodejs".into(), "npm".into()]),
            vec!["nodejs"]
        );
        assert_eq!(apt_package_for("wrk", &["wrk".into()]), vec!["wrk"]);
    }

    #[test]
    fn sh_is_found_on_path_and_nonsense_is_not() {
        assert!(on_path("sh").is_some());
        assert!(on_path("serverbench-no-such-tool").is_none());
    }

    #[test]
    fn missing_commands_render_with_their_packages() {
        let a = Availability::MissingCommands {
            missing: vec![MissingCommand {
                command: "node".into(),
                apt: vec!["nodejs".into()],
            }],
        };
        assert_eq!(a.to_string(), "missing node (apt: nodejs)");
    }
}
