//! The history file: one SQLite database in WAL mode with a busy timeout (two runs recording at
//! once both land; a killed run leaves it consistent: every import is one transaction), its
//! schema migrated step by step by `PRAGMA user_version`, and marked as ours by
//! `PRAGMA application_id` so a foreign database is refused rather than written into.

use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The schema version this build writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// `PRAGMA application_id`: "SBH1" in ASCII.
const APPLICATION_ID: i32 = 0x5342_4831;

/// How long a writer waits for another one's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Migration `i` takes the schema from version `i` to `i + 1`. Never edit one that shipped:
/// add the next.
const MIGRATIONS: &[&str] = &[
    // 1: testbeds, runs, cells and their laps.
    "CREATE TABLE testbeds (
        id INTEGER PRIMARY KEY,
        fingerprint TEXT NOT NULL UNIQUE,
        cpu_model TEXT, cores INTEGER, kernel TEXT, governor TEXT, hosts TEXT);
     CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        uid TEXT NOT NULL UNIQUE,
        dir TEXT NOT NULL,
        suite TEXT NOT NULL,
        settings_hash TEXT NOT NULL,
        version TEXT,
        started_at TEXT NOT NULL,
        testbed_id INTEGER NOT NULL REFERENCES testbeds(id),
        git_commit TEXT, branch TEXT, dirty INTEGER,
        laps INTEGER NOT NULL);
     CREATE TABLE cells (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        server TEXT NOT NULL, scenario TEXT NOT NULL, profile TEXT NOT NULL,
        transport TEXT NOT NULL, settings_hash TEXT NOT NULL,
        UNIQUE (run_id, server, scenario, profile, transport));
     CREATE TABLE laps (
        cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
        lap INTEGER NOT NULL, rps REAL, p99_us REAL,
        PRIMARY KEY (cell_id, lap));
     PRAGMA application_id = 1396852785;",
    // 2: each cell's medians, intervals and merged latency histogram; series lookups by index.
    "ALTER TABLE cells ADD COLUMN stats TEXT;
     ALTER TABLE cells ADD COLUMN histogram TEXT;
     CREATE INDEX cells_series ON cells (server, scenario, profile, transport, settings_hash);
     CREATE INDEX runs_series ON runs (testbed_id, started_at);",
    // 3: each lap's cost, CPU µs per request of the server's tree and the database (laps at a
    // fixed rate and capacity searches only; see `series::Measure::Cpu`).
    "ALTER TABLE laps ADD COLUMN cpu_us REAL;",
    // 4: each lap's request count, so a check can say when a p99 rests on too few latencies
    // (see `settle::thin_tail`); laps recorded before it have none.
    "ALTER TABLE laps ADD COLUMN requests INTEGER;",
];

/// Errors of the history database.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The file is not a SQLite database, or not serverbench's history.
    #[error("{}: not a serverbench history ({why})", path.display())]
    Foreign {
        /// The file.
        path: PathBuf,
        /// What gave it away.
        why: String,
    },
    /// A newer serverbench wrote it.
    #[error("{}: history schema version {found} is newer than this serverbench reads ({SCHEMA_VERSION})", path.display())]
    Newer {
        /// The file.
        path: PathBuf,
        /// Its `user_version`.
        found: u32,
    },
    /// SQLite failed.
    #[error("{}: {source}", path.display())]
    Sql {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: rusqlite::Error,
    },
    /// The folder containing the file could not be made.
    #[error("{}: {source}", path.display())]
    Io {
        /// The folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A results folder could not be imported.
    #[error("{0}")]
    Folder(String),
    /// A query named nothing in the history.
    #[error("{0}")]
    NotFound(String),
}

/// An open history file.
pub struct History {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
}

impl History {
    /// Opens (creating it and its folder when missing) and migrates the history at `path`.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        Self::open_at(path, SCHEMA_VERSION)
    }

    /// Opens `path` and migrates it up to `version` only (tests build every earlier version).
    pub fn open_at(path: &Path, version: u32) -> Result<History, HistoryError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| HistoryError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| sql(path, e))?;
        let mut h = History {
            conn,
            path: path.to_path_buf(),
        };
        h.prepare(version)?;
        Ok(h)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the file.
    pub fn schema_version(&self) -> Result<u32, HistoryError> {
        self.pragma_u32("user_version")
    }

    pub(crate) fn err(&self, e: rusqlite::Error) -> HistoryError {
        sql(&self.path, e)
    }

    fn pragma_u32(&self, name: &str) -> Result<u32, HistoryError> {
        self.conn
            .query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0))
            .map(|v| v as u32)
            .map_err(|e| self.classify(e))
    }

    /// "file is not a database" and the like become one line saying so.
    fn classify(&self, e: rusqlite::Error) -> HistoryError {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => HistoryError::Foreign {
                path: self.path.clone(),
                why: "not a SQLite database".into(),
            },
            _ => self.err(e),
        }
    }

    fn prepare(&mut self, target: u32) -> Result<(), HistoryError> {
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| self.err(e))?;
        // Both read in one transaction: a concurrent first opener may commit the schema (and
        // the application id with it) between two separate reads.
        let (app, tables) = {
            let tx = self.conn.transaction().map_err(|e| sql(&self.path, e))?;
            let read = || -> rusqlite::Result<(i64, i64)> {
                let app = tx.query_row("PRAGMA application_id", [], |r| r.get(0))?;
                let tables =
                    tx.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
                Ok((app, tables))
            };
            let got = read();
            drop(tx);
            got.map_err(|e| self.classify(e))?
        };
        if app != i64::from(APPLICATION_ID) && (app != 0 || tables > 0) {
            return Err(HistoryError::Foreign {
                path: self.path.clone(),
                why: format!("a SQLite database of another application (application_id {app})"),
            });
        }
        self.conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            .map_err(|e| self.classify(e))?;
        self.conn
            .execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
            .map_err(|e| self.err(e))?;
        self.migrate(target)
    }

    /// Applies the missing migrations up to `target`, each in the same write transaction as
    /// the version bump, so a concurrent opener waits and then finds the work done.
    fn migrate(&mut self, target: u32) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql(&path, e))?;
        let found: u32 = tx
            .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
            .map_err(|e| sql(&path, e))? as u32;
        if found > SCHEMA_VERSION {
            return Err(HistoryError::Newer { path, found });
        }
        for (i, step) in MIGRATIONS
            .iter()
            .enumerate()
            .take(target as usize)
            .skip(found as usize)
        {
            tx.execute_batch(step).map_err(|e| sql(&path, e))?;
            tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))
                .map_err(|e| sql(&path, e))?;
        }
        tx.commit().map_err(|e| sql(&path, e))
    }
}

fn sql(path: &Path, source: rusqlite::Error) -> HistoryError {
    HistoryError::Sql {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(h: &History) -> Vec<String> {
        let mut st = h
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap();
        let names = st.query_map([], |r| r.get(0)).unwrap();
        names.map(Result::unwrap).collect()
    }

    #[test]
    fn an_empty_file_is_migrated_to_the_latest_schema_in_wal_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/history.db");
        let h = History::open(&path).unwrap();
        assert_eq!(h.schema_version().unwrap(), SCHEMA_VERSION);
        let mode: String = h
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        assert_eq!(tables(&h), ["cells", "laps", "runs", "testbeds"]);
    }

    #[test]
    fn every_earlier_version_migrates_to_the_latest() {
        for from in 0..SCHEMA_VERSION {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("history.db");
            drop(History::open_at(&path, from).unwrap());
            let h = History::open(&path).unwrap();
            assert_eq!(h.schema_version().unwrap(), SCHEMA_VERSION, "from {from}");
            h.conn
                .prepare("SELECT stats, histogram FROM cells")
                .unwrap_or_else(|e| panic!("from version {from}: {e}"));
            h.conn
                .prepare("SELECT cpu_us FROM laps")
                .unwrap_or_else(|e| panic!("from version {from}: {e}"));
        }
    }

    #[test]
    fn reopening_the_latest_version_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        drop(History::open(&path).unwrap());
        let h = History::open(&path).unwrap();
        assert_eq!(h.schema_version().unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn a_file_that_is_not_sqlite_is_refused_in_one_line_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        std::fs::write(
            &path,
            "this is a text file, long enough to have a header of sorts\n",
        )
        .unwrap();
        let err = History::open(&path).err().unwrap().to_string();
        assert!(
            err.contains("history.db") && err.contains("not a SQLite database"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn another_applications_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        drop(c);
        let err = History::open(&path).err().unwrap().to_string();
        assert!(
            err.contains("other.db") && err.contains("another application"),
            "{err}"
        );
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        let h = History::open(&path).unwrap();
        h.conn.execute_batch("PRAGMA user_version = 99").unwrap();
        drop(h);
        let err = History::open(&path).err().unwrap().to_string();
        assert!(err.contains("newer"), "{err}");
    }
}
