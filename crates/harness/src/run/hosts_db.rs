//! The database of `run --hosts`: `serverbench db run` on the database host (`--db-host`, by
//! default the server host), over the run's ssh connections. It listens on that host's address
//! and its private socket only, lets the role log in with its SCRAM password from the server
//! host's address only (never `trust`), and reads `pg_stat_statements` there on request, so the
//! controller needs no TCP access to it. Its session stops it when the run ends, returns on
//! Ctrl-C, or dies (the session's end signals its whole process group, the postmaster included).

use super::HostsRun;
use crate::run::errors::HostsError;
use serverbench_database::{DbUrl, Snapshot};
use serverbench_hosts::{DbReady, Host, Session, SessionLine};
use serverbench_hosts::{DB_READY_PREFIX, DB_SNAPSHOT, DB_SNAPSHOT_FAILED, DB_SNAPSHOT_PREFIX};
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

/// How long `db run` may take to be ready (an install of PostgreSQL and an initdb included).
const READY_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a snapshot may take.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the session may take to stop (a fast shutdown, then the wrapper's SIGKILL).
const STOP_GRACE: Duration = Duration::from_secs(12);

/// What the database is asked to be on its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteDbSpec {
    /// Its TCP port.
    pub port: u16,
    /// Its CPUs there (empty: not pinned).
    pub cpus: Vec<usize>,
    /// `max_connections`.
    pub max_connections: u32,
}

/// A cluster running on the database host.
pub struct RemoteDb {
    session: Session,
    rx: Receiver<(usize, SessionLine)>,
    /// What `db run` announced.
    pub ready: DbReady,
    /// Where the server reaches it (the database host's address).
    pub url: DbUrl,
}

impl std::fmt::Debug for RemoteDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteDb")
            .field("host", &self.session.host)
            .field("pid", &self.ready.pid)
            .finish()
    }
}

/// `serverbench db run` on the database host, for `spec`, reachable from the server host.
pub(crate) fn db_run_argv(h: &HostsRun, spec: &RemoteDbSpec) -> Result<Vec<String>, HostsError> {
    let db = &h.database;
    let mut argv = vec![db.binary.to_string_lossy().into_owned(), "db".into()];
    argv.extend(["run".into(), "--db-port".into(), spec.port.to_string()]);
    argv.extend(["--db-host".into(), ip_of(db)?.to_string()]);
    argv.extend(["--db-allow".into(), ip_of(&h.server)?.to_string()]);
    argv.extend(["--max-connections".into(), spec.max_connections.to_string()]);
    argv.extend(["--root".into(), h.root_on_database.to_string_lossy().into()]);
    if !spec.cpus.is_empty() {
        let list: Vec<String> = spec.cpus.iter().map(usize::to_string).collect();
        argv.extend(["--db-cpus".into(), list.join(",")]);
    }
    Ok(argv)
}

/// The IP address of a host's inventory `address` (resolved here when it is a name).
fn ip_of(host: &Host) -> Result<IpAddr, HostsError> {
    if let Ok(ip) = host.address.parse() {
        return Ok(ip);
    }
    let resolved = (host.address.as_str(), 0).to_socket_addrs();
    let first = resolved.map(|mut a| a.next().map(|a| a.ip()));
    match first {
        Ok(Some(ip)) => Ok(ip),
        Ok(None) => Err(address_error(host, "it resolves to no address".into())),
        Err(e) => Err(address_error(host, e.to_string())),
    }
}

fn address_error(host: &Host, why: String) -> HostsError {
    HostsError::Address {
        host: host.name.clone(),
        address: host.address.clone(),
        why,
    }
}

impl RemoteDb {
    /// Starts the cluster on the database host and waits until it accepts connections.
    pub fn start(h: &HostsRun, spec: &RemoteDbSpec) -> Result<RemoteDb, HostsError> {
        let argv = db_run_argv(h, spec)?;
        let (tx, rx) = mpsc::channel();
        let mut session = h.transport.spawn(&h.database, 0, &argv, tx)?;
        let said = |what: &str| HostsError::DbSaid {
            host: h.database.name.clone(),
            what: what.to_owned(),
        };
        let line = loop {
            match rx.recv_timeout(READY_TIMEOUT) {
                Ok((_, SessionLine::Text(l))) if l.starts_with(DB_READY_PREFIX) => break l,
                Ok((_, SessionLine::Text(_))) => continue,
                Ok((_, SessionLine::Closed)) => {
                    let status = session.wait_for(STOP_GRACE);
                    return Err(session
                        .failure(status, "while starting the database")
                        .into());
                }
                Err(_) => {
                    session.stop(STOP_GRACE);
                    return Err(HostsError::DbNotReady {
                        host: h.database.name.clone(),
                        after: READY_TIMEOUT,
                    });
                }
            }
        };
        let json = &line[DB_READY_PREFIX.len()..];
        let ready: DbReady = serde_json::from_str(json).map_err(|_| said("ready line"))?;
        let url = DbUrl::parse(&ready.url).map_err(|_| said("URL in its ready line"))?;
        Ok(RemoteDb {
            session,
            rx,
            ready,
            url,
        })
    }

    /// The statements so far, read on the database host (`None` when they cannot be read).
    pub fn snapshot(&mut self) -> Option<Snapshot> {
        self.session.send_line(DB_SNAPSHOT).ok()?;
        loop {
            match self.rx.recv_timeout(SNAPSHOT_TIMEOUT).ok()? {
                (_, SessionLine::Text(l)) => {
                    if let Some(json) = l.strip_prefix(DB_SNAPSHOT_PREFIX) {
                        return serde_json::from_str(json).ok();
                    }
                    if l.starts_with(DB_SNAPSHOT_FAILED) {
                        return None;
                    }
                }
                (_, SessionLine::Closed) => return None,
            }
        }
    }

    /// How it ended, if it has (the postmaster, `db run`, or the ssh session).
    pub fn exited(&mut self) -> Option<String> {
        self.session.try_status()?;
        let status = self.session.wait_for(STOP_GRACE);
        Some(self.session.failure(status, "during the lap").to_string())
    }

    /// Stops it: the session's stdin closes, `db run` stops the cluster (a fast shutdown).
    pub fn stop(&mut self) {
        self.session.stop(STOP_GRACE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::env::HostsEnv;
    use serverbench_hosts::Transport;

    fn host(name: &str, address: &str) -> Host {
        Host {
            name: name.into(),
            ssh: name.into(),
            address: address.into(),
            checkout: "/srv/sb".into(),
            binary: "/srv/sb/target/release/serverbench".into(),
            cpus: vec![],
            ssh_config: None,
            ssh_options: vec![],
        }
    }

    #[test]
    fn the_database_host_listens_on_its_address_and_admits_the_server_host_only() {
        let h = HostsRun {
            transport: Transport::new().unwrap(),
            server: host("app", "198.18.0.10"),
            clients: vec![host("load", "198.18.0.11")],
            root_there: "/srv/sb".into(),
            database: host("pg", "198.18.0.40"),
            root_on_database: "/srv/sb".into(),
            env: HostsEnv::default(),
        };
        let spec = RemoteDbSpec {
            port: 5544,
            cpus: vec![2, 3],
            max_connections: 100,
        };
        let argv = db_run_argv(&h, &spec).unwrap().join(" ");
        assert_eq!(
            argv,
            "/srv/sb/target/release/serverbench db run --db-port 5544 --db-host 198.18.0.40 \
             --db-allow 198.18.0.10 --max-connections 100 --root /srv/sb --db-cpus 2,3"
        );
    }

    #[test]
    fn an_address_that_does_not_resolve_is_named_with_its_host() {
        let e = ip_of(&host("pg", "no-such-host.invalid")).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("pg: address `no-such-host.invalid`"),
            "{text}"
        );
    }
}
