//! The one environment a manifest's commands run with: `sh -c CMD` in the server's folder with
//! `HOST`, `PORT`, `ECHO_PORT`, `WORKERS` and `SERVERBENCH_CACHE` set (spec/contract.md). Setup,
//! start and `version` all build their command here, so a server sees the same variables in each.

use crate::paths::{Paths, CACHE_ENV};
use crate::Server;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The contract's variables for one server process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEnv {
    /// `HOST`: the address to bind.
    pub host: String,
    /// `PORT`: the HTTP port.
    pub port: u16,
    /// `ECHO_PORT`: the TCP echo port, when the server has one.
    pub echo_port: Option<u16>,
    /// `WORKERS`: how many workers (processes, threads, domains) to use; at least 1.
    pub workers: usize,
    /// More variables, set last (they win).
    pub extra: Vec<(String, String)>,
}

impl Default for ServerEnv {
    /// What setup and `version` run with: loopback, port 8080, echo 9000, one worker.
    fn default() -> Self {
        ServerEnv {
            host: "127.0.0.1".into(),
            port: 8080,
            echo_port: Some(9000),
            workers: 1,
            extra: Vec::new(),
        }
    }
}

impl ServerEnv {
    /// `sh -c cmd` in `server`'s folder with these variables and the cache folder of `paths`;
    /// standard input is closed.
    pub fn command(&self, server: &Server, paths: &Paths, cmd: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(cmd)
            .current_dir(&server.dir)
            .stdin(Stdio::null())
            .env(CACHE_ENV, &paths.cache)
            .env("HOST", &self.host)
            .env("PORT", self.port.to_string())
            .env("WORKERS", self.workers.max(1).to_string());
        if let Some(echo) = self.echo_port {
            c.env("ECHO_PORT", echo.to_string());
        }
        c.envs(self.extra.iter().map(|(k, v)| (k, v)));
        c
    }
}

/// Runs `cmd` to completion and returns its output (stdout, else stderr, trimmed), or `None`
/// when it cannot start or is still running after `timeout` (then it is killed).
pub fn output_within(mut cmd: Command, timeout: Duration) -> Option<String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    let text = if out.stdout.iter().any(|b| !b.is_ascii_whitespace()) {
        out.stdout
    } else {
        out.stderr
    };
    Some(String::from_utf8_lossy(&text).trim().to_string())
}

/// A server's `version` command's output, run with the same environment as setup (so a version
/// command may use `SERVERBENCH_CACHE`); `None` if it fails to answer within 10 s.
pub fn version_of(server: &Server, paths: &Paths) -> Option<String> {
    let cmd = ServerEnv::default().command(server, paths, &server.manifest.commands.version);
    output_within(cmd, Duration::from_secs(10))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_outlives_its_timeout_is_killed_and_gives_nothing() {
        let mut c = Command::new("sh");
        c.args(["-c", "sleep 5"]);
        let t = Instant::now();
        assert_eq!(output_within(c, Duration::from_millis(100)), None);
        assert!(t.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn stderr_is_the_output_when_stdout_is_empty() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo v1.2 >&2"]);
        assert_eq!(
            output_within(c, Duration::from_secs(5)).as_deref(),
            Some("v1.2")
        );
    }
}
