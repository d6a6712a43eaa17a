//! One way to install Debian packages for serverbench (catalog toolchains, load tools, PostgreSQL):
//! `apt-get` as root, non-interactive, with a `policy-rc.d` that exits 101 for the length of the
//! install so a package shipping a service (postgresql, nginx) never starts it machine-wide.
//!
//! Nothing is printed: the steps are reported to the caller, which decides what to show.

mod policy;

pub use policy::{PolicyRc, POLICY_RC_PATH};
use std::process::{Command, Stdio};

/// Why a package could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    /// Not root: apt-get cannot install.
    #[error(
        "{packages} not installed and not root: install it with `sudo apt-get install {packages}`"
    )]
    NotRoot {
        /// The packages, space-separated.
        packages: String,
    },
    /// apt-get is not on PATH (not a Debian-like system).
    #[error("{packages} not installed and apt-get is not on PATH (install {packages} by hand)")]
    NoApt {
        /// The packages, space-separated.
        packages: String,
    },
    /// apt-get ran and failed.
    #[error("`{command}` failed ({status}): {tail}")]
    Failed {
        /// The command line.
        command: String,
        /// Its exit status.
        status: String,
        /// The last lines of its stderr, joined with ` | `.
        tail: String,
    },
    /// The policy-rc.d file could not be written or restored.
    #[error("{path}: {source}")]
    Policy {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// apt-get could not be started.
    #[error("cannot run apt-get: {0}")]
    Spawn(std::io::Error),
}

/// True when running as root (the only case apt-get can install).
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// apt-get may be run: root and on PATH.
pub fn can_apt() -> bool {
    is_root() && which::which("apt-get").is_ok()
}

/// An `apt-get` command with `DEBIAN_FRONTEND=noninteractive` and the given arguments.
pub fn apt_command(args: &[&str]) -> Command {
    let mut c = Command::new("apt-get");
    c.args(args).env("DEBIAN_FRONTEND", "noninteractive");
    c
}

/// The arguments of `apt-get install` for `packages` (`-y --no-install-recommends`).
pub fn install_args<'a>(packages: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["install", "-y", "--no-install-recommends"];
    args.extend_from_slice(packages);
    args
}

/// The installed version of a Debian package (`dpkg-query`), `None` when it is not installed or
/// dpkg is not there.
pub fn installed_version(package: &str) -> Option<String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f", "${Status}|${Version}", package])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let (status, version) = text.split_once('|')?;
    (status.ends_with(" installed") && !version.is_empty()).then(|| version.to_owned())
}

/// The packages of `packages` that dpkg does not report as installed (all of them off Debian).
pub fn missing_packages<S: AsRef<str>>(packages: &[S]) -> Vec<String> {
    packages
        .iter()
        .map(AsRef::as_ref)
        .filter(|p| installed_version(p).is_none())
        .map(str::to_owned)
        .collect()
}

/// When to run `apt-get update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    /// Never.
    Never,
    /// Only when the install fails first (stale package lists).
    OnFailure,
    /// Before installing.
    First,
}

/// Installs the `packages` that are missing with apt-get (behind [`PolicyRc`]); `on_step` gets
/// each command line before it runs. Nothing is run when all are installed.
pub fn install(
    packages: &[&str],
    update: Update,
    on_step: &mut dyn FnMut(&str),
) -> Result<(), ProvisionError> {
    let missing = missing_packages(packages);
    if missing.is_empty() {
        return Ok(());
    }
    let names = missing.join(" ");
    if !is_root() {
        return Err(ProvisionError::NotRoot { packages: names });
    }
    if which::which("apt-get").is_err() {
        return Err(ProvisionError::NoApt { packages: names });
    }
    let refs: Vec<&str> = missing.iter().map(String::as_str).collect();
    let _policy = PolicyRc::deny_services()?;
    if update == Update::First {
        run(&mut apt_command(&["update"]), on_step)?;
    }
    match run(&mut apt_command(&install_args(&refs)), on_step) {
        Err(_) if update == Update::OnFailure => {
            run(&mut apt_command(&["update"]), on_step)?;
            run(&mut apt_command(&install_args(&refs)), on_step)
        }
        other => other,
    }
}

/// Runs `cmd`, its output captured; an error with the tail of stderr when it fails.
pub fn run(cmd: &mut Command, on_step: &mut dyn FnMut(&str)) -> Result<(), ProvisionError> {
    let line = command_line(cmd);
    on_step(&line);
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(ProvisionError::Spawn)?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
    Err(ProvisionError::Failed {
        command: line,
        status: out.status.to_string(),
        tail: tail.into_iter().rev().collect::<Vec<_>>().join(" | "),
    })
}

/// `program arg arg…` of a command, for messages.
pub fn command_line(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_arguments_are_non_interactive_without_recommends() {
        assert_eq!(
            install_args(&["postgresql-15", "postgresql-contrib"]),
            [
                "install",
                "-y",
                "--no-install-recommends",
                "postgresql-15",
                "postgresql-contrib"
            ]
        );
        let c = apt_command(&["update"]);
        assert_eq!(command_line(&c), "apt-get update");
        assert!(c
            .get_envs()
            .any(|(k, v)| k == "DEBIAN_FRONTEND" && v == Some("noninteractive".as_ref())));
    }

    #[test]
    fn a_package_that_is_not_installed_is_missing_and_has_no_version() {
        assert_eq!(installed_version("serverbench-no-such-package"), None);
        assert_eq!(
            missing_packages(&["serverbench-no-such-package"]),
            ["serverbench-no-such-package"]
        );
    }

    #[test]
    fn installing_nothing_missing_runs_nothing() {
        let mut steps = Vec::new();
        install(&[], Update::First, &mut |s| steps.push(s.to_owned())).unwrap();
        assert!(steps.is_empty());
    }
}
