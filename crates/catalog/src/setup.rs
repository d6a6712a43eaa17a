//! `serverbench setup`: install missing toolchains (apt-get when root), check lockfiles, run the
//! manifest's `setup` and `build` commands, cached on a hash of the server folder's content.
//!
//! Progress is reported through [`SetupEvent`]s; nothing is printed here.

use crate::command::ServerEnv;
use crate::paths::Paths;
pub use crate::stamps::{
    content_hash, needs_setup, read_stamp, stamp_of, write_stamp, IGNORED_DIRS,
};
use crate::{availability, on_path, Availability, Server};
use std::fmt;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A step of a server's setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `apt-get update`.
    AptUpdate,
    /// `apt-get install`.
    AptInstall,
    /// The lockfiles exist.
    Lockfiles,
    /// `commands.setup`.
    Setup,
    /// `commands.build`.
    Build,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Step::AptUpdate => "apt-get update",
            Step::AptInstall => "apt-get install",
            Step::Lockfiles => "lockfiles",
            Step::Setup => "setup",
            Step::Build => "build",
        })
    }
}

/// What happens while setting up, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupEvent {
    /// A step started; `detail` is the command run.
    StepStarted {
        /// Server id.
        server: String,
        /// The step.
        step: Step,
        /// The command or what is checked.
        detail: String,
    },
    /// A step finished successfully.
    StepFinished {
        /// Server id.
        server: String,
        /// The step.
        step: Step,
        /// How long it took.
        elapsed: Duration,
    },
    /// The server was skipped (unavailable, toolchain cannot be had, or already up to date).
    Skipped {
        /// Server id.
        server: String,
        /// Why.
        reason: String,
    },
    /// A step failed; the server is not set up.
    Failed {
        /// Server id.
        server: String,
        /// The step.
        step: Step,
        /// What went wrong.
        error: String,
        /// The last lines of the setup log.
        log_tail: String,
    },
    /// The server's setup ended (after its other events).
    Finished {
        /// Server id.
        server: String,
        /// How it ended.
        outcome: Outcome,
        /// How long its setup took, checks included.
        elapsed: Duration,
    },
}

/// How one server's setup ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Setup and build ran and the stamp was written.
    Built,
    /// The stamp matched the content: nothing to do.
    UpToDate,
    /// Not set up, not a failure: unavailable here or its toolchain cannot be had.
    Skipped(String),
    /// A step failed.
    Failed(String),
}

/// Options of [`setup_servers`].
#[derive(Debug, Clone, Default)]
pub struct SetupOptions {
    /// Run setup and build even when the stamp matches.
    pub force: bool,
    /// Never run apt-get (even as root).
    pub no_apt: bool,
}

/// One server's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSetup {
    /// Server id.
    pub server: String,
    /// How it ended.
    pub outcome: Outcome,
}

impl ServerSetup {
    /// True when it failed (an available server whose setup did not succeed).
    pub fn failed(&self) -> bool {
        matches!(self.outcome, Outcome::Failed(_))
    }
}

/// Sets up each server in order; a failure does not stop the others.
pub fn setup_servers(
    servers: &[&Server],
    paths: &Paths,
    opts: &SetupOptions,
    on_event: &mut dyn FnMut(SetupEvent),
) -> Vec<ServerSetup> {
    let mut apt_updated = false;
    let mut one = |s: &Server| {
        let t = Instant::now();
        let outcome = setup_one(s, paths, opts, &mut apt_updated, on_event);
        on_event(SetupEvent::Finished {
            server: s.id.clone(),
            outcome: outcome.clone(),
            elapsed: t.elapsed(),
        });
        ServerSetup {
            server: s.id.clone(),
            outcome,
        }
    };
    servers.iter().map(|s| one(s)).collect()
}

struct Ctx<'a> {
    server: &'a Server,
    log: &'a Path,
    on_event: &'a mut dyn FnMut(SetupEvent),
}

impl Ctx<'_> {
    fn emit(&mut self, e: SetupEvent) {
        (self.on_event)(e)
    }

    fn fail(&mut self, step: Step, error: String) -> Outcome {
        let log_tail = crate::logs::log_tail(self.log, 20);
        self.emit(SetupEvent::Failed {
            server: self.server.id.clone(),
            step,
            error: error.clone(),
            log_tail,
        });
        Outcome::Failed(format!("{step}: {error}"))
    }

    fn skip(&mut self, reason: String) -> Outcome {
        self.emit(SetupEvent::Skipped {
            server: self.server.id.clone(),
            reason: reason.clone(),
        });
        Outcome::Skipped(reason)
    }

    /// Runs a logged step; Err carries the failure message.
    fn step(&mut self, step: Step, cmd: &mut Command, detail: &str) -> Result<(), String> {
        self.emit(SetupEvent::StepStarted {
            server: self.server.id.clone(),
            step,
            detail: detail.to_string(),
        });
        let t = Instant::now();
        run_logged(cmd, self.log, detail)?;
        self.emit(SetupEvent::StepFinished {
            server: self.server.id.clone(),
            step,
            elapsed: t.elapsed(),
        });
        Ok(())
    }
}

fn setup_one(
    server: &Server,
    paths: &Paths,
    opts: &SetupOptions,
    apt_updated: &mut bool,
    on_event: &mut dyn FnMut(SetupEvent),
) -> Outcome {
    let log = paths.setup_log(&server.id);
    let _ = std::fs::create_dir_all(paths.logs_dir());
    let _ = std::fs::write(&log, "");
    let mut ctx = Ctx {
        server,
        log: &log,
        on_event,
    };
    let packages = missing_apt_packages(&server.manifest.requires.apt);
    match availability(server, paths) {
        Availability::Unavailable { reason } => return ctx.skip(format!("unavailable: {reason}")),
        a @ Availability::MissingCommands { .. } => {
            if let Err(outcome) = install_toolchain(&mut ctx, opts, apt_updated, &a.to_string()) {
                return outcome;
            }
        }
        // Declared packages that are not commands (a shared library, say) are installed too.
        Availability::NotSetUp | Availability::Ready if !packages.is_empty() && can_apt(opts) => {
            let what = format!("missing apt packages {}", packages.join(", "));
            if let Err(outcome) = install_toolchain(&mut ctx, opts, apt_updated, &what) {
                return outcome;
            }
        }
        Availability::NotSetUp | Availability::Ready => {}
    }
    if let Some(l) = missing_lockfile(server) {
        return ctx.fail(Step::Lockfiles, format!("lockfile {l} is missing"));
    }
    let cmds = &server.manifest.commands;
    if cmds.setup.trim().is_empty() && cmds.build.trim().is_empty() {
        ctx.skip("nothing to set up (no setup or build command)".into());
        return Outcome::UpToDate;
    }
    let hash = match stamp_of(server) {
        Ok(h) => h,
        Err(e) => return ctx.fail(Step::Lockfiles, format!("cannot hash the folder: {e}")),
    };
    if !opts.force && read_stamp(paths, &server.id).as_deref() == Some(hash.as_str()) {
        ctx.skip("up to date (stamp matches the content)".into());
        return Outcome::UpToDate;
    }
    let _ = std::fs::remove_file(paths.stamp_file(&server.id));
    for (step, c) in [(Step::Setup, &cmds.setup), (Step::Build, &cmds.build)] {
        if c.trim().is_empty() {
            continue;
        }
        if let Err(e) = ctx.step(step, &mut server_command(server, paths, c), c) {
            return ctx.fail(step, e);
        }
    }
    // Hash again: files that setup/build wrote into the folder (outside the ignored folders,
    // e.g. a generated go.sum) are part of the content the next run compares with.
    let stamped = stamp_of(server).and_then(|h| write_stamp(paths, &server.id, &h));
    match stamped {
        Ok(()) => Outcome::Built,
        Err(e) => ctx.fail(Step::Build, format!("cannot write the stamp: {e}")),
    }
}

/// apt-get install the manifest's packages when root; Err(outcome) when the server must stop.
fn install_toolchain(
    ctx: &mut Ctx<'_>,
    opts: &SetupOptions,
    apt_updated: &mut bool,
    missing: &str,
) -> Result<(), Outcome> {
    let apt = &ctx.server.manifest.requires.apt;
    if apt.is_empty() || !can_apt(opts) {
        let why = if apt.is_empty() {
            "no apt package declared"
        } else if opts.no_apt {
            "--no-apt"
        } else {
            "not root"
        };
        return Err(ctx.skip(format!("{missing} ({why})")));
    }
    if !*apt_updated {
        let mut c = apt_command(&["update"]);
        if let Err(e) = ctx.step(Step::AptUpdate, &mut c, "apt-get update") {
            return Err(ctx.skip(format!("{missing}: apt-get update failed: {e}")));
        }
        *apt_updated = true;
    }
    let mut args = vec!["install", "-y", "--no-install-recommends"];
    args.extend(apt.iter().map(String::as_str));
    let detail = format!("apt-get {}", args.join(" "));
    // A package that ships a service (nginx, postgresql) must not start it machine-wide.
    let policy = match serverbench_provision::PolicyRc::deny_services() {
        Ok(p) => p,
        Err(e) => return Err(ctx.skip(format!("{missing}: {e}"))),
    };
    let installed = ctx.step(Step::AptInstall, &mut apt_command(&args), &detail);
    drop(policy);
    if let Err(e) = installed {
        return Err(ctx.skip(format!("{missing}: {e}")));
    }
    let still: Vec<&String> = ctx
        .server
        .manifest
        .requires
        .commands
        .iter()
        .filter(|c| on_path(c).is_none())
        .collect();
    if !still.is_empty() {
        let names: Vec<&str> = still.iter().map(|s| s.as_str()).collect();
        return Err(ctx.skip(format!("still missing after apt-get: {}", names.join(", "))));
    }
    Ok(())
}

/// apt-get may be run: we are root, it is on PATH and `--no-apt` was not given.
fn can_apt(opts: &SetupOptions) -> bool {
    !opts.no_apt && serverbench_provision::can_apt()
}

/// The packages of `apt` that dpkg does not report as installed (all of them when dpkg-query is
/// not there, e.g. off Debian: then apt-get is not there either and nothing is attempted).
fn missing_apt_packages(apt: &[String]) -> Vec<String> {
    serverbench_provision::missing_packages(apt)
}

fn apt_command(args: &[&str]) -> Command {
    serverbench_provision::apt_command(args)
}

/// `sh -c CMD` in the server's folder with the contract's environment (the defaults of
/// [`ServerEnv`]).
pub fn server_command(server: &Server, paths: &Paths, cmd: &str) -> Command {
    ServerEnv::default().command(server, paths, cmd)
}

/// Runs `cmd` with stdout+stderr appended to `log` (after a `$ detail` line).
fn run_logged(cmd: &mut Command, log: &Path, detail: &str) -> Result<(), String> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let _ = writeln!(f, "$ {detail}");
    let err = f.try_clone().map_err(|e| e.to_string())?;
    let status = cmd
        .stdin(Stdio::null())
        .stdout(f)
        .stderr(err)
        .status()
        .map_err(|e| format!("cannot run `{detail}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{detail}` failed ({status}); log: {}",
            log.display()
        ))
    }
}

fn missing_lockfile(server: &Server) -> Option<&String> {
    server
        .manifest
        .requires
        .lockfiles
        .iter()
        .find(|l| !server.dir.join(l.as_str()).is_file())
}
