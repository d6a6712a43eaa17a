//! What a cluster is asked to be (port, address, CPUs, sizes) and the files it is configured
//! with: `serverbench.conf` (included by `postgresql.conf`) and `pg_hba.conf`.

use crate::{DB_NAME, DB_USER, REFEREE_USER};
use std::fmt::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// The port of the private cluster unless `--db-port` says otherwise (the machine's own cluster,
/// if any, keeps 5432).
pub const DEFAULT_PORT: u16 = 5433;

/// The settings of a private cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The cache folder (`$SERVERBENCH_CACHE`); the cluster lives in `postgres/<version>` below.
    pub cache: PathBuf,
    /// The one TCP address it listens on (127.0.0.1, or a host's inventory address).
    pub host: IpAddr,
    /// Its TCP port.
    pub port: u16,
    /// The only addresses (or networks, `198.18.0.10/32`) allowed to log in over TCP besides
    /// `host` itself; empty: loopback when it listens there, else any address (the password is
    /// still required).
    pub allow: Vec<String>,
    /// CPUs the postmaster (and so every backend) is pinned to; empty: not pinned.
    pub cpus: Vec<usize>,
    /// `max_connections`: the largest pool a lap asks for, plus room for the harness.
    pub max_connections: u32,
    /// `shared_buffers` in MiB.
    pub shared_buffers_mb: u32,
    /// Install `postgresql-15`/`postgresql-contrib` with apt-get when missing (root only).
    pub install: bool,
    /// The postmaster stays in its starter's process group (`db run` over ssh: the session's
    /// end signals the whole group, the postmaster included); else it gets a group of its own.
    pub in_starters_group: bool,
    /// Every statement logged with its virtual transaction and role (`log_statement = all`):
    /// verify reads the log to find several statements in one query string and reads that share
    /// one transaction (one Sync for several queries). Off for runs (the log would cost time).
    pub log_statements: bool,
}

impl Config {
    /// The defaults: 127.0.0.1:5433, not pinned, 1,000 connections, 256 MiB of shared buffers.
    pub fn new(cache: impl Into<PathBuf>) -> Config {
        Config {
            cache: cache.into(),
            host: IpAddr::from([127, 0, 0, 1]),
            port: DEFAULT_PORT,
            allow: Vec::new(),
            cpus: Vec::new(),
            max_connections: 1000,
            shared_buffers_mb: 256,
            install: true,
            in_starters_group: false,
            log_statements: false,
        }
    }

    /// `max_connections` for pools of up to `pool` connections (×2 for a server that misjudges
    /// its share, +20 for the harness and psql), never below 100.
    pub fn size_for_pool(mut self, pool: u32) -> Config {
        self.max_connections = (pool.saturating_mul(2) + 20).max(100);
        self
    }
}

/// The log line prefix with `log_statements`: time, PID, virtual transaction, role.
pub const LOG_PREFIX: &str = "%m [%p] vxid=%v role=%u ";

/// `serverbench.conf`: in the spirit of TechEmpower's published configuration (durability traded
/// for speed: `synchronous_commit=off`, no full-page writes), `pg_stat_statements` preloaded and
/// tracking every statement, listening on one address and a private socket folder.
pub fn render_conf(c: &Config, socket_dir: &Path, pid_file: &Path) -> String {
    let mut s = String::from("# Written by serverbench at every `db up`: edits are lost.\n");
    let quoted = |p: &Path| p.display().to_string().replace('\'', "''");
    let _ = writeln!(s, "listen_addresses = '{}'", c.host);
    let _ = writeln!(s, "port = {}", c.port);
    let _ = writeln!(s, "unix_socket_directories = '{}'", quoted(socket_dir));
    let _ = writeln!(s, "unix_socket_permissions = 0700");
    let _ = writeln!(s, "external_pid_file = '{}'", quoted(pid_file));
    let _ = writeln!(s, "password_encryption = scram-sha-256");
    let _ = writeln!(s, "max_connections = {}", c.max_connections);
    let _ = writeln!(s, "shared_buffers = {}MB", c.shared_buffers_mb);
    s.push_str(
        "work_mem = 64MB\n\
         maintenance_work_mem = 512MB\n\
         effective_cache_size = 8GB\n\
         checkpoint_timeout = 1h\n\
         max_wal_size = 4GB\n\
         synchronous_commit = off\n\
         full_page_writes = off\n\
         wal_level = minimal\n\
         max_wal_senders = 0\n\
         wal_buffers = 16MB\n\
         effective_io_concurrency = 32\n\
         random_page_cost = 1.1\n\
         jit = off\n\
         track_activities = off\n\
         shared_preload_libraries = 'pg_stat_statements'\n\
         pg_stat_statements.track = all\n\
         pg_stat_statements.max = 10000\n\
         pg_stat_statements.save = off\n\
         logging_collector = off\n\
         log_checkpoints = off\n\
         log_min_messages = warning\n\
         log_line_prefix = '%m [%p] '\n",
    );
    if c.log_statements {
        s.push_str(&format!(
            "log_statement = 'all'\nlog_line_prefix = '{LOG_PREFIX}'\n"
        ));
    }
    s
}

/// `pg_hba.conf`: the cluster's role only, with a SCRAM-SHA-256 password, on the private socket
/// and over TCP from the addresses of [`Config::allow`] (by default loopback, or anywhere when it
/// listens on a host's address: the password is still required); no `trust` line at all.
pub fn render_hba(c: &Config) -> String {
    let mut s = String::from("# Written by serverbench: its role only, SCRAM passwords.\n");
    let dbs = format!("{DB_NAME},postgres");
    let roles = format!("{DB_USER},{REFEREE_USER}");
    let _ = writeln!(s, "local {dbs} {roles} scram-sha-256");
    let from: Vec<String> = if !c.allow.is_empty() {
        // The host itself too: its own readiness probe and schema load come from there.
        let own = std::iter::once(c.host.to_string());
        let mut v: Vec<String> = own
            .chain(c.allow.iter().cloned())
            .map(|a| network(&a))
            .collect();
        v.dedup();
        v
    } else if c.host.is_loopback() {
        vec![network(&c.host.to_string())]
    } else {
        vec!["all".to_owned()]
    };
    for from in from {
        let _ = writeln!(s, "host {dbs} {roles} {from} scram-sha-256");
    }
    s
}

/// An address as a `pg_hba.conf` network: an IP alone becomes `/32` (`/128`); a network or a
/// host name is kept.
fn network(a: &str) -> String {
    match a.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => format!("{ip}/32"),
        Ok(IpAddr::V6(ip)) => format!("{ip}/128"),
        Err(_) => a.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_listens_on_one_address_and_a_private_socket_and_preloads_the_statistics() {
        let mut c = Config::new("/c");
        c.port = 5544;
        let conf = render_conf(&c, Path::new("/c/postgres/1/socket"), Path::new("/c/p.pid"));
        for line in [
            "listen_addresses = '127.0.0.1'",
            "port = 5544",
            "unix_socket_directories = '/c/postgres/1/socket'",
            "unix_socket_permissions = 0700",
            "external_pid_file = '/c/p.pid'",
            "synchronous_commit = off",
            "max_connections = 1000",
            "shared_buffers = 256MB",
            "shared_preload_libraries = 'pg_stat_statements'",
            "pg_stat_statements.track = all",
        ] {
            assert!(
                conf.lines().any(|l| l == line),
                "missing {line:?} in\n{conf}"
            );
        }
    }

    #[test]
    fn a_quote_in_a_folder_name_is_doubled_in_the_config() {
        let conf = render_conf(&Config::new("/c"), Path::new("/it's"), Path::new("/p"));
        assert!(conf.contains("unix_socket_directories = '/it''s'"));
    }

    #[test]
    fn access_is_by_password_for_the_role_only_and_never_trusted() {
        let hba = render_hba(&Config::new("/c"));
        assert!(!hba.contains("trust"));
        assert!(hba
            .contains("local hello_world,postgres serverbench,serverbench_referee scram-sha-256"));
        assert!(hba.contains(
            "host hello_world,postgres serverbench,serverbench_referee 127.0.0.1/32 scram-sha-256"
        ));
        let mut remote = Config::new("/c");
        remote.host = "198.18.0.4".parse().unwrap();
        assert!(render_hba(&remote).contains("serverbench,serverbench_referee all scram-sha-256"));
        assert!(render_conf(&remote, Path::new("/s"), Path::new("/p"))
            .contains("listen_addresses = '198.18.0.4'"));
    }

    #[test]
    fn on_a_database_host_only_the_allowed_addresses_may_log_in_with_a_password() {
        let mut c = Config::new("/c");
        c.host = "198.18.0.40".parse().unwrap();
        c.allow = vec!["198.18.0.10".into(), "10.0.0.0/8".into()];
        let hba = render_hba(&c);
        let host_lines: Vec<&str> = hba.lines().filter(|l| l.starts_with("host ")).collect();
        assert_eq!(
            host_lines,
            [
                "host hello_world,postgres serverbench,serverbench_referee 198.18.0.40/32 scram-sha-256",
                "host hello_world,postgres serverbench,serverbench_referee 198.18.0.10/32 scram-sha-256",
                "host hello_world,postgres serverbench,serverbench_referee 10.0.0.0/8 scram-sha-256",
            ]
        );
        assert!(!hba.contains("trust") && !hba.contains(" all "), "{hba}");
    }

    #[test]
    fn connections_are_sized_for_the_largest_pool_with_room_for_the_harness() {
        assert_eq!(Config::new("/c").size_for_pool(256).max_connections, 532);
        assert_eq!(Config::new("/c").size_for_pool(4).max_connections, 100);
    }
}
