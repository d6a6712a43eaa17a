//! The statements a cluster logged with [`Config::log_statements`](crate::Config): each with its
//! process, virtual transaction and role, read from the server log after an offset. verify reads
//! them to find what `pg_stat_statements` cannot show: several statements sent in one query
//! string (it records them one by one), and reads that shared one transaction (queries
//! pipelined under one Sync, or an explicit transaction around them).

use crate::{DbError, Result};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// One logged statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedStatement {
    /// The backend's PID.
    pub pid: u32,
    /// Its virtual transaction (`backend/local`), the same for statements of one transaction.
    pub vxid: String,
    /// The role that ran it.
    pub role: String,
    /// Sent as a simple query (`statement:`), where one string may hold several statements;
    /// else an extended-protocol execute.
    pub simple: bool,
    /// The text (of the whole query string, for a simple query).
    pub text: String,
}

impl LoggedStatement {
    /// Statements in its text: `;`-separated parts with something in them, outside quotes,
    /// dollar quotes and comments.
    pub fn statements(&self) -> usize {
        count_statements(&self.text)
    }

    /// Its statements' texts (see [`split_statements`]).
    pub fn parts(&self) -> Vec<&str> {
        split_statements(&self.text)
    }
}

/// The server log read from an offset on.
#[derive(Debug, Clone)]
pub struct StatementLog {
    path: PathBuf,
    offset: u64,
}

impl StatementLog {
    /// The log at `path` from its current end.
    pub fn at_end(path: &Path) -> StatementLog {
        let offset = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        StatementLog {
            path: path.to_owned(),
            offset,
        }
    }

    /// The statements logged since the offset; the offset moves to the end.
    pub fn read_new(&mut self) -> Result<Vec<LoggedStatement>> {
        let io = |source| DbError::Io {
            path: self.path.clone(),
            source,
        };
        let mut f = std::fs::File::open(&self.path).map_err(io)?;
        f.seek(SeekFrom::Start(self.offset)).map_err(io)?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).map_err(io)?;
        // Only whole lines: a line being written is read next time.
        let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        self.offset += whole as u64;
        Ok(parse(&String::from_utf8_lossy(&bytes[..whole])))
    }
}

/// The statements of log text written with [`LOG_PREFIX`](crate::config::LOG_PREFIX): a line
/// `… [PID] vxid=V role=R LOG:  statement: TEXT` or `…  execute NAME: TEXT`, continued on
/// lines that start with a tab.
pub fn parse(log: &str) -> Vec<LoggedStatement> {
    let mut out: Vec<LoggedStatement> = Vec::new();
    let mut open = false;
    for line in log.lines() {
        if let Some(more) = line.strip_prefix('\t') {
            if open {
                let last = out.last_mut().expect("open");
                last.text.push('\n');
                last.text.push_str(more);
            }
            continue;
        }
        open = false;
        if let Some(s) = parse_line(line) {
            out.push(s);
            open = true;
        }
    }
    out
}

fn parse_line(line: &str) -> Option<LoggedStatement> {
    let (head, message) = line.split_once(" LOG:  ")?;
    let pid = head.split_once(" [")?.1.split_once(']')?.0.parse().ok()?;
    let field = |key: &str| {
        head.split(' ')
            .find_map(|t| t.strip_prefix(key))
            .unwrap_or("")
            .to_owned()
    };
    let (simple, text) = if let Some(t) = message.strip_prefix("statement: ") {
        (true, t)
    } else if let Some(rest) = message.strip_prefix("execute ") {
        (false, rest.split_once(": ")?.1)
    } else {
        return None;
    };
    Some(LoggedStatement {
        pid,
        vxid: field("vxid="),
        role: field("role="),
        simple,
        text: text.to_owned(),
    })
}

/// Statements in `sql`: parts between `;` with something besides white space in them, with
/// quotes (`'…'`, `"…"`, `$tag$…$tag$`) and comments (`--`, `/* */`) skipped.
pub fn count_statements(sql: &str) -> usize {
    split_statements(sql).len()
}

/// The statements of `sql` (as [`count_statements`] finds them), each trimmed.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let b = sql.as_bytes();
    let (mut i, mut start, mut content) = (0, 0, false);
    let mut parts = Vec::new();
    while i < b.len() {
        let c = b[i];
        let skip_to =
            |from: usize, end: &[u8]| find(b, from, end).map_or(b.len(), |at| at + end.len());
        i = match c {
            b'\'' => {
                content = true;
                skip_to(i + 1, b"'")
            }
            b'"' => {
                content = true;
                skip_to(i + 1, b"\"")
            }
            b'-' if b.get(i + 1) == Some(&b'-') => skip_to(i, b"\n"),
            b'/' if b.get(i + 1) == Some(&b'*') => skip_to(i + 2, b"*/"),
            b'$' => match dollar_tag(&b[i..]) {
                Some(tag) => {
                    content = true;
                    skip_to(i + tag.len(), tag)
                }
                None => i + 1,
            },
            b';' => {
                if content {
                    parts.push(sql[start..i].trim());
                }
                content = false;
                start = i + 1;
                i + 1
            }
            c => {
                content |= !c.is_ascii_whitespace();
                i + 1
            }
        };
    }
    if content {
        parts.push(sql[start..].trim());
    }
    parts
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    (from..b.len().saturating_sub(needle.len() - 1)).find(|&i| b[i..].starts_with(needle))
}

/// `$tag$` or `$$` at the start of `b` (not a parameter `$1`).
fn dollar_tag(b: &[u8]) -> Option<&[u8]> {
    let end = b[1..]
        .iter()
        .position(|c| !(c.is_ascii_alphabetic() || *c == b'_'))?
        + 1;
    (b.get(end) == Some(&b'$')).then(|| &b[..=end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_counted_outside_quotes_comments_and_dollar_quotes() {
        for (sql, n) in [
            ("SELECT 1", 1),
            ("SELECT 1;", 1),
            ("SELECT 1; SELECT 2", 2),
            ("SELECT 1;\n SELECT 2;\n", 2),
            ("SELECT ';' FROM world WHERE id = $1", 1),
            ("SELECT 1 -- a; comment\n", 1),
            ("/* a; b */ SELECT 1", 1),
            ("DO $$ BEGIN PERFORM 1; PERFORM 2; END $$", 1),
            ("DO $body$ BEGIN PERFORM 1; END $body$; SELECT 2", 2),
            ("SELECT \"a;b\" FROM t", 1),
            ("", 0),
        ] {
            assert_eq!(count_statements(sql), n, "{sql}");
        }
        assert_eq!(
            split_statements("SELECT 1; SELECT ';' ;\n"),
            ["SELECT 1", "SELECT ';'"]
        );
    }

    #[test]
    fn simple_and_extended_statements_are_read_with_their_transaction_and_role() {
        let log = "2026-11-27 16:50:00.123 UTC [41] vxid=3/7 role=serverbench LOG:  statement: \
                   SELECT 1; SELECT 2\n\
                   2026-11-27 16:50:00.124 UTC [42] vxid=4/9 role=serverbench LOG:  execute s0: \
                   SELECT id FROM world\n\
                   \tWHERE id = $1\n\
                   2026-11-27 16:50:00.124 UTC [42] vxid=4/9 role=serverbench DETAIL:  parameters: \
                   $1 = '3'\n\
                   2026-11-27 16:50:00.125 UTC [7] vxid= role= LOG:  checkpoint starting\n";
        let got = parse(log);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].pid, got[0].vxid.as_str()), (41, "3/7"));
        assert!(got[0].simple && got[0].statements() == 2);
        assert_eq!(got[1].text, "SELECT id FROM world\nWHERE id = $1");
        assert_eq!(
            (got[1].role.as_str(), got[1].simple),
            ("serverbench", false)
        );
    }
}
