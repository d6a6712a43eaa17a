//! The multi-host test bed: `bench/netns-hosts.sh` namespaces with their own sshd, a server in
//! `sb-server`, and checks that nothing is left behind.
//!
//! The bed needs root and `ip netns`; without them a test says why and fails, unless
//! SERVERBENCH_SKIP_NETNS=1 is set, in which case it says it skipped. Tests take a lock: they
//! share the namespaces. The namespaces are the machine's, so the lock is a file lock
//! ([`BED_LOCK`]) as well as a mutex: a `make test` and a test binary run beside it (or two
//! checkouts' tests) take turns instead of tearing each other's bed down.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};

pub const NAMESPACES: [&str; 4] = ["sb-server", "sb-client1", "sb-client2", "sb-db"];
pub const DB_ADDR: &str = "198.18.0.40";
pub const SERVER_ADDR: &str = "198.18.0.10";
pub const PORT: u16 = 8080;

static LOCK: Mutex<()> = Mutex::new(());

/// The file every process holding the bed locks (`flock`), whatever started it.
pub const BED_LOCK: &str = "/tmp/sb-netns-bed.lock";

/// An exclusive `flock` on [`BED_LOCK`], released when dropped (the file is closed).
pub struct FileLock(std::fs::File);

fn file_lock() -> FileLock {
    use std::os::fd::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(BED_LOCK)
        .unwrap_or_else(|e| panic!("{BED_LOCK}: {e}"));
    // SAFETY: flock on a descriptor we own; it blocks until the other holder closes its file.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
    assert_eq!(
        rc,
        0,
        "flock {BED_LOCK}: {}",
        std::io::Error::last_os_error()
    );
    FileLock(file)
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn script() -> PathBuf {
    root().join("bench/netns-hosts.sh")
}

/// The four hosts, up; down again when dropped.
pub struct Bed {
    pub hosts: PathBuf,
    _lock: MutexGuard<'static, ()>,
    _file_lock: FileLock,
}

/// The bed, or None (with the reason printed) when this machine cannot have one.
pub fn bed() -> Option<Bed> {
    if std::env::var("SERVERBENCH_SKIP_NETNS").as_deref() == Ok("1") {
        crate::skip::say_skipped("SERVERBENCH_SKIP_NETNS=1");
        return None;
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let netns = Command::new("ip").args(["netns", "list"]).output();
    let why = if !root {
        "the network-namespace hosts need root"
    } else if !netns.is_ok_and(|o| o.status.success()) {
        "`ip netns` does not work here (install iproute2)"
    } else {
        ""
    };
    assert!(
        why.is_empty(),
        "hosts_netns: {why}; set SERVERBENCH_SKIP_NETNS=1 to skip these tests"
    );
    let lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let file_lock = file_lock();
    let out = Command::new(script()).arg("up").output().unwrap();
    assert!(
        out.status.success(),
        "netns-hosts.sh up failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let hosts = PathBuf::from(stdout.lines().last().expect("the hosts.toml path").trim());
    assert!(hosts.is_file(), "{}", hosts.display());
    Some(Bed {
        hosts,
        _lock: lock,
        _file_lock: file_lock,
    })
}

impl Bed {
    /// `bench/netns-hosts.sh ARGS` (must succeed).
    pub fn script(&self, args: &[&str]) {
        let out = Command::new(script()).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "netns-hosts.sh {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Whether `tc netem` can be used: false (said) when SERVERBENCH_SKIP_NETEM=1; a failure
    /// when the kernel lacks the netem qdisc (CONFIG_NET_SCH_NETEM) and that switch is unset.
    pub fn netem(&self) -> bool {
        if std::env::var("SERVERBENCH_SKIP_NETEM").as_deref() == Ok("1") {
            crate::skip::say_skipped("the netem case, SERVERBENCH_SKIP_NETEM=1");
            return false;
        }
        let out = Command::new(script())
            .args(["delay", "sb-server", "1"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "hosts_netns: {}; set SERVERBENCH_SKIP_NETEM=1 to skip the netem case",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        self.script(&["delay", "sb-server", "0"]);
        true
    }

    /// Starts `serverbench serve python/hello` in sb-server, bound to its address.
    pub fn start_server(&self, cache: &Path) -> Server {
        let fixture = root().join("crates/hosts/tests/fixtures/catalog");
        self.serve(cache, &fixture, "python/hello", &[])
    }

    /// Starts `serverbench serve SERVER` of `catalog` in sb-server, bound to its address on
    /// [`PORT`], with `extra` flags.
    pub fn serve(&self, cache: &Path, catalog: &Path, server: &str, extra: &[&str]) -> Server {
        let mut child = Command::new("ip")
            .args([
                "netns",
                "exec",
                "sb-server",
                env!("CARGO_BIN_EXE_serverbench"),
            ])
            .args(["serve", server, "--host", SERVER_ADDR])
            .args(["--port", &PORT.to_string(), "--root"])
            .arg(catalog)
            .args(extra)
            .env("SERVERBENCH_CACHE", cache)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        for line in lines.by_ref() {
            if line.unwrap().contains("is ready") {
                // serve streams its server's log: keep reading so that it never meets EPIPE.
                std::thread::spawn(move || lines.for_each(drop));
                return Server { child };
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("{server} in sb-server did not start");
    }

    /// `serverbench ARGS` from this (the controller's) namespace.
    pub fn serverbench(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_serverbench"))
            .args(args)
            .output()
            .unwrap()
    }

    /// Every process left in `namespaces` except their sshd, and every ssh client of ours.
    pub fn leftovers(&self, namespaces: &[&str]) -> Vec<String> {
        let mut left = Vec::new();
        for &ns in namespaces {
            let out = Command::new("ip")
                .args(["netns", "pids", ns])
                .output()
                .unwrap();
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                if !comm.is_empty() && comm.trim() != "sshd" {
                    left.push(format!("{ns}: {pid} {}", comm.trim()));
                }
            }
        }
        for e in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.starts_with("ssh ") && cmdline.contains("/sb-ssh-") {
                left.push(format!("controller: {cmdline}"));
            }
        }
        left
    }

    /// Waits up to 3 s for the namespaces to hold nothing but sshd.
    pub fn assert_nothing_left(&self) {
        self.assert_clean(&NAMESPACES);
    }

    /// Waits up to 3 s for the client namespaces to hold nothing but sshd (the server may run).
    pub fn assert_clients_clean(&self) {
        self.assert_clean(&NAMESPACES[1..]);
    }

    fn assert_clean(&self, namespaces: &[&str]) {
        let mut left = self.leftovers(namespaces);
        for _ in 0..30 {
            if left.is_empty() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            left = self.leftovers(namespaces);
        }
        panic!("left behind: {left:#?}");
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        let _ = Command::new(script()).arg("down").output();
    }
}

/// The server started in sb-server; stopped (SIGTERM, its group with it) when dropped.
pub struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: signalling our own child (`ip netns exec` exec'd serverbench serve).
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// Bytes sent by this namespace into `host`'s veth so far.
pub fn bytes_into(host: &str) -> u64 {
    let veth = format!("sbv-{}", host.trim_start_matches("sb-"));
    std::fs::read_to_string(format!("/sys/class/net/{veth}/statistics/tx_bytes"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The run folders (`serverbench-run.*`) in `/tmp`, where the hosts' sessions (no `TMPDIR`
/// over ssh) make them; the namespaces share this machine's file system.
pub fn run_folders() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/tmp")
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("serverbench-run."))
        .collect();
    v.sort();
    v
}

/// The command lines of the processes in `ns` (arguments separated by spaces).
pub fn command_lines_in(ns: &str) -> Vec<String> {
    processes_in(ns).into_iter().map(|(_, cmd)| cmd).collect()
}

/// The processes in `ns`: each PID and its command line (arguments separated by spaces).
pub fn processes_in(ns: &str) -> Vec<(u32, String)> {
    let out = Command::new("ip")
        .args(["netns", "pids", ns])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            Some((
                pid.parse().ok()?,
                String::from_utf8_lossy(&cmd).replace('\0', " "),
            ))
        })
        .collect()
}
