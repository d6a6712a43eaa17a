//! The postmaster's process: who runs it, is it alive, signals and waiting.

use crate::{DbError, Result};
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::{Pid, User};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// True when running as root (then PostgreSQL runs as the `postgres` user).
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The `postgres` user's uid and gid, when running as root (else `None`: run as ourselves).
pub fn postgres_ids() -> Result<Option<(u32, u32)>> {
    if !is_root() {
        return Ok(None);
    }
    match User::from_name("postgres") {
        Ok(Some(u)) => Ok(Some((u.uid.as_raw(), u.gid.as_raw()))),
        _ => Err(DbError::Step {
            step: "finding the postgres user".into(),
            detail: "no `postgres` user (it comes with the postgresql-15 package)".into(),
        }),
    }
}

/// As root: `path` belongs to `postgres` with `mode`; else only the mode.
pub fn give_to_postgres(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some((uid, gid)) = postgres_ids()? {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(DbError::io(path))?;
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(DbError::io(path))
}

/// True while `pid` is a live (not zombie) process named `postgres`.
pub fn is_postgres(pid: u32) -> bool {
    serverbench_machine::process::stat(pid).is_some_and(|st| st.is_live() && st.comm == "postgres")
}

/// The fields of `postmaster.pid` serverbench reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostmasterPid {
    /// The PID.
    pub pid: u32,
    /// The port.
    pub port: u16,
    /// The socket folder.
    pub socket_dir: String,
    /// The TCP addresses it listens on.
    pub listen: String,
}

/// Reads `<data>/postmaster.pid`; `None` when absent or not a live postgres.
pub fn read_postmaster_pid(data: &Path) -> Option<PostmasterPid> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    let parsed = parse_postmaster_pid(&text)?;
    is_postgres(parsed.pid).then_some(parsed)
}

/// Parses the lines of `postmaster.pid` (PID, data, start time, port, socket folder, addresses).
pub fn parse_postmaster_pid(text: &str) -> Option<PostmasterPid> {
    let lines: Vec<&str> = text.lines().collect();
    Some(PostmasterPid {
        pid: lines.first()?.trim().parse().ok()?,
        port: lines.get(3)?.trim().parse().ok()?,
        socket_dir: lines
            .get(4)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default(),
        listen: lines
            .get(5)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default(),
    })
}

/// Stops the postmaster `pid`: a fast shutdown (SIGINT), then an immediate one (SIGQUIT) after
/// 20 s, then SIGKILL to its process group. `child` is reaped when it is ours.
pub fn stop(pid: u32, mut child: Option<&mut Child>) -> Result<()> {
    let steps = [
        (Signal::SIGINT, Duration::from_secs(20)),
        (Signal::SIGQUIT, Duration::from_secs(5)),
    ];
    for (sig, wait) in steps {
        let _ = kill(Pid::from_raw(pid as i32), sig);
        if wait_gone(pid, child.as_deref_mut(), wait) {
            return Ok(());
        }
    }
    let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
    if wait_gone(pid, child, Duration::from_secs(5)) {
        return Ok(());
    }
    Err(DbError::StopFailed {
        pid,
        detail: "still alive after SIGINT, SIGQUIT and SIGKILL".into(),
    })
}

/// Waits up to `timeout` for `pid` to be gone (reaping `child` when given).
pub fn wait_gone(pid: u32, mut child: Option<&mut Child>, timeout: Duration) -> bool {
    let start = Instant::now();
    loop {
        let gone = match child.as_deref_mut() {
            Some(c) => !matches!(c.try_wait(), Ok(None)),
            None => !is_postgres(pid),
        };
        if gone {
            return true;
        }
        if start.elapsed() > timeout {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_postmaster_pid_file_gives_pid_port_socket_and_addresses() {
        let text =
            "4242\n/d/data\n1700000000\n5433\n/d/socket\n127.0.0.1\n  5433001    32768\nready   \n";
        assert_eq!(
            parse_postmaster_pid(text),
            Some(PostmasterPid {
                pid: 4242,
                port: 5433,
                socket_dir: "/d/socket".into(),
                listen: "127.0.0.1".into()
            })
        );
        assert_eq!(parse_postmaster_pid("garbage"), None);
    }

    #[test]
    fn a_process_that_is_not_postgres_is_not_taken_for_the_postmaster() {
        assert!(!is_postgres(std::process::id()));
        assert!(!is_postgres(u32::MAX));
    }
}
