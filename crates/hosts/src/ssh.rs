//! The transport: the system's OpenSSH client and nothing else.
//!
//! Every command runs as `ssh -T` with `BatchMode=yes` (never a prompt), `ControlMaster=auto`
//! and a `ControlPath` per host inside a private temporary folder, so one TCP connection and one
//! handshake per host serve every session of a run (`ControlPersist` keeps it between laps).
//! The user's own ssh configuration applies unless the inventory names a config file (`-F`).
//! Remote commands run inside the wrapper of [`crate::wrap`], so they die with their session.

use crate::inventory::Host;
use crate::wrap;
use crate::HostError;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long an idle master connection outlives its last session (also after a crash).
const CONTROL_PERSIST_S: u32 = 30;
/// How many stderr lines of a session are kept for error messages.
const STDERR_LINES: usize = 20;
const POLL: Duration = Duration::from_millis(10);

/// The ssh client, with one control socket per host.
#[derive(Debug)]
pub struct Transport {
    dir: tempfile::TempDir,
    used: Mutex<Vec<Host>>,
}

impl Transport {
    /// A transport whose control sockets live in a new private temporary folder.
    pub fn new() -> std::io::Result<Transport> {
        Ok(Transport {
            dir: tempfile::Builder::new().prefix("sb-ssh-").tempdir()?,
            used: Mutex::new(Vec::new()),
        })
    }

    fn control_path(&self, host: &Host) -> PathBuf {
        let safe: String = host.name.chars().take(24).collect();
        self.dir.path().join(safe)
    }

    /// Every ssh option for `host` (not the destination).
    fn options(&self, host: &Host) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        if let Some(cfg) = &host.ssh_config {
            args.push("-F".into());
            args.push(cfg.into());
        }
        // ssh keeps the first value it gets for an option: the inventory's come first.
        for o in &host.ssh_options {
            args.push("-o".into());
            args.push(o.into());
        }
        let cp = self.control_path(host);
        for o in [
            "BatchMode=yes".to_string(),
            "ControlMaster=auto".into(),
            format!("ControlPath={}", cp.display()),
            format!("ControlPersist={CONTROL_PERSIST_S}"),
            "LogLevel=ERROR".into(),
        ] {
            args.push("-o".into());
            args.push(o.into());
        }
        args
    }

    /// The arguments of `ssh` running `script` on `host` (not registered as a used host: for a
    /// command run after this transport may be gone, such as a last clean-up).
    pub(crate) fn argv(&self, host: &Host, script: &str) -> Vec<OsString> {
        let mut args = self.options(host);
        args.extend(["-T".into(), (&host.ssh).into(), script.into()]);
        args
    }

    /// `ssh -T` with every option for `host` and its destination (the caller adds the command).
    fn base(&self, host: &Host) -> Command {
        let mut cmd = Command::new("ssh");
        cmd.args(self.options(host)).arg("-T").arg(&host.ssh);
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        if !used.iter().any(|h| h.name == host.name) {
            used.push(host.clone());
        }
        cmd
    }

    /// Runs the shell command `script` on `host` (no wrapper, stdin closed), capturing its
    /// output; gives up after `timeout`.
    pub fn run(&self, host: &Host, script: &str, timeout: Duration) -> Result<Output, HostError> {
        self.run_with_input(host, script, None, timeout)
    }

    /// [`Transport::run`] with `input` written to the command's stdin, then closed (`None`:
    /// stdin is closed from the start). The bytes travel inside the ssh channel, never on a
    /// command line.
    pub fn run_with_input(
        &self,
        host: &Host,
        script: &str,
        input: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Output, HostError> {
        let mut cmd = self.base(host);
        cmd.arg(script)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|source| HostError::Spawn {
            host: host.name.clone(),
            source,
        })?;
        let pid = child.id() as libc::pid_t;
        let stdin = child.stdin.take();
        let input = input.map(<[u8]>::to_vec);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            if let (Some(mut stdin), Some(bytes)) = (stdin, input) {
                // A failed write shows as the command's failure (or ssh's 255) below.
                let _ = stdin.write_all(&bytes);
            }
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(timeout) {
            Ok(Ok(out)) if out.status.code() == Some(255) => Err(HostError::Ssh {
                host: host.name.clone(),
                message: last_line(&String::from_utf8_lossy(&out.stderr))
                    .trim_start_matches("ssh: ")
                    .to_string(),
            }),
            Ok(Ok(out)) => Ok(out),
            Ok(Err(source)) => Err(HostError::Spawn {
                host: host.name.clone(),
                source,
            }),
            Err(_) => {
                // SAFETY: our own child, still unreaped (the thread waits for it).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                Err(HostError::Timeout {
                    host: host.name.clone(),
                    what: "the ssh command".into(),
                    after: timeout,
                })
            }
        }
    }

    /// Starts `argv` on `host` inside the session wrapper, in the host's checkout. Its stdout
    /// lines are sent as `(index, SessionLine)` on `lines`, then [`SessionLine::Closed`].
    pub fn spawn(
        &self,
        host: &Host,
        index: usize,
        argv: &[String],
        lines: Sender<(usize, SessionLine)>,
    ) -> Result<Session, HostError> {
        let remote = wrap::remote_command(&host.checkout.to_string_lossy(), argv);
        let mut cmd = self.base(host);
        cmd.arg(remote)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|source| HostError::Spawn {
            host: host.name.clone(),
            source,
        })?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(l) = line else { break };
                if lines.send((index, SessionLine::Text(l))).is_err() {
                    break;
                }
            }
            let _ = lines.send((index, SessionLine::Closed));
        });
        let tail = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&tail);
        let err_reader = std::thread::spawn(move || keep_tail(stderr, &keep));
        Ok(Session {
            host: host.name.clone(),
            stdin: child.stdin.take(),
            child,
            stderr: tail,
            err_reader: Some(err_reader),
            status: None,
        })
    }
}

impl Drop for Transport {
    /// Closes every master connection this transport opened (`ssh -O exit`).
    fn drop(&mut self) {
        let hosts = std::mem::take(&mut *self.used.lock().unwrap_or_else(|e| e.into_inner()));
        for host in hosts {
            if !self.control_path(&host).exists() {
                continue;
            }
            let _ = Command::new("ssh")
                .args(self.options(&host))
                .args(["-O", "exit"])
                .arg(&host.ssh)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// A line from a session's stdout, or the end of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionLine {
    /// One line, without its newline.
    Text(String),
    /// Stdout is closed: the remote command ended or the session dropped.
    Closed,
}

/// A remote command running over ssh.
#[derive(Debug)]
pub struct Session {
    /// The host's name.
    pub host: String,
    stdin: Option<ChildStdin>,
    child: Child,
    stderr: Arc<Mutex<Vec<String>>>,
    err_reader: Option<std::thread::JoinHandle<()>>,
    status: Option<ExitStatus>,
}

impl Session {
    /// Writes one line to the remote command's stdin.
    pub fn send_line(&mut self, line: &str) -> Result<(), HostError> {
        let io = |source| HostError::Io {
            host: self.host.clone(),
            source,
        };
        let stdin = self.stdin.as_mut().ok_or_else(|| {
            io(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stdin already closed",
            ))
        })?;
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(io)
    }

    /// Closes the remote command's stdin: the wrapper then stops its whole group.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The exit status if the local ssh has exited by now.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Waits up to `timeout` for the local ssh to exit.
    pub fn wait_for(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.try_status() {
                if let Some(h) = self.err_reader.take() {
                    let _ = h.join();
                }
                return Some(s);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(POLL);
        }
    }

    /// Stops the session: closes stdin (the remote group gets SIGTERM, then SIGKILL), waits up
    /// to `grace` for ssh to exit, then kills the local ssh, which drops the channel (the
    /// wrapper sees EOF all the same). Returns the exit status when ssh exited by itself.
    pub fn stop(&mut self, grace: Duration) -> Option<ExitStatus> {
        self.close_stdin();
        if let Some(s) = self.wait_for(grace) {
            return Some(s);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }

    /// The last lines the remote side wrote on stderr (ssh's own errors included).
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The error for a session that ended with `status` when it should not have.
    pub fn failure(&self, status: Option<ExitStatus>, during: &str) -> HostError {
        let tail = self.stderr_tail();
        let last = tail.last().cloned().unwrap_or_default();
        match status.and_then(|s| s.code()) {
            Some(255) => HostError::Ssh {
                host: self.host.clone(),
                message: match last.trim_start_matches("ssh: ") {
                    "" => format!("the session dropped {during}"),
                    why => format!("{why} ({during})"),
                },
            },
            Some(wrap::EXIT_NO_PROGRAM) | Some(wrap::EXIT_NO_CHECKOUT) => HostError::Missing {
                host: self.host.clone(),
                message: last.trim_start_matches("serverbench-session: ").to_string(),
            },
            _ => HostError::Exited {
                host: self.host.clone(),
                during: during.to_string(),
                status: status.map_or("killed".into(), |s| s.to_string()),
                stderr: last,
            },
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.try_status().is_none() {
            self.stop(Duration::from_secs(2));
        }
    }
}

/// Keeps the last [`STDERR_LINES`] lines of `r` in `tail`.
fn keep_tail(r: impl Read, tail: &Mutex<Vec<String>>) {
    for line in BufReader::new(r).lines() {
        let Ok(line) = line else { break };
        let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
        if t.len() == STDERR_LINES {
            t.remove(0);
        }
        t.push(line);
    }
}

/// The last non-empty line of `text`, trimmed.
pub(crate) fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}
