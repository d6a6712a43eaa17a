//! The distributed session: one load split across client hosts (each its share of the
//! connections and of the rate), released together and merged exactly (serverbench-hosts).
//! `serverbench load --hosts` (and its `--find-max`, step by step) and `run --hosts` (each lap,
//! and each step of a `find_max` lap) all run their loads through [`ClientHosts::load`].

use serverbench_hosts::distributed::{self, Deadlines, Distributed, Failure, Progress};
use serverbench_hosts::{Host, HostError, RemoteDir, Transport};
use serverbench_model::LoadSpec;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The client hosts a load is split across.
#[derive(Clone, Copy)]
pub struct ClientHosts<'a> {
    /// The ssh transport (one control socket per host).
    pub transport: &'a Transport,
    /// The hosts, in `--client-hosts` order.
    pub hosts: &'a [Host],
    /// Over TLS, each host's own copy of the CA certificate to trust (in the order of `hosts`;
    /// empty: the spec's own).
    pub cacerts: &'a [PathBuf],
    /// How long they may take to connect (plus the warm-up) before the load is called off.
    pub connect: Duration,
}

/// A load from the client hosts: the merge, or the faults with what completed.
pub struct HostsLoad {
    /// The merged result and each host's, or the failure.
    pub outcome: Result<Distributed, Failure>,
    /// CPU seconds this process and its (ssh) children used.
    pub controller_cpu_s: f64,
}

impl ClientHosts<'_> {
    /// Runs `spec` split across the hosts, released together, merged exactly; `progress` is
    /// told when each host is ready, when they are released and when each is done.
    pub fn load(
        &self,
        spec: &LoadSpec,
        progress: &dyn Fn(Progress),
        cancel: &AtomicBool,
    ) -> HostsLoad {
        let jobs = distributed::jobs(spec, self.hosts, self.cacerts);
        let deadlines = Deadlines::of(spec, self.connect);
        let cpu0 = controller_cpu_s();
        let outcome = distributed::run(self.transport, &jobs, deadlines, progress, cancel);
        HostsLoad {
            outcome,
            controller_cpu_s: controller_cpu_s() - cpu0,
        }
    }
}

/// Why a distributed load did not complete, one line per cause: each fault, then each host
/// that completed without being merged.
pub fn failure_lines(f: &Failure) -> Vec<String> {
    if f.cancelled {
        return vec!["interrupted; every client host was stopped".into()];
    }
    let mut lines: Vec<String> = f.faults.iter().map(|e| e.to_string()).collect();
    for h in &f.completed {
        lines.push(format!(
            "{}: completed {} requests ({:.1}/s), not merged",
            h.host, h.result.requests, h.result.rps
        ));
    }
    lines
}

/// `spec` as the client hosts take it: `--body-file` read here (it must be UTF-8 to travel).
pub fn with_body(spec: &LoadSpec) -> Result<LoadSpec, SessionError> {
    let mut spec = spec.clone();
    if let (None, Some(path)) = (&spec.work.body, spec.http.body_file.take()) {
        let bytes = std::fs::read(&path).map_err(|why| SessionError::ReadBody {
            path: path.clone(),
            why,
        })?;
        let text = String::from_utf8(bytes).map_err(|_| SessionError::BodyNotText { path })?;
        spec.work.body = Some(text);
    }
    Ok(spec)
}

/// Why a session could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("--body-file {}: {why}", path.display())]
    ReadBody { path: PathBuf, why: std::io::Error },
    #[error("--body-file {}: with --hosts the body must be UTF-8 text", path.display())]
    BodyNotText { path: PathBuf },
    #[error("--cacert {}: {why}", path.display())]
    ReadCacert { path: PathBuf, why: std::io::Error },
    #[error("copying --cacert {} to the client hosts: {why}", path.display())]
    CopyCacert { path: PathBuf, why: HostError },
}

/// The client hosts of `serverbench load --hosts`, with `--cacert` copied to each: ready for one
/// load, or for each step of a capacity search.
pub struct Session {
    // Dropped first: the copies are removed before the transport's connections close.
    dirs: Vec<RemoteDir>,
    cacerts: Vec<PathBuf>,
    transport: Transport,
    hosts: Vec<Host>,
    connect: Duration,
}

impl Session {
    /// A session over `hosts` (probed by the caller), which may take `connect` to connect.
    pub fn new(transport: Transport, hosts: Vec<Host>, connect: Duration) -> Session {
        Session {
            dirs: Vec::new(),
            cacerts: Vec::new(),
            transport,
            hosts,
            connect,
        }
    }

    /// Copies `file` (`--cacert`) to each host, in a folder of the session's own removed when it
    /// drops: each host trusts its own copy.
    pub fn copy_cacert(&mut self, file: &Path) -> Result<(), SessionError> {
        let pem = std::fs::read(file).map_err(|why| SessionError::ReadCacert {
            path: file.to_path_buf(),
            why,
        })?;
        for host in &self.hosts {
            let copy = RemoteDir::create(&self.transport, host).and_then(|dir| {
                let path = dir.put(&self.transport, "ca.pem", &pem)?;
                Ok((dir, path))
            });
            let (dir, path) = copy.map_err(|why| SessionError::CopyCacert {
                path: file.to_path_buf(),
                why,
            })?;
            self.dirs.push(dir);
            self.cacerts.push(PathBuf::from(path));
        }
        Ok(())
    }

    /// The hosts, in `--client-hosts` order.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The hosts a load is split across.
    pub fn clients(&self) -> ClientHosts<'_> {
        ClientHosts {
            transport: &self.transport,
            hosts: &self.hosts,
            cacerts: &self.cacerts,
            connect: self.connect,
        }
    }
}

/// User + system CPU seconds of this process and its reaped children.
fn controller_cpu_s() -> f64 {
    let of = |who| {
        // SAFETY: rusage is plain data, filled by getrusage.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: a valid `who` and out-pointer.
        unsafe { libc::getrusage(who, &mut u) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        tv(u.ru_utime) + tv(u.ru_stime)
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cacert_that_cannot_be_read_is_named_before_any_host_is_touched() {
        let transport = Transport::new().unwrap();
        let mut session = Session::new(transport, Vec::new(), Duration::from_secs(1));
        let err = session
            .copy_cacert(Path::new("/nonexistent/ca.pem"))
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--cacert /nonexistent/ca.pem: "),
            "{err}"
        );
    }

    #[test]
    fn an_interrupted_load_says_so_and_a_failed_one_names_each_fault() {
        let cancelled = Failure {
            faults: Vec::new(),
            completed: Vec::new(),
            cancelled: true,
        };
        assert_eq!(
            failure_lines(&cancelled),
            ["interrupted; every client host was stopped"]
        );
        let failed = Failure {
            faults: vec![HostError::Ssh {
                host: "load1".into(),
                message: "unreachable".into(),
            }],
            completed: Vec::new(),
            cancelled: false,
        };
        let lines = failure_lines(&failed);
        assert!(lines[0].starts_with("load1"), "{lines:?}");
    }
}
