//! Installing external tools the ordinary way: Debian packages, npm into the cache.

use super::{Tool, ToolError};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// oha version installed with cargo.
pub const OHA_VERSION: &str = "1.8.0";
/// autocannon version installed with npm.
pub const AUTOCANNON_VERSION: &str = "7.15.0";

/// One install step, reported to the caller (the CLI prints it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallStep {
    /// The tool.
    pub tool: Tool,
    /// The command being run.
    pub command: String,
}

fn run(
    tool: Tool,
    cmd: &mut Command,
    on_step: &mut dyn FnMut(InstallStep),
) -> Result<(), ToolError> {
    on_step(InstallStep {
        tool,
        command: format!("{cmd:?}"),
    });
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ToolError::NotInstalled {
            tool,
            why: e.to_string(),
        })?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
    Err(ToolError::NotInstalled {
        tool,
        why: format!(
            "{cmd:?} failed ({}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ),
    })
}

fn apt(tool: Tool, package: &str, on_step: &mut dyn FnMut(InstallStep)) -> Result<(), ToolError> {
    let mut report = |command: &str| {
        on_step(InstallStep {
            tool,
            command: command.to_owned(),
        })
    };
    serverbench_provision::install(
        &[package],
        serverbench_provision::Update::OnFailure,
        &mut report,
    )
    .map_err(|e| ToolError::NotInstalled {
        tool,
        why: e.to_string(),
    })
}

/// The executable and the Debian package of a tool installed with apt.
fn apt_package(tool: Tool) -> Option<(&'static str, &'static str)> {
    match tool {
        Tool::Wrk => Some(("wrk", "wrk")),
        Tool::Ab => Some(("ab", "apache2-utils")),
        Tool::H2load => Some(("h2load", "nghttp2-client")),
        Tool::Hey => Some(("hey", "hey")),
        Tool::Serverbench | Tool::Autocannon | Tool::Oha => None,
    }
}

/// The tool with its version, as `env.json` records it: `wrk 4.1.0-3+b1` (the Debian package's
/// version), the pinned npm or cargo version, serverbench's own; the bare name when unknown.
pub fn describe(tool: Tool) -> String {
    let version = match tool {
        Tool::Serverbench => Some(env!("CARGO_PKG_VERSION").to_owned()),
        Tool::Autocannon => Some(AUTOCANNON_VERSION.to_owned()),
        Tool::Oha => Some(OHA_VERSION.to_owned()),
        apt_tool => apt_package(apt_tool).and_then(|(_, pkg)| debian_version(pkg)),
    };
    match version {
        Some(v) => format!("{} {v}", tool.as_str()),
        None => tool.as_str().to_owned(),
    }
}

/// The installed version of a Debian package, if it is installed.
fn debian_version(package: &str) -> Option<String> {
    serverbench_provision::installed_version(package)
}

/// Finds `tool`, installing it when missing; returns its executable.
pub fn ensure_installed(
    tool: Tool,
    tools_dir: &Path,
    on_step: &mut dyn FnMut(InstallStep),
) -> Result<PathBuf, ToolError> {
    let (name, apt_pkg) = match tool {
        Tool::Autocannon => return autocannon(tools_dir, on_step),
        Tool::Oha => return oha(tools_dir, on_step),
        other => apt_package(other).ok_or(ToolError::NotInstalled {
            tool: other,
            why: "installing it is not supported yet".into(),
        })?,
    };
    if let Ok(p) = which::which(name) {
        return Ok(p);
    }
    apt(tool, apt_pkg, on_step)?;
    which::which(name).map_err(|_| ToolError::NotInstalled {
        tool,
        why: format!("`{name}` is still not on PATH after installing {apt_pkg}"),
    })
}

fn autocannon(
    tools_dir: &Path,
    on_step: &mut dyn FnMut(InstallStep),
) -> Result<PathBuf, ToolError> {
    let prefix = tools_dir.join("autocannon");
    let exe = prefix.join("node_modules/.bin/autocannon");
    if exe.is_file() {
        return Ok(exe);
    }
    std::fs::create_dir_all(&prefix).map_err(|e| ToolError::NotInstalled {
        tool: Tool::Autocannon,
        why: format!("{}: {e}", prefix.display()),
    })?;
    run(
        Tool::Autocannon,
        Command::new("npm").args([
            "install",
            "--no-audit",
            "--no-fund",
            "--prefix",
            &prefix.display().to_string(),
            &format!("autocannon@{AUTOCANNON_VERSION}"),
        ]),
        on_step,
    )?;
    Ok(exe)
}

fn oha(tools_dir: &Path, on_step: &mut dyn FnMut(InstallStep)) -> Result<PathBuf, ToolError> {
    let exe = tools_dir.join("bin/oha");
    if exe.is_file() {
        return Ok(exe);
    }
    run(
        Tool::Oha,
        Command::new("cargo").args([
            "install",
            "oha",
            "--locked",
            "--version",
            OHA_VERSION,
            "--root",
            &tools_dir.display().to_string(),
        ]),
        on_step,
    )?;
    Ok(exe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_engine_and_pinned_tools_are_described_with_their_versions() {
        assert_eq!(
            describe(Tool::Serverbench),
            format!("serverbench {}", env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(describe(Tool::Oha), format!("oha {OHA_VERSION}"));
        assert_eq!(
            describe(Tool::Autocannon),
            format!("autocannon {AUTOCANNON_VERSION}")
        );
    }

    #[test]
    fn a_package_that_is_not_installed_has_no_version() {
        assert_eq!(debian_version("serverbench-no-such-package"), None);
    }
}
