//! Why a lap failed, typed: what went wrong ([`FailureKind`]), one line saying so and the
//! server's log tail. Records written before it held one string; they still read (as
//! [`FailureKind::Unknown`], the first line as the detail and the rest as the log tail) and
//! display as they were written.

use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// What went wrong in a failed lap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The server did not start, or did not answer on its ports in time.
    Start,
    /// The server failed the contract check before its first lap.
    Contract,
    /// The warm-up load failed.
    Warmup,
    /// The load tool failed, or produced no result.
    Load,
    /// The server exited during the lap.
    ServerExited,
    /// The database (serverbench's PostgreSQL) could not start, or died during the lap.
    Database,
    /// A machine of a `run --hosts` failed (ssh, the remote tool, the sampler).
    Hosts,
    /// The server answered nothing in the measured window, or fewer requests than it left in
    /// flight at its end (see [`crate::answers`]).
    NoAnswer,
    /// Answers stopped part-way: no answer at all for longer than the lap's latency explains
    /// (see [`crate::answers`]).
    Stall,
    /// The lap was not run (the server was excluded, or had died earlier in this lap).
    NotRun,
    /// Recorded before failures had kinds.
    Unknown,
}

/// Why a lap failed: `failure` in `results.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LapFailure {
    /// What went wrong.
    pub kind: FailureKind,
    /// One line saying so, e.g. `load tool exited with status 1: …`.
    pub detail: String,
    /// The last lines of the server's log, when they were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_tail: Option<String>,
}

impl LapFailure {
    /// A failure without a log tail.
    pub fn new(kind: FailureKind, detail: impl Into<String>) -> LapFailure {
        LapFailure {
            kind,
            detail: detail.into(),
            log_tail: None,
        }
    }

    /// The same with the server's log tail (kept only when it holds something).
    pub fn with_log_tail(mut self, tail: impl Into<String>) -> LapFailure {
        let tail = tail.into();
        self.log_tail = (!tail.trim().is_empty()).then_some(tail);
        self
    }

    /// A failure from a text whose first line says what went wrong and whose other lines are
    /// detail (a log tail, several hosts' faults): how records before this type read.
    pub fn from_text(kind: FailureKind, text: &str) -> LapFailure {
        let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
        LapFailure::new(kind, first).with_log_tail(rest)
    }
}

impl fmt::Display for LapFailure {
    /// The detail, then the log tail under a heading (a failure recorded as one string shows
    /// that string: its heading was part of it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)?;
        match &self.log_tail {
            Some(tail) if self.kind == FailureKind::Unknown => write!(f, "\n{tail}"),
            Some(tail) => write!(f, "\nserver log tail:\n{tail}"),
            None => Ok(()),
        }
    }
}

impl<'de> Deserialize<'de> for LapFailure {
    /// The typed object, or the one string of records written before it.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LapFailure, D::Error> {
        #[derive(Deserialize)]
        struct Typed {
            kind: FailureKind,
            detail: String,
            #[serde(default)]
            log_tail: Option<String>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Typed(Typed),
            Text(String),
        }
        Ok(match Repr::deserialize(d)? {
            Repr::Typed(t) => LapFailure {
                kind: t.kind,
                detail: t.detail,
                log_tail: t.log_tail,
            },
            Repr::Text(text) => LapFailure::from_text(FailureKind::Unknown, &text),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_round_trips_as_an_object_with_its_kind() {
        let f = LapFailure::new(FailureKind::Load, "wrk exited with status 1").with_log_tail("x\n");
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"load","detail":"wrk exited with status 1","log_tail":"x\n"}"#
        );
        assert_eq!(serde_json::from_str::<LapFailure>(&json).unwrap(), f);
    }

    #[test]
    fn a_failure_recorded_as_one_string_reads_with_its_first_line_as_the_detail() {
        let old = "load tool failed: exit status 1\nserver log tail:\nlistening on 8080";
        let f: LapFailure = serde_json::from_value(serde_json::json!(old)).unwrap();
        assert_eq!(f.kind, FailureKind::Unknown);
        assert_eq!(f.detail, "load tool failed: exit status 1");
        assert_eq!(
            f.log_tail.as_deref(),
            Some("server log tail:\nlistening on 8080")
        );
        assert_eq!(f.to_string(), old, "it displays as it was written");
        let typed = LapFailure::new(FailureKind::ServerExited, "server exited (signal 9)");
        assert_eq!(
            typed.with_log_tail("Killed").to_string(),
            "server exited (signal 9)\nserver log tail:\nKilled"
        );
    }

    #[test]
    fn an_empty_log_tail_is_not_kept() {
        let f = LapFailure::new(FailureKind::Start, "no answer on port 8080").with_log_tail(" \n");
        assert_eq!(f.log_tail, None);
        assert_eq!(f.to_string(), "no answer on port 8080");
    }
}
