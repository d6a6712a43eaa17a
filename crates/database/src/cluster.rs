//! The cluster's life: prepared (installed, initialised, schema loaded, configured), started by
//! spawning the postmaster (pinned with `taskset` when asked), stopped by its PID.

use crate::config::{render_conf, render_hba};
use crate::init::{
    ensure_installed, init, pinned, program, read_password, remove_old_versions, write_owned,
};
use crate::layout::{current_stamp, Layout};
use crate::process::{self, PostmasterPid};
use crate::{Config, DbError, DbUrl, Result, DB_NAME, DB_USER, REFEREE_USER, SCHEMA_SQL};
use std::fs;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a start may take before it is a failure.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// What [`Cluster::prepare`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prepared {
    /// A new cluster was made.
    Created,
    /// The cluster of this schema version was there: reused.
    Reused,
    /// A cluster was there but not of this schema (or half made): rebuilt.
    Rebuilt {
        /// What the old stamp said (empty: none).
        old_stamp: String,
    },
}

/// A private cluster, prepared and ready to start.
#[derive(Debug)]
pub struct Cluster {
    config: Config,
    layout: Layout,
    password: String,
    referee_password: String,
    prepared: Prepared,
}

/// What runs, and where it listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterStatus {
    /// Where the cluster lives.
    pub layout: Layout,
    /// A cluster of this schema version exists.
    pub prepared: bool,
    /// The running postmaster: PID, port, socket folder, TCP addresses.
    pub running: Option<PostmasterPid>,
}

impl Cluster {
    /// Installs PostgreSQL when missing (`config.install`, as root), stops and removes clusters
    /// of older schema versions, initialises this version's cluster when absent or of another
    /// stamp (loading `spec/database.sql`), and writes its configuration from `config`.
    pub fn prepare(config: &Config) -> Result<Cluster> {
        // A taken port fails before an install and initdb, not after.
        let before = Layout::new(&config.cache, config.port);
        if process::read_postmaster_pid(&before.data()).is_none() {
            check_port_free(config)?;
        }
        ensure_installed(config.install)?;
        remove_old_versions(&config.cache)?;
        // Again: the `postgres` user, who decides where the data can live, may be new.
        let layout = Layout::new(&config.cache, config.port);
        let old_stamp = fs::read_to_string(layout.stamp_file()).ok();
        let prepared = match &old_stamp {
            Some(s) if *s == current_stamp() && layout.data().join("PG_VERSION").exists() => {
                Prepared::Reused
            }
            Some(s) => Prepared::Rebuilt {
                old_stamp: s.trim().to_owned(),
            },
            None if layout.data().exists() => Prepared::Rebuilt {
                old_stamp: String::new(),
            },
            None => Prepared::Created,
        };
        if prepared != Prepared::Reused {
            if let Some(pm) = process::read_postmaster_pid(&layout.data()) {
                process::stop(pm.pid, None)?;
            }
            layout.remove()?;
            layout.create()?;
            init(&layout)?;
        }
        let mut cluster = Cluster {
            config: config.clone(),
            password: read_password(&layout)?,
            referee_password: String::new(),
            layout,
            prepared,
        };
        cluster.write_config()?;
        if cluster.prepared != Prepared::Reused {
            cluster.load_schema()?;
        }
        let referee = crate::referee::ensure(&cluster.layout, &cluster.url(), || cluster.start())?;
        cluster.referee_password = referee;
        Ok(cluster)
    }

    /// The cluster `prepare` made, without installing or initialising anything (for `status`,
    /// `down`, `psql`); [`DbError::NotPrepared`] when there is none.
    pub fn open(config: &Config) -> Result<Cluster> {
        let layout = Layout::new(&config.cache, config.port);
        if fs::read_to_string(layout.stamp_file()).ok().as_deref() != Some(&current_stamp()) {
            return Err(DbError::NotPrepared(layout.dir));
        }
        // A cluster prepared before the referee's role has none yet (the next prepare makes it):
        // status, down and psql need only the server's role.
        let referee = std::fs::read_to_string(layout.referee_password_file()).unwrap_or_default();
        Ok(Cluster {
            config: config.clone(),
            password: read_password(&layout)?,
            referee_password: referee.trim().to_owned(),
            layout,
            prepared: Prepared::Reused,
        })
    }

    /// What `prepare` did.
    pub fn prepared(&self) -> &Prepared {
        &self.prepared
    }
    /// Where the cluster lives.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The configuration it was prepared or opened with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The URL servers use (the configured address and port).
    pub fn url(&self) -> DbUrl {
        DbUrl {
            user: DB_USER.into(),
            password: self.password.clone(),
            host: self.config.host.to_string(),
            port: self.config.port,
            dbname: DB_NAME.into(),
        }
    }

    /// The referee's URL: the same database as the role [`REFEREE_USER`] (serverbench's own
    /// reads, snapshots and changes, told from a server's by role).
    pub fn referee_url(&self) -> DbUrl {
        DbUrl {
            user: REFEREE_USER.into(),
            password: self.referee_password.clone(),
            ..self.url()
        }
    }

    /// Is it running, and where.
    pub fn status(&self) -> ClusterStatus {
        status_of(&self.layout)
    }

    /// Starts the postmaster and waits until it accepts connections; [`DbError::AlreadyRunning`]
    /// when it runs, [`DbError::PortTaken`] when something else holds the port.
    pub fn start(&self) -> Result<RunningDb> {
        if let Some(pm) = process::read_postmaster_pid(&self.layout.data()) {
            return Err(DbError::AlreadyRunning {
                pid: pm.pid,
                port: pm.port,
            });
        }
        check_port_free(&self.config)?;
        let mut child = self.spawn()?;
        let pid = child.id();
        let url = self.url();
        // Ready when the role can log in to `postgres` (`hello_world` is made after the first
        // start).
        let mut probe = url.clone();
        probe.dbname = "postgres".into();
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(self.start_failed(format!("postgres exited ({status})")));
            }
            if crate::connect(&probe).is_ok() {
                break;
            }
            if start.elapsed() > START_TIMEOUT {
                let _ = process::stop(pid, Some(&mut child));
                return Err(self.start_failed(format!("no connection in {START_TIMEOUT:?}")));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(RunningDb {
            pid,
            url,
            referee_url: self.referee_url(),
            socket_dir: self.layout.socket_dir(),
            log_file: self.layout.log_file(),
            child: Some(child),
        })
    }

    /// Stops the running postmaster found by its PID file; its PID, or `None` when none ran.
    pub fn stop_running(&self) -> Result<Option<u32>> {
        match process::read_postmaster_pid(&self.layout.data()) {
            Some(pm) => process::stop(pm.pid, None).map(|()| Some(pm.pid)),
            None => Ok(None),
        }
    }

    fn start_failed(&self, detail: String) -> DbError {
        let log = self.layout.log_file();
        let tail = fs::read_to_string(&log).unwrap_or_default();
        let last = tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        DbError::StartFailed {
            detail: if last.is_empty() {
                detail
            } else {
                format!("{detail}: {last}")
            },
            log,
        }
    }

    fn spawn(&self) -> Result<Child> {
        let log_path = self.layout.log_file();
        rotate_log(&log_path, self.config.log_statements)?;
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(DbError::io(&log_path))?;
        let err = log.try_clone().map_err(DbError::io(&log_path))?;
        let postgres = program("postgres")?;
        let mut cmd = pinned(&postgres, &self.config.cpus);
        cmd.arg("-D").arg(self.layout.data());
        if let Some((uid, gid)) = process::postgres_ids()? {
            cmd.uid(uid).gid(gid);
        }
        // Its own process group: a Ctrl-C to the terminal's group does not reach it; the
        // owner stops it by PID.
        if !self.config.in_starters_group {
            cmd.process_group(0);
        }
        cmd.current_dir(&self.layout.home)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| DbError::Step {
                step: format!("starting {}", command_line(&cmd)),
                detail: e.to_string(),
            })
    }

    fn write_config(&self) -> Result<()> {
        let data = self.layout.data();
        let conf = render_conf(
            &self.config,
            &self.layout.socket_dir(),
            &self.layout.pid_file(),
        );
        write_owned(&data.join("serverbench.conf"), &conf)?;
        write_owned(&data.join("pg_hba.conf"), &render_hba(&self.config))
    }

    /// Starts the fresh cluster, creates the database, the extension and the schema, stops it,
    /// and writes the stamp last (a cluster without it is rebuilt).
    fn load_schema(&self) -> Result<()> {
        let running = self.start()?;
        let mut admin = self.url();
        admin.dbname = "postgres".into();
        let q = |url: &DbUrl, sql: &str| -> Result<()> {
            let mut c = crate::connect(url)?;
            c.batch_execute(sql).map_err(|source| DbError::Query {
                url: url.to_string(),
                source,
            })
        };
        q(
            &admin,
            &format!("CREATE DATABASE {DB_NAME} OWNER {DB_USER}"),
        )?;
        q(
            &running.url(),
            "CREATE EXTENSION IF NOT EXISTS pg_stat_statements",
        )?;
        q(&running.url(), SCHEMA_SQL)?;
        running.stop()?;
        let stamp = self.layout.stamp_file();
        fs::write(&stamp, current_stamp()).map_err(DbError::io(&stamp))
    }
}

/// A running postmaster started by [`Cluster::start`]; dropped, it is stopped.
#[derive(Debug)]
pub struct RunningDb {
    /// The postmaster's PID (the root of the database's process tree, for sampling).
    pub pid: u32,
    url: DbUrl,
    referee_url: DbUrl,
    socket_dir: PathBuf,
    log_file: PathBuf,
    child: Option<Child>,
}

impl RunningDb {
    /// Where servers reach it.
    pub fn url(&self) -> DbUrl {
        self.url.clone()
    }

    /// The referee's URL (see [`Cluster::referee_url`]).
    pub fn referee_url(&self) -> DbUrl {
        self.referee_url.clone()
    }

    /// The server log (with [`Config::log_statements`], every statement).
    pub fn log_file(&self) -> &Path {
        &self.log_file
    }

    /// The private socket folder (for psql and local admin connections).
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// The environment a server gets (spec/contract.md): `DATABASE_URL`, its parts, and
    /// `DATABASE_POOL`.
    pub fn env(&self, pool: u32) -> Vec<(String, String)> {
        env_for(&self.url, pool)
    }

    /// Stops it (fast shutdown, escalating) and waits for it to be gone.
    pub fn stop(mut self) -> Result<()> {
        let child = self.child.take();
        stop_child(self.pid, child)
    }

    /// Leaves it running after this value is gone (`serverbench db up`); its PID.
    pub fn detach(mut self) -> u32 {
        self.child = None;
        let pid = self.pid;
        std::mem::forget(self);
        pid
    }
}

impl Drop for RunningDb {
    fn drop(&mut self) {
        let _ = stop_child(self.pid, self.child.take());
    }
}

fn stop_child(pid: u32, mut child: Option<Child>) -> Result<()> {
    process::stop(pid, child.as_mut())
}

/// A log past [`LOG_KEEP`] bytes moves to `postgres.log.1` (replacing the one before) when the
/// cluster starts logging every statement (verify's), so the cache does not grow without end.
fn rotate_log(log: &Path, log_statements: bool) -> Result<()> {
    let big = fs::metadata(log).is_ok_and(|m| m.len() > LOG_KEEP);
    if log_statements && big {
        let old = log.with_extension("log.1");
        fs::rename(log, &old).map_err(DbError::io(log))?;
    }
    Ok(())
}

/// The server log's size past which a statement-logging start rotates it.
const LOG_KEEP: u64 = 16 << 20;

/// The environment for `url` and a pool of `pool` connections.
pub fn env_for(url: &DbUrl, pool: u32) -> Vec<(String, String)> {
    [
        ("DATABASE_URL", url.expose()),
        ("DATABASE_HOST", url.host.clone()),
        ("DATABASE_PORT", url.port.to_string()),
        ("DATABASE_USER", url.user.clone()),
        ("DATABASE_PASSWORD", url.password.clone()),
        ("DATABASE_NAME", url.dbname.clone()),
        ("DATABASE_POOL", pool.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// The status of the cluster for `config` without opening it.
pub fn status_of(layout: &Layout) -> ClusterStatus {
    ClusterStatus {
        prepared: fs::read_to_string(layout.stamp_file()).ok().as_deref() == Some(&current_stamp()),
        running: process::read_postmaster_pid(&layout.data()),
        layout: layout.clone(),
    }
}

impl ClusterStatus {
    /// The status of the cluster `config` names (prepared or not).
    pub fn of(config: &Config) -> ClusterStatus {
        status_of(&Layout::new(&config.cache, config.port))
    }
}

fn check_port_free(c: &Config) -> Result<()> {
    match TcpListener::bind(SocketAddr::new(c.host, c.port)) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(DbError::PortTaken {
            host: c.host.to_string(),
            port: c.port,
        }),
        Err(e) => Err(DbError::Step {
            step: format!("listening on {}:{}", c.host, c.port),
            detail: e.to_string(),
        }),
    }
}

fn command_line(c: &Command) -> String {
    serverbench_provision::command_line(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_gets_the_url_and_its_parts_and_the_pool() {
        let url = DbUrl::parse("postgres://serverbench:pw@127.0.0.1:5433/hello_world").unwrap();
        let env = env_for(&url, 64);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(
            get("DATABASE_URL"),
            Some("postgres://serverbench:pw@127.0.0.1:5433/hello_world")
        );
        assert_eq!(get("DATABASE_HOST"), Some("127.0.0.1"));
        assert_eq!(get("DATABASE_PORT"), Some("5433"));
        assert_eq!(get("DATABASE_USER"), Some("serverbench"));
        assert_eq!(get("DATABASE_PASSWORD"), Some("pw"));
        assert_eq!(get("DATABASE_NAME"), Some("hello_world"));
        assert_eq!(get("DATABASE_POOL"), Some("64"));
    }

    #[test]
    fn a_large_log_is_rotated_only_when_every_statement_is_logged() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("postgres.log");
        std::fs::write(&log, vec![b'x'; (LOG_KEEP + 1) as usize]).unwrap();
        rotate_log(&log, false).unwrap();
        assert!(log.exists(), "a run's start leaves it");
        rotate_log(&log, true).unwrap();
        assert!(!log.exists() && dir.path().join("postgres.log.1").exists());
        std::fs::write(&log, "small").unwrap();
        rotate_log(&log, true).unwrap();
        assert!(log.exists(), "a small log stays");
    }

    #[test]
    fn a_port_in_use_is_named() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = Config::new("/c");
        c.port = l.local_addr().unwrap().port();
        let e = check_port_free(&c).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "port {} on 127.0.0.1 is taken by another process (choose another with --db-port)",
                c.port
            )
        );
    }
}
