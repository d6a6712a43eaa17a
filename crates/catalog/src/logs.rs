//! The tail of a log file: what a failure shows of a setup step's or a server's log.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The last `lines` lines of a file (reads at most its last 256 KiB); empty if unreadable.
pub fn log_tail(path: &Path, lines: usize) -> String {
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(256 * 1024);
    if f.seek(SeekFrom::Start(from)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    last_lines(&String::from_utf8_lossy(&buf), lines)
}

/// The last `lines` lines of `text`.
pub fn last_lines(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log");
        let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&p, text).unwrap();
        let tail = log_tail(&p, 3);
        assert_eq!(tail, "line 28\nline 29\nline 30");
    }
}
