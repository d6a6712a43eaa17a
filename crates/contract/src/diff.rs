//! What a failed check saw versus what the contract expects, as short printable data.

use serde::Serialize;

/// Longest excerpt shown on either side of a diff.
const EXCERPT: usize = 48;

/// One difference: `what` (status, content-type, body, ...), expected and got, both short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diff {
    /// What differs.
    pub what: String,
    /// What the contract expects.
    pub expected: String,
    /// What the server sent (or the error seen).
    pub got: String,
}

impl Diff {
    /// A difference of two short values.
    pub fn new(
        what: impl Into<String>,
        expected: impl Into<String>,
        got: impl Into<String>,
    ) -> Diff {
        Diff {
            what: what.into(),
            expected: expected.into(),
            got: got.into(),
        }
    }

    /// An I/O or protocol error where a response was expected.
    pub fn error(
        what: impl Into<String>,
        expected: impl Into<String>,
        err: &dyn std::fmt::Display,
    ) -> Diff {
        Diff::new(what, expected, format!("error: {err}"))
    }

    /// Compares bodies byte for byte; `None` when equal. Names the first differing offset and
    /// shows a short excerpt from there.
    pub fn bytes(what: &str, expected: &[u8], got: &[u8]) -> Option<Diff> {
        if expected == got {
            return None;
        }
        let at = expected
            .iter()
            .zip(got)
            .position(|(a, b)| a != b)
            .unwrap_or(expected.len().min(got.len()));
        let short = expected.len() <= EXCERPT && got.len() <= EXCERPT;
        if short {
            return Some(Diff::new(what, quote(expected), quote(got)));
        }
        let from = at.saturating_sub(8);
        Some(Diff::new(
            format!("{what} (first difference at byte {at})"),
            format!(
                "{} bytes, from byte {from}: {}",
                expected.len(),
                excerpt(expected, from)
            ),
            format!(
                "{} bytes, from byte {from}: {}",
                got.len(),
                excerpt(got, from)
            ),
        ))
    }

    /// One line: `what: expected X, got Y`.
    pub fn render(&self) -> String {
        format!(
            "{}: expected {}, got {}",
            self.what, self.expected, self.got
        )
    }
}

fn excerpt(b: &[u8], from: usize) -> String {
    let end = (from + EXCERPT).min(b.len());
    let from = from.min(end);
    let mut s = quote(&b[from..end]);
    if end < b.len() {
        s.push('…');
    }
    s
}

/// Bytes as a quoted, escaped string (`"Hello\r\n"`).
pub fn quote(b: &[u8]) -> String {
    let mut s = String::from("\"");
    for &c in b {
        match c {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_bodies_have_no_diff() {
        assert_eq!(Diff::bytes("body", b"abc", b"abc"), None);
    }

    #[test]
    fn short_bodies_are_shown_whole_and_escaped() {
        let d = Diff::bytes("body", b"Hello World!", b"Hello\r\n").unwrap();
        assert_eq!(
            d.render(),
            r#"body: expected "Hello World!", got "Hello\r\n""#
        );
    }

    #[test]
    fn long_bodies_name_the_first_differing_offset() {
        let expected = vec![b'a'; 1000];
        let mut got = expected.clone();
        got[700] = b'z';
        let d = Diff::bytes("body", &expected, &got).unwrap();
        assert!(d.what.contains("byte 700"), "{}", d.what);
        assert!(
            d.got.starts_with("1000 bytes, from byte 692: \"aaaaaaaaz"),
            "{}",
            d.got
        );
    }

    #[test]
    fn a_truncated_body_differs_at_its_length() {
        let expected = vec![b'a'; 100];
        let d = Diff::bytes("body", &expected, &expected[..60]).unwrap();
        assert!(d.what.contains("byte 60"), "{}", d.what);
    }
}
