//! Where a cluster lives. `$SERVERBENCH_CACHE/postgres/<schema version>/` holds the password
//! (mode 0600), the stamp and the server log; the data folder, the socket folder and the PID
//! file go in the same folder when the `postgres` user can reach it, else (the cache under a
//! folder it cannot traverse, such as `/root`, or a socket path too long for Unix sockets) in
//! `/var/tmp/serverbench-postgres/<hash of that folder>/`, owned by `postgres`, mode 0700:
//! nothing of the cache's parents is opened up. [`Layout::moved`] says why.

use crate::{DbError, Result, SCHEMA_SQL, SCHEMA_VERSION};
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Unix socket paths longer than this do not fit `sun_path` (108 bytes with its NUL).
const MAX_SOCKET_PATH: usize = 100;

/// The files and folders of one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// `$SERVERBENCH_CACHE/postgres/<version>`: password, stamp, log.
    pub dir: PathBuf,
    /// Where the data folder, socket folder and PID file are (`dir`, or the fallback).
    pub home: PathBuf,
    /// Why `home` is not `dir`, when it is not.
    pub moved: Option<String>,
}

impl Layout {
    /// The layout for `cache` and the current schema version; `port` sizes the socket path.
    /// Creates nothing except to probe (as root) whether `postgres` reaches the cache.
    pub fn new(cache: &Path, port: u16) -> Layout {
        // One spelling per folder (`a/../b` is `b`): whether the data moves out of the cache,
        // and where to, must not depend on how the cache was named.
        let cache = std::fs::canonicalize(cache).unwrap_or_else(|_| cache.to_path_buf());
        let dir = cache.join("postgres").join(SCHEMA_VERSION.to_string());
        let socket = dir.join("socket").join(format!(".s.PGSQL.{port}"));
        let moved = if socket.as_os_str().len() > MAX_SOCKET_PATH {
            Some(format!(
                "{} is too long for a Unix socket path",
                socket.display()
            ))
        } else if crate::process::is_root() && !postgres_reaches(&dir) {
            Some(format!(
                "the postgres user cannot reach {} (a parent folder is closed to it)",
                dir.display()
            ))
        } else {
            None
        };
        let home = match moved {
            Some(_) => fallback_home(&dir),
            None => dir.clone(),
        };
        Layout { dir, home, moved }
    }

    /// The data folder (`PGDATA`).
    pub fn data(&self) -> PathBuf {
        self.home.join("data")
    }
    /// The private socket folder.
    pub fn socket_dir(&self) -> PathBuf {
        self.home.join("socket")
    }
    /// The PID file the postmaster writes (`external_pid_file`, in the socket folder: a folder
    /// the `postgres` user owns).
    pub fn pid_file(&self) -> PathBuf {
        self.socket_dir().join("postgres.pid")
    }
    /// The role's password (mode 0600).
    pub fn password_file(&self) -> PathBuf {
        self.dir.join("password")
    }
    /// The referee role's password (mode 0600).
    pub fn referee_password_file(&self) -> PathBuf {
        self.dir.join("referee-password")
    }
    /// The stamp: schema version, hash of the SQL, PostgreSQL major version.
    pub fn stamp_file(&self) -> PathBuf {
        self.dir.join("stamp")
    }
    /// The server's log (stdout and stderr of the postmaster).
    pub fn log_file(&self) -> PathBuf {
        self.dir.join("postgres.log")
    }

    /// Creates `dir` and `home`; as root, `home`'s data and socket folders belong to `postgres`.
    pub fn create(&self) -> Result<()> {
        for d in [&self.dir, &self.home] {
            std::fs::create_dir_all(d).map_err(DbError::io(d))?;
        }
        for d in [self.data(), self.socket_dir()] {
            std::fs::create_dir_all(&d).map_err(DbError::io(&d))?;
            crate::process::give_to_postgres(&d, 0o700)?;
        }
        if self.home != self.dir {
            crate::process::give_to_postgres(&self.home, 0o700)?;
        }
        Ok(())
    }

    /// Removes the cluster's files (its data, socket folder, password, stamp; the log stays).
    pub fn remove(&self) -> Result<()> {
        for d in [self.data(), self.socket_dir()] {
            match std::fs::remove_dir_all(&d) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(DbError::Io { path: d, source: e })
                }
                _ => {}
            }
        }
        for f in [
            self.password_file(),
            self.referee_password_file(),
            self.stamp_file(),
            self.pid_file(),
        ] {
            let _ = std::fs::remove_file(f);
        }
        Ok(())
    }
}

/// The stamp of a cluster made from this build's schema.
pub fn current_stamp() -> String {
    let mut h = fnv::FnvHasher::default();
    h.write(SCHEMA_SQL.as_bytes());
    format!(
        "schema {SCHEMA_VERSION} sql {:016x} postgresql 15\n",
        h.finish()
    )
}

fn fallback_home(dir: &Path) -> PathBuf {
    let mut h = fnv::FnvHasher::default();
    h.write(dir.as_os_str().as_encoded_bytes());
    PathBuf::from("/var/tmp/serverbench-postgres").join(format!("{:016x}", h.finish()))
}

/// True when the `postgres` user can traverse every folder down to the nearest existing
/// ancestor of `dir` (asked of the kernel by running `test -x` as that user).
fn postgres_reaches(dir: &Path) -> bool {
    let existing = dir
        .ancestors()
        .find(|a| a.exists())
        .unwrap_or(Path::new("/"));
    Command::new("runuser")
        .args(["-u", "postgres", "--", "test", "-x"])
        .arg(existing)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_lives_under_the_cache_by_schema_version() {
        let l = Layout::new(Path::new("/tmp"), 5433);
        assert_eq!(
            l.dir,
            Path::new("/tmp/postgres").join(SCHEMA_VERSION.to_string())
        );
        assert_eq!(l.home, l.dir);
        assert_eq!(l.moved, None);
        assert_eq!(l.data(), l.dir.join("data"));
        assert_eq!(l.password_file(), l.dir.join("password"));
    }

    #[test]
    fn two_spellings_of_one_cache_give_one_layout() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("a");
        std::fs::create_dir(&deep).unwrap();
        let roundabout = deep.join("..").join("a").join("..").join("a");
        assert_eq!(Layout::new(&roundabout, 5433), Layout::new(&deep, 5433));
    }

    #[test]
    fn a_socket_path_too_long_moves_the_data_out_of_the_cache() {
        let deep = PathBuf::from("/tmp").join("x".repeat(90));
        let l = Layout::new(&deep, 5433);
        assert!(
            l.home.starts_with("/var/tmp/serverbench-postgres/"),
            "{l:?}"
        );
        assert!(l.moved.unwrap().contains("too long"));
        assert_eq!(
            l.dir,
            deep.join("postgres").join(SCHEMA_VERSION.to_string())
        );
    }

    #[test]
    fn the_stamp_names_the_schema_version_and_the_sql() {
        let s = current_stamp();
        assert!(
            s.starts_with(&format!("schema {SCHEMA_VERSION} sql ")),
            "{s}"
        );
        assert!(s.ends_with(" postgresql 15\n"));
    }
}
