//! Appending lap records to `results.jsonl` so that a crash loses at most the lap in flight, and
//! reading them back (a torn last line is ignored).

use super::record::LapRecord;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Errors reading or writing `results.jsonl`.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// I/O on the file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A complete line that is not a lap record.
    #[error("{}:{line}: not a lap record: {message}", path.display())]
    BadLine {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// serde's message.
        message: String,
    },
}

/// Appends one line per lap, each written with a single `write_all` and synced to disk.
#[derive(Debug)]
pub struct ResultsWriter {
    path: PathBuf,
    file: File,
}

impl ResultsWriter {
    /// Opens (creating) `path` for appending. A torn last line left by a crash is cut off first
    /// so the next record starts on a line of its own.
    pub fn open(path: &Path) -> Result<ResultsWriter, ResultsError> {
        let io = |source| ResultsError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        let mut text = Vec::new();
        file.read_to_end(&mut text).map_err(io)?;
        if !text.is_empty() && !text.ends_with(b"\n") {
            let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            file.set_len(keep as u64).map_err(io)?;
            file.seek(SeekFrom::End(0)).map_err(io)?;
        }
        Ok(ResultsWriter {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Appends `record` as one line and syncs it.
    pub fn append(&mut self, record: &LapRecord) -> Result<(), ResultsError> {
        let mut line = serde_json::to_vec(record).map_err(|e| ResultsError::Io {
            path: self.path.clone(),
            source: e.into(),
        })?;
        line.push(b'\n');
        let io = |source| ResultsError::Io {
            path: self.path.clone(),
            source,
        };
        self.file.write_all(&line).map_err(io)?;
        self.file.sync_data().map_err(io)
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads every complete record. A last line without its newline (a lap cut by a crash) is
/// ignored; a bad complete line is an error naming its line. A missing file reads as empty.
pub fn read_records(path: &Path) -> Result<Vec<LapRecord>, ResultsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ResultsError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    complete
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| ResultsError::BadLine {
                path: path.to_path_buf(),
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{LapStatus, LoadParams};
    use crate::Tool;

    fn record(lap: u32) -> LapRecord {
        LapRecord {
            suite: "s".into(),
            server: "python/fast".into(),
            scenario: "hello".into(),
            profile: "c1".into(),
            lap,
            status: LapStatus::Ok,
            failure: None,
            tool: Tool::Serverbench,
            started_at: "2026-01-01T00:00:00.000Z".into(),
            wall_s: 1.0,
            params: LoadParams::default(),
            load: None,
            server_stats: None,
            roles: Default::default(),
            database: None,
            hosts: None,
            disturbance: None,
        }
    }

    #[test]
    fn every_appended_record_is_one_complete_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let mut w = ResultsWriter::open(&path).unwrap();
        for lap in 1..=3 {
            w.append(&record(lap)).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n'));
        assert_eq!(text.lines().count(), 3);
        assert_eq!(
            read_records(&path).unwrap(),
            vec![record(1), record(2), record(3)]
        );
    }

    #[test]
    fn reader_ignores_a_torn_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let full = serde_json::to_string(&record(1)).unwrap();
        std::fs::write(&path, format!("{full}\n{}", &full[..full.len() / 2])).unwrap();
        assert_eq!(read_records(&path).unwrap(), vec![record(1)]);
    }

    #[test]
    fn reopening_after_a_torn_line_cuts_it_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let full = serde_json::to_string(&record(1)).unwrap();
        std::fs::write(&path, format!("{full}\n{{\"suite\":\"s\",\"ser")).unwrap();
        ResultsWriter::open(&path)
            .unwrap()
            .append(&record(2))
            .unwrap();
        assert_eq!(read_records(&path).unwrap(), vec![record(1), record(2)]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.lines().all(|l| l.starts_with('{') && l.ends_with('}')),
            "{text}"
        );
    }

    #[test]
    fn a_bad_complete_line_is_an_error_naming_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let full = serde_json::to_string(&record(1)).unwrap();
        std::fs::write(&path, format!("{full}\nnot json\n")).unwrap();
        let err = read_records(&path).unwrap_err().to_string();
        assert!(err.contains(":2:"), "{err}");
    }
}
