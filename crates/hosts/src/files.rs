//! Files the controller hands to a host (a run's TLS certificate, a `--cacert`): copied into a
//! folder of the run's own there, which lives exactly as long as a session.
//!
//! The folder is made by `mktemp -d` (mode 0700) inside a session that then waits on its stdin
//! and removes the folder when it ends: when the controller closes it, and also when the
//! controller dies or the connection drops, since the session wrapper ([`crate::wrap`]) then
//! ends the command's group and the command's trap removes the folder. Each file is written by
//! `cat` from the ssh channel's stdin under `umask 077`, so its bytes (a private key) never
//! appear on a command line. A keeper that does not end within its grace (a loaded host, a
//! dropped connection) is killed here, and then a last `rm -rf` of the folder runs in a
//! session of its own, bounded in time, so the folder is not left behind.

use crate::inventory::Host;
use crate::ssh::{Session, SessionLine, Transport};
use crate::wrap::quote;
use crate::HostError;
use std::ffi::OsString;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// How long making the folder or writing one file may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// How long the session may take to remove the folder and end.
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// How long the last `rm -rf` after a keeper that did not end may take.
const REMOVE_LIMIT: Duration = Duration::from_secs(15);

/// The keeper: makes the folder, prints its path, waits for its stdin to end, removes it (also
/// when the wrapper sends SIGTERM to its group).
const KEEPER: &str = r#"umask 077
d=$(mktemp -d "${TMPDIR:-/tmp}/serverbench-run.XXXXXX") || exit 1
trap 'rm -rf "$d"' EXIT
trap 'exit 143' TERM HUP INT
printf '%s\n' "$d"
cat >/dev/null"#;

/// The keeper's command line (run inside the session wrapper).
pub(crate) fn keeper_argv() -> Vec<String> {
    ["sh", "-c", KEEPER].map(String::from).to_vec()
}

/// The remote command writing its stdin to `path`, readable by its owner only.
pub(crate) fn put_script(path: &str) -> String {
    format!(
        "exec sh -c {} serverbench-put {}",
        quote(r#"umask 077 && cat >"$1""#),
        quote(path)
    )
}

/// A folder of the run's own on one host, removed when this is dropped.
#[derive(Debug)]
pub struct RemoteDir {
    host: Host,
    path: String,
    session: Session,
    _lines: Receiver<(usize, SessionLine)>,
    /// `ssh` arguments removing the folder, for a keeper that did not end in time.
    remove: Vec<OsString>,
}

impl RemoteDir {
    /// Makes the folder on `host` (under its `$TMPDIR`, else `/tmp`).
    pub fn create(transport: &Transport, host: &Host) -> Result<RemoteDir, HostError> {
        let (tx, rx) = mpsc::channel();
        let mut session = transport.spawn(host, 0, &keeper_argv(), tx)?;
        let path = match rx.recv_timeout(TIMEOUT) {
            Ok((_, SessionLine::Text(line))) => line,
            Ok((_, SessionLine::Closed)) => {
                let status = session.wait_for(CLOSE_GRACE);
                return Err(session.failure(status, "while making a folder for the run's files"));
            }
            Err(_) => {
                session.stop(CLOSE_GRACE);
                return Err(HostError::Timeout {
                    host: host.name.clone(),
                    what: "making a folder for the run's files".into(),
                    after: TIMEOUT,
                });
            }
        };
        if !path.starts_with('/') {
            return Err(HostError::Protocol {
                host: host.name.clone(),
                message: format!("mktemp -d printed `{path}` instead of a folder"),
            });
        }
        let remove = transport.argv(host, &format!("rm -rf -- {}", quote(&path)));
        Ok(RemoteDir {
            host: host.clone(),
            path,
            session,
            _lines: rx,
            remove,
        })
    }

    /// The folder's absolute path on the host.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Writes `contents` to `name` in the folder (mode 0600); returns the file's path there.
    pub fn put(
        &self,
        transport: &Transport,
        name: &str,
        contents: &[u8],
    ) -> Result<String, HostError> {
        let path = format!("{}/{name}", self.path);
        let out =
            transport.run_with_input(&self.host, &put_script(&path), Some(contents), TIMEOUT)?;
        if out.status.success() {
            return Ok(path);
        }
        Err(HostError::Exited {
            host: self.host.name.clone(),
            during: format!("while writing {path}"),
            status: out.status.to_string(),
            stderr: crate::ssh::last_line(&String::from_utf8_lossy(&out.stderr)),
        })
    }
}

impl Drop for RemoteDir {
    /// Ends the session: the keeper removes the folder; when it had to be killed, a last
    /// `rm -rf` does.
    fn drop(&mut self) {
        if self.session.stop(CLOSE_GRACE).is_none() {
            let mut ssh = Command::new("ssh");
            ssh.args(&self.remove);
            run_bounded(ssh, REMOVE_LIMIT);
        }
    }
}

/// Runs `cmd` (no input, output discarded) for at most `limit`; whether it ended with success.
fn run_bounded(mut cmd: Command, limit: Duration) -> bool {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    let until = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::fs::PermissionsExt;
    use std::process::{Command, Stdio};

    /// The keeper inside the session wrapper, as sshd would run it.
    fn keeper() -> (std::process::Child, String) {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(crate::wrap::remote_command("/tmp", &keeper_argv()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        (child, line.trim().to_string())
    }

    fn put(path: &str, contents: &[u8]) -> std::process::Output {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(put_script(path))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A script that fails at once may close its stdin first (EPIPE): as in
        // `Transport::run_with_input`, the exit status tells.
        let _ = child.stdin.take().unwrap().write_all(contents);
        child.wait_with_output().unwrap()
    }

    #[test]
    fn a_bounded_command_is_killed_at_its_limit_and_one_that_ends_says_how() {
        let mut sleep = Command::new("sleep");
        sleep.arg("30");
        let t = Instant::now();
        assert!(!run_bounded(sleep, Duration::from_millis(200)));
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("serverbench-run.x");
        std::fs::create_dir(&gone).unwrap();
        let mut rm = Command::new("sh");
        rm.args([
            "-c",
            &format!("rm -rf -- {}", quote(gone.to_str().unwrap())),
        ]);
        assert!(run_bounded(rm, Duration::from_secs(10)));
        assert!(!gone.exists());
    }

    #[test]
    fn the_folder_is_private_and_is_removed_when_its_session_closes() {
        let (mut child, dir) = keeper();
        let meta = std::fs::metadata(&dir).unwrap();
        assert!(meta.is_dir(), "{dir}");
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        let file = format!("{dir}/key.pem");
        let out = put(&file, b"-----BEGIN PRIVATE KEY-----\nsecret\n");
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            std::fs::read(&file).unwrap(),
            b"-----BEGIN PRIVATE KEY-----\nsecret\n"
        );
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "readable by its owner only");
        drop(child.stdin.take());
        child.wait().unwrap();
        assert!(!std::path::Path::new(&dir).exists(), "{dir} is left");
    }

    #[test]
    fn the_folder_is_removed_when_the_keepers_group_is_terminated() {
        // What the wrapper does when the connection drops: SIGTERM to the command's group,
        // while the keeper's stdin is still open.
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(KEEPER)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut dir = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut dir)
            .unwrap();
        let dir = dir.trim();
        assert!(std::path::Path::new(dir).is_dir(), "{dir}");
        // SAFETY: signalling the process group of our own child.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGTERM) };
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(143));
        assert!(!std::path::Path::new(dir).exists(), "{dir} is left");
    }

    #[test]
    fn a_file_that_cannot_be_written_fails_naming_the_path() {
        let out = put("/nonexistent/serverbench-run.x/cert.pem", b"x");
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("/nonexistent/serverbench-run.x/cert.pem"),
            "{err}"
        );
    }
}
