//! Whether a load's server answered: the one judgment that fails a lap (local or over
//! `--hosts`) which measured nothing about its server, instead of recording `0 req/s` as ok,
//! and that makes `serverbench load` exit non-zero when nothing was answered.
//!
//! Three rules, the first that applies wins:
//! - **no answer**: nothing was answered in the measured window (with or without errors);
//! - **outnumbered**: more requests were still in flight at its end than were answered: the
//!   figures are those of a server that had barely begun to answer;
//! - **stall**: answers stopped part-way, with no answer at all for longer than
//!   max(1 s, 10 x the p99, 10 x the mean interval between sends at a fixed rate): longer than
//!   its own latency (or a slow schedule) explains.
//!
//! Other load tools report neither what was in flight nor when answers stopped: for them only
//! the first rule applies. A TCP stream has no answers to time: only the first rule, on bytes.

use crate::failure::{FailureKind, LapFailure};
use crate::result::{LoadResult, Mode, Silence};

/// No answer for longer than this is a stall, whatever the latency.
pub const STALL_FLOOR_S: f64 = 1.0;
/// ... or for longer than this many times the p99 (or the mean interval between sends).
pub const STALL_FACTOR: f64 = 10.0;

/// What a load answered, from whichever tool measured it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Answers<'a> {
    pub mode: Mode,
    /// Requests (messages) answered in the measured window, whatever their status.
    pub answered: u64,
    /// Errors of every kind in the window.
    pub errors: u64,
    /// Sent and unanswered at its end (`None`: the tool does not say).
    pub in_flight: Option<u64>,
    /// The measured window's length.
    pub seconds: f64,
    pub p99_us: Option<f64>,
    /// `-R`: the requests per second asked for.
    pub rate: Option<f64>,
    /// The window's silences (empty: none, or the tool does not say).
    pub silences: &'a [Silence],
}

impl<'a> Answers<'a> {
    /// What the engine's result says.
    pub fn of(r: &'a LoadResult) -> Answers<'a> {
        Answers {
            mode: r.mode(),
            answered: r.requests,
            errors: r.errors.total(),
            in_flight: Some(r.in_flight_at_end),
            seconds: r.duration_s,
            p99_us: (r.requests > 0).then_some(r.latency_us.p99),
            rate: r.rate_target,
            silences: &r.silences,
        }
    }

    /// The longest silence that is not a stall.
    pub fn stall_threshold_s(&self) -> f64 {
        let p99_s = self.p99_us.unwrap_or(0.0) / 1e6;
        let interval_s = self.rate.filter(|r| *r > 0.0).map_or(0.0, |r| 1.0 / r);
        STALL_FLOOR_S.max(STALL_FACTOR * p99_s.max(interval_s))
    }
}

/// Why a load measured nothing (or too little) about its server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AnswerFault {
    /// Nothing answered in the window.
    NoAnswer {
        seconds: f64,
        in_flight: Option<u64>,
        errors: u64,
        unit: &'static str,
    },
    /// More in flight at the end than answered.
    Outnumbered {
        seconds: f64,
        in_flight: u64,
        answered: u64,
        unit: &'static str,
    },
    /// No answer at all through `silence`.
    Stall {
        silence: Silence,
        seconds: f64,
        p99_us: Option<f64>,
    },
}

/// The first rule `a` breaks, if any.
pub fn judge(a: &Answers) -> Option<AnswerFault> {
    let unit = match a.mode {
        crate::Mode::Grpc => "calls",
        m if m.counts_messages() => "messages",
        _ => "requests",
    };
    if a.answered == 0 {
        return Some(AnswerFault::NoAnswer {
            seconds: a.seconds,
            in_flight: a.in_flight.filter(|_| !a.mode.is_stream()),
            errors: a.errors,
            unit,
        });
    }
    if a.mode.is_stream() {
        return None;
    }
    if let Some(in_flight) = a.in_flight.filter(|&n| n > a.answered) {
        return Some(AnswerFault::Outnumbered {
            seconds: a.seconds,
            in_flight,
            answered: a.answered,
            unit,
        });
    }
    let longest = Silence::longest(a.silences)?;
    (longest.seconds() > a.stall_threshold_s()).then_some(AnswerFault::Stall {
        silence: longest,
        seconds: a.seconds,
        p99_us: a.p99_us,
    })
}

impl AnswerFault {
    /// The failure kind it makes.
    pub fn kind(&self) -> FailureKind {
        match self {
            AnswerFault::NoAnswer { .. } | AnswerFault::Outnumbered { .. } => FailureKind::NoAnswer,
            AnswerFault::Stall { .. } => FailureKind::Stall,
        }
    }

    /// The failure of a lap it makes (without a log tail).
    pub fn failure(&self) -> LapFailure {
        LapFailure::new(self.kind(), self.describe("lap"))
    }

    /// One line saying so, the window called `span` (`lap`, `run`).
    pub fn describe(&self, span: &str) -> String {
        match *self {
            AnswerFault::NoAnswer {
                seconds,
                in_flight,
                errors,
                unit,
            } => {
                let mut parts: Vec<String> = in_flight
                    .filter(|&n| n > 0)
                    .map(|n| format!("{n} {unit} in flight"))
                    .into_iter()
                    .collect();
                if errors > 0 {
                    parts.push(format!("{errors} errors"));
                }
                let head = format!("no answer in the {seconds:.1} s {span}");
                match parts.is_empty() {
                    true => head,
                    false => format!("{head}: {}", parts.join(", ")),
                }
            }
            AnswerFault::Outnumbered {
                seconds,
                in_flight,
                answered,
                unit,
            } => format!(
                "{in_flight} {unit} still in flight at the end of the {seconds:.1} s {span}, \
                 more than the {answered} answered"
            ),
            AnswerFault::Stall {
                silence,
                seconds,
                p99_us,
            } => {
                let p99 = p99_us.map_or(String::new(), |us| format!(" (p99 {})", latency(us)));
                format!(
                    "stall: no answer for {:.1} s of the {seconds:.1} s {span}, from {:.1} s{p99}",
                    silence.seconds(),
                    silence.from_s
                )
            }
        }
    }
}

impl std::fmt::Display for AnswerFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe("lap"))
    }
}

/// A latency in its unit: `850 µs`, `1.1 ms`, `2.30 s`.
fn latency(us: f64) -> String {
    if us < 1e3 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(answered: u64, in_flight: Option<u64>, silences: &[Silence]) -> Answers<'_> {
        Answers {
            mode: Mode::Http,
            answered,
            errors: 0,
            in_flight,
            seconds: 5.0,
            p99_us: Some(1100.0),
            rate: None,
            silences,
        }
    }

    fn silence(from_s: f64, to_s: f64) -> [Silence; 1] {
        [Silence { from_s, to_s }]
    }

    #[test]
    fn a_lap_without_an_answer_fails_naming_what_was_in_flight() {
        let mut a = answers(0, Some(64), &[]);
        a.seconds = 1.0;
        let fault = judge(&a).unwrap();
        assert_eq!(fault.kind(), FailureKind::NoAnswer);
        assert_eq!(
            fault.to_string(),
            "no answer in the 1.0 s lap: 64 requests in flight"
        );
        a.in_flight = Some(0);
        assert_eq!(judge(&a).unwrap().to_string(), "no answer in the 1.0 s lap");
        a.in_flight = None;
        a.errors = 3;
        assert_eq!(
            judge(&a).unwrap().describe("run"),
            "no answer in the 1.0 s run: 3 errors"
        );
    }

    #[test]
    fn more_in_flight_than_answered_fails_and_as_many_does_not() {
        let fault = judge(&answers(12, Some(64), &[])).unwrap();
        assert_eq!(fault.kind(), FailureKind::NoAnswer);
        assert!(fault.to_string().contains("64 requests still in flight"));
        assert_eq!(judge(&answers(64, Some(64), &[])), None);
    }

    #[test]
    fn a_silence_longer_than_a_second_and_ten_p99s_is_a_stall() {
        let stalled = silence(1.8, 5.0);
        let fault = judge(&answers(1000, Some(64), &stalled)).unwrap();
        assert_eq!(fault.kind(), FailureKind::Stall);
        assert_eq!(
            fault.to_string(),
            "stall: no answer for 3.2 s of the 5.0 s lap, from 1.8 s (p99 1.1 ms)"
        );
        let short = silence(1.0, 1.9);
        assert_eq!(judge(&answers(1000, Some(64), &short)), None);
    }

    #[test]
    fn a_slow_server_or_a_slow_schedule_raises_the_stall_threshold() {
        let long = silence(0.0, 3.0);
        let mut slow = answers(1000, Some(64), &long);
        slow.p99_us = Some(400_000.0);
        assert_eq!(slow.stall_threshold_s(), 4.0);
        assert_eq!(judge(&slow), None, "3 s without an answer at p99 400 ms");
        let mut sparse = answers(10, Some(1), &long);
        sparse.rate = Some(2.0);
        assert_eq!(judge(&sparse), None, "a request every 500 ms");
    }

    #[test]
    fn a_stream_is_judged_only_by_whether_anything_came_back() {
        let mut a = answers(0, Some(0), &[]);
        a.mode = Mode::TcpStream;
        assert_eq!(judge(&a).unwrap().to_string(), "no answer in the 5.0 s lap");
        a.answered = 10;
        let whole = silence(0.0, 5.0);
        a.silences = &whole;
        assert_eq!(judge(&a), None);
    }

    #[test]
    fn other_tools_are_judged_by_the_zero_answer_rule_only() {
        assert_eq!(judge(&answers(3, None, &[])), None);
        assert!(judge(&answers(0, None, &[])).is_some());
    }
}
