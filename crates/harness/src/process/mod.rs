//! Starting a catalog server in its own process group, pinned to CPUs, waiting until its ports
//! accept connections, and stopping the whole group (SIGTERM, 5 s, SIGKILL). Every live group is
//! registered so that [`stop_all_registered`] can clean up on Ctrl-C.

use crate::catalog::Server;
use crate::paths::Paths;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serverbench_catalog::command::ServerEnv;
use serverbench_catalog::logs::log_tail;
use serverbench_machine::affinity;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod h3;
mod interrupt;
pub mod listeners;
pub use h3::{free_udp_port, tls_listener};
pub use interrupt::{install_interrupt, OnInterrupt, Stage, INTERRUPTED};

/// How long [`ServerProcess::stop`] waits after SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(25);
/// How long to wait for a group to disappear after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(1);

/// How to start a server.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// `HOST`.
    pub host: String,
    /// `PORT` (HTTP).
    pub port: u16,
    /// `ECHO_PORT`, exported and waited for when set and the server implements `echo`.
    pub echo_port: Option<u16>,
    /// `WORKERS`.
    pub workers: usize,
    /// CPUs to pin the group to; empty = no pinning.
    pub cpus: Vec<usize>,
    /// stdout and stderr go here (created, truncated).
    pub log_path: PathBuf,
    /// How long to wait for the ports.
    pub ready_timeout: Duration,
    /// More environment variables.
    pub extra_env: Vec<(String, String)>,
    /// `TLS_PORT`, `TLS_CERT` and `TLS_KEY`, exported and waited for when set and the server
    /// implements `tls` or `h2`; with `H3_PORT` when it implements `h3`.
    pub tls: Option<TlsListener>,
}

/// Where a server serves TLS, and with which certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsListener {
    /// `TLS_PORT`.
    pub port: u16,
    /// `H3_PORT`: the UDP port of HTTP/3 (QUIC) with the same certificate, exported when the
    /// server implements `h3` (see [`tls_listener`], which picks it).
    pub h3_port: Option<u16>,
    /// The certificate and key files.
    pub files: crate::certs::TlsFiles,
}

/// True when `server` listens on `TLS_PORT`.
pub fn serves_tls(server: &Server) -> bool {
    use serverbench_model::Feature;
    server.implements(Feature::Tls) || server.implements(Feature::H2)
}

impl StartOptions {
    /// Defaults for a server: 127.0.0.1, the given ports, 1 worker, no pinning, the manifest's
    /// ready timeout.
    pub fn new(server: &Server, port: u16, echo_port: Option<u16>, log_path: PathBuf) -> Self {
        StartOptions {
            host: "127.0.0.1".into(),
            port,
            echo_port,
            workers: 1,
            cpus: Vec::new(),
            log_path,
            ready_timeout: Duration::from_secs(server.manifest.ready_timeout_s),
            extra_env: Vec::new(),
            tls: None,
        }
    }
}

/// Errors while starting a server.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The log file could not be created.
    #[error("{server}: cannot create the log {}: {source}", path.display())]
    Log {
        /// Server id.
        server: String,
        /// The log file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The tree of the `static` feature could not be written.
    #[error("{server}: cannot write the static tree {}: {source}", path.display())]
    StaticTree {
        /// Server id.
        server: String,
        /// The tree's folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// `sh` could not be spawned.
    #[error("{server}: cannot start `{command}`: {source}")]
    Spawn {
        /// Server id.
        server: String,
        /// The run command.
        command: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The server exited before its ports accepted connections.
    #[error("{server} exited during start-up ({status}); last log lines:\n{log_tail}")]
    Exited {
        /// Server id.
        server: String,
        /// Its exit status.
        status: ExitStatus,
        /// The last 20 lines of its log.
        log_tail: String,
    },
    /// The ports did not accept connections in time.
    #[error("{server} not ready after {waited:?} (waiting for {waiting_for}); last log lines:\n{log_tail}")]
    Timeout {
        /// Server id.
        server: String,
        /// How long we waited.
        waited: Duration,
        /// The addresses not yet accepting.
        waiting_for: String,
        /// The last 20 lines of its log.
        log_tail: String,
    },
    /// Another process already listens on one of the server's ports.
    #[error(
        "{server}: port {port} is already in use by {owners}: stop it or pick another port \
         (the load would measure that process, not {server})"
    )]
    PortBusy {
        /// Catalog id.
        server: String,
        /// The port.
        port: u16,
        /// Who holds it, as `pid (command)`.
        owners: String,
    },
    /// HOST/port do not form an address.
    #[error("{server}: bad address {addr}: {source}")]
    Address {
        /// Server id.
        server: String,
        /// The host:port.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// A running server: the leader of its own process group.
#[derive(Debug)]
pub struct ServerProcess {
    server_id: String,
    child: Child,
    pgid: u32,
    log_path: PathBuf,
    status: Option<ExitStatus>,
    stopped: bool,
}

static REGISTRY: Mutex<Vec<u32>> = Mutex::new(Vec::new());

pub(crate) fn register(pgid: u32) {
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(pgid);
}

pub(crate) fn unregister(pgid: u32) {
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&g| g != pgid);
}

/// Starts `server` per `opts` and waits until every port it serves accepts a TCP connection.
pub fn start(
    server: &Server,
    paths: &Paths,
    opts: &StartOptions,
) -> Result<ServerProcess, ProcessError> {
    let log = open_log(&server.id, &opts.log_path)?;
    let log_err = log.try_clone().map_err(|source| ProcessError::Log {
        server: server.id.clone(),
        path: opts.log_path.clone(),
        source,
    })?;
    check_ports_free(server, opts)?;
    let run = server.manifest.commands.run.clone();
    let mut extra = opts.extra_env.clone();
    if let (Some(t), true) = (&opts.tls, serves_tls(server)) {
        extra.push(("TLS_PORT".into(), t.port.to_string()));
        extra.push(("TLS_CERT".into(), t.files.cert.display().to_string()));
        extra.push(("TLS_KEY".into(), t.files.key.display().to_string()));
        if let (Some(h3), true) = (t.h3_port, server.implements(serverbench_model::Feature::H3)) {
            extra.push(("H3_PORT".into(), h3.to_string()));
        }
    }
    if server.implements(serverbench_model::Feature::Static) {
        extra.push(("STATIC_DIR".into(), static_dir(server, paths)?));
    }
    let env = ServerEnv {
        host: opts.host.clone(),
        port: opts.port,
        echo_port: opts.echo_port,
        workers: opts.workers,
        extra,
    };
    let mut cmd = env.command(server, paths, &run);
    cmd.stdout(log).stderr(log_err);
    let child =
        spawn_new_group_pinned(&mut cmd, &opts.cpus).map_err(|source| ProcessError::Spawn {
            server: server.id.clone(),
            command: run.clone(),
            source,
        })?;
    let pgid = child.id();
    register(pgid);
    let mut proc = ServerProcess {
        server_id: server.id.clone(),
        child,
        pgid,
        log_path: opts.log_path.clone(),
        status: None,
        stopped: false,
    };
    let addrs = ready_addrs(server, opts)?;
    proc.wait_ready(&addrs, h3::h3_port(server, opts), opts.ready_timeout)?;
    Ok(proc)
}

/// `STATIC_DIR`: the tree of the `static` feature, written once into the cache
/// (`<cache>/static/v<N>/www`, [`serverbench_contract::static_tree`]).
fn static_dir(server: &Server, paths: &Paths) -> Result<String, ProcessError> {
    let root = serverbench_contract::static_tree::root_under(&paths.cache);
    serverbench_contract::static_tree::ensure(&root)
        .map(|www| www.display().to_string())
        .map_err(|source| ProcessError::StaticTree {
            server: server.id.clone(),
            path: root,
            source,
        })
}

/// A port already listened on by some process is an error before the server starts (the UDP
/// `H3_PORT` too: a socket bound there would take the server's datagrams).
fn check_ports_free(server: &Server, opts: &StartOptions) -> Result<(), ProcessError> {
    h3::check_udp_free(server, opts)?;
    for addr in ready_addrs(server, opts)? {
        let owners = listeners::owners(addr.port());
        if !owners.is_empty() {
            return Err(ProcessError::PortBusy {
                server: server.id.clone(),
                port: addr.port(),
                owners: owners.join(", "),
            });
        }
    }
    Ok(())
}

/// The addresses the server should accept connections on.
fn ready_addrs(server: &Server, opts: &StartOptions) -> Result<Vec<SocketAddr>, ProcessError> {
    let mut ports = Vec::new();
    if server.serves_http() {
        ports.push(opts.port);
    }
    if let (true, Some(p)) = (
        server.implements(serverbench_model::Feature::Echo),
        opts.echo_port,
    ) {
        ports.push(p);
    }
    if let (true, Some(t)) = (serves_tls(server), &opts.tls) {
        ports.push(t.port);
    }
    ports
        .into_iter()
        .map(|p| {
            resolve(&opts.host, p).map_err(|source| ProcessError::Address {
                server: server.id.clone(),
                addr: format!("{}:{p}", opts.host),
                source,
            })
        })
        .collect()
}

/// Resolves `host` (an IP literal or a name) and `port` to one socket address.
pub fn resolve(host: &str, port: u16) -> std::io::Result<SocketAddr> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (host, port).to_socket_addrs()?.next().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{host} resolves to nothing"),
        )
    })
}

fn open_log(server: &str, path: &Path) -> Result<std::fs::File, ProcessError> {
    let err = |source| ProcessError::Log {
        server: server.to_string(),
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(err)?;
    }
    std::fs::File::create(path).map_err(err)
}

/// Spawns `cmd` as the leader of a new process group, pinned to `cpus` (none = no pinning).
pub fn spawn_new_group_pinned(cmd: &mut Command, cpus: &[usize]) -> std::io::Result<Child> {
    cmd.process_group(0);
    spawn_pinned(cmd, cpus)
}

/// Spawns `cmd` pinned, with its children, to `cpus` (none = no pinning).
///
/// A process inherits the affinity of the thread that forks it, so the spawn happens on a
/// short-lived thread pinned first: no code runs between fork and exec (no `pre_exec`).
pub fn spawn_pinned(cmd: &mut Command, cpus: &[usize]) -> std::io::Result<Child> {
    if cpus.is_empty() {
        return cmd.spawn();
    }
    std::thread::scope(|scope| {
        let spawner = scope.spawn(|| {
            affinity::pin_current_thread_to(cpus)?;
            cmd.spawn()
        });
        spawner
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

impl ServerProcess {
    /// The leader's pid (`sh`, or the server itself when `run` starts with `exec`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The process group id (equal to the leader's pid).
    pub fn pgid(&self) -> u32 {
        self.pgid
    }

    /// The server id.
    pub fn server_id(&self) -> &str {
        &self.server_id
    }

    /// The log file.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The leader's exit status if it has exited (non-blocking).
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// The last `lines` lines of the log.
    pub fn log_tail(&self, lines: usize) -> String {
        log_tail(&self.log_path, lines)
    }

    /// SIGTERM to the group, wait up to 5 s for the whole group to exit, then SIGKILL it.
    /// Returns the leader's exit status. Idempotent.
    pub fn stop(&mut self) -> Option<ExitStatus> {
        if !self.stopped {
            self.stopped = true;
            signal_group(self.pgid, Signal::SIGTERM);
            let deadline = Instant::now() + STOP_GRACE;
            while Instant::now() < deadline {
                self.try_exit();
                if self.status.is_some() && !group_alive(self.pgid) {
                    break;
                }
                std::thread::sleep(POLL);
            }
            if group_alive(self.pgid) || self.try_exit().is_none() {
                signal_group(self.pgid, Signal::SIGKILL);
            }
            self.status = self.child.wait().ok().or(self.status);
            wait_group_gone(self.pgid, KILL_WAIT);
            unregister(self.pgid);
        }
        self.status
    }

    /// Waits until every TCP address accepts a connection on a listener of the group and, with
    /// `udp`, the group holds a UDP socket bound to that port (HTTP/3's `H3_PORT`).
    fn wait_ready(
        &mut self,
        addrs: &[SocketAddr],
        udp: Option<u16>,
        timeout: Duration,
    ) -> Result<(), ProcessError> {
        let start = Instant::now();
        let mut pending: Vec<SocketAddr> = addrs.to_vec();
        let mut udp_pending = udp;
        loop {
            let members = group_members(self.pgid);
            pending.retain(|a| {
                TcpStream::connect_timeout(a, Duration::from_millis(200)).is_err()
                    || !listeners::listens(&members, a.port())
            });
            udp_pending = udp_pending.filter(|&p| !listeners::binds_udp(&members, p));
            if pending.is_empty() && udp_pending.is_none() {
                return Ok(());
            }
            if let Some(status) = self.try_exit() {
                self.stop();
                return Err(ProcessError::Exited {
                    server: self.server_id.clone(),
                    status,
                    log_tail: self.log_tail(20),
                });
            }
            if start.elapsed() >= timeout {
                self.stop();
                let mut waiting: Vec<String> = pending.iter().map(ToString::to_string).collect();
                waiting.extend(udp_pending.map(|p| format!("UDP port {p} (H3_PORT)")));
                return Err(ProcessError::Timeout {
                    server: self.server_id.clone(),
                    waited: start.elapsed(),
                    waiting_for: waiting.join(", "),
                    log_tail: self.log_tail(20),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Sends `sig` to process group `pgid` (never to group 0 or 1: ourselves or init's).
pub(crate) fn signal_group(pgid: u32, sig: Signal) {
    if pgid > 1 {
        let _ = killpg(Pid::from_raw(pgid as i32), sig);
    }
}

/// True while a process (not a zombie) of group `pgid` exists, per /proc.
pub fn group_alive(pgid: u32) -> bool {
    !group_members(pgid).is_empty()
}

/// Pids of live (non-zombie) processes whose process group is `pgid`, per /proc.
pub fn group_members(pgid: u32) -> Vec<u32> {
    serverbench_machine::process::pids()
        .into_iter()
        .filter(|&pid| {
            serverbench_machine::process::stat(pid)
                .is_some_and(|st| st.is_live() && st.pgrp == pgid)
        })
        .collect()
}

fn wait_group_gone(pgid: u32, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while group_alive(pgid) && Instant::now() < deadline {
        std::thread::sleep(POLL);
    }
}

/// Stops every group started by [`start`] and not yet stopped: SIGTERM to all, wait up to 5 s,
/// SIGKILL the rest. For Ctrl-C handlers.
pub fn stop_all_registered() {
    let groups: Vec<u32> = std::mem::take(&mut *REGISTRY.lock().unwrap_or_else(|e| e.into_inner()));
    for &g in &groups {
        signal_group(g, Signal::SIGTERM);
    }
    let deadline = Instant::now() + STOP_GRACE;
    while groups.iter().any(|&g| group_alive(g)) && Instant::now() < deadline {
        std::thread::sleep(POLL);
    }
    for &g in &groups {
        if group_alive(g) {
            signal_group(g, Signal::SIGKILL);
            wait_group_gone(g, KILL_WAIT); // a killed process lingers for a moment
        }
    }
}

/// A TCP port that was free on `host` a moment ago (bind to port 0 and release it).
pub fn free_port(host: &str) -> std::io::Result<u16> {
    let addr = resolve(host, 0)?;
    Ok(TcpListener::bind(addr)?.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_port_is_bindable() {
        let port = free_port("127.0.0.1").unwrap();
        assert!(TcpListener::bind(("127.0.0.1", port)).is_ok());
    }

    #[test]
    fn ipv6_literals_resolve_with_or_without_brackets() {
        assert!(resolve("::1", 80).unwrap().is_ipv6());
        assert!(resolve("[::1]", 80).unwrap().is_ipv6());
    }

    #[test]
    fn a_pinned_child_runs_on_its_cpu_in_its_own_group_and_we_stay_unpinned() {
        let before = affinity::affinity_cpus();
        let cpu = *before.last().unwrap();
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "grep Cpus_allowed_list /proc/self/status; cut -d' ' -f5 /proc/$$/stat",
        ])
        .stdout(std::process::Stdio::piped());
        let child = spawn_new_group_pinned(&mut cmd, &[cpu]).unwrap();
        let pid = child.id();
        let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
        assert!(
            out.starts_with(&format!("Cpus_allowed_list:\t{cpu}\n")),
            "{out}"
        );
        assert_eq!(
            out.lines().nth(1).map(str::trim),
            Some(pid.to_string().as_str())
        );
        assert_eq!(affinity::affinity_cpus(), before);
    }

    #[test]
    fn our_own_group_is_alive() {
        assert!(group_alive(nix::unistd::getpgrp().as_raw() as u32));
    }
}
