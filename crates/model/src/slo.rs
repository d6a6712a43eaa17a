//! A service-level objective: the latency and error goals a capacity search (`serverbench load
//! --find-max --slo …`, a suite's `find_max = { slo = "…" }`) holds a server to.
//!
//! Written `p99<=5ms,errors<=0.1%`: goals separated by commas, each a measure, `<=` (or `<`,
//! read the same) and a limit. Measures: `p50`, `p90`, `p99`, `p99.9` (latency, a duration in
//! the one grammar of [`crate::parse_duration`]) and `errors` (a percentage of the requests).
//! Parsed here and only here.

use crate::duration::{parse_duration, BadDuration};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// What a goal measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Measure {
    P50,
    P90,
    P99,
    P999,
    /// Failed requests, as a share of all requests (successes plus errors).
    Errors,
}

impl Measure {
    /// Every measure, as the SLO grammar spells it.
    pub const ALL: [Measure; 5] = [
        Measure::P50,
        Measure::P90,
        Measure::P99,
        Measure::P999,
        Measure::Errors,
    ];

    /// The spelling in an SLO.
    pub fn as_str(self) -> &'static str {
        match self {
            Measure::P50 => "p50",
            Measure::P90 => "p90",
            Measure::P99 => "p99",
            Measure::P999 => "p99.9",
            Measure::Errors => "errors",
        }
    }

    /// The latency quantile this measure reads (`None` for errors).
    pub fn quantile(self) -> Option<f64> {
        match self {
            Measure::P50 => Some(0.5),
            Measure::P90 => Some(0.9),
            Measure::P99 => Some(0.99),
            Measure::P999 => Some(0.999),
            Measure::Errors => None,
        }
    }
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One goal: `measure <= limit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Goal {
    pub measure: Measure,
    /// Microseconds for a latency, percent for errors.
    pub limit: f64,
}

impl Goal {
    /// The limit as the SLO writes it (`5ms`, `0.1%`).
    pub fn limit_text(&self) -> String {
        match self.measure {
            Measure::Errors => format!("{}%", self.limit),
            _ => micros(self.limit),
        }
    }
}

/// `5ms`, `250us`, `1.5s`: microseconds in the largest unit that keeps them short.
pub fn micros(us: f64) -> String {
    if us >= 1_000_000.0 {
        format!("{}s", trim(us / 1_000_000.0))
    } else if us >= 1000.0 {
        format!("{}ms", trim(us / 1000.0))
    } else {
        format!("{}us", trim(us))
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl fmt::Display for Goal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}<={}", self.measure, self.limit_text())
    }
}

/// The figures of one measured step that goals are judged on.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Observed {
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// Percent of requests that failed.
    pub errors_pct: f64,
}

impl Observed {
    /// The value of `m` (µs or percent).
    pub fn get(&self, m: Measure) -> f64 {
        match m {
            Measure::P50 => self.p50_us,
            Measure::P90 => self.p90_us,
            Measure::P99 => self.p99_us,
            Measure::P999 => self.p999_us,
            Measure::Errors => self.errors_pct,
        }
    }
}

/// A whole SLO: every goal must hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Slo {
    pub goals: Vec<Goal>,
}

impl Slo {
    /// The goals `o` misses, each as `p99 7.2ms > 5ms` (empty: the SLO is met).
    pub fn misses(&self, o: &Observed) -> Vec<String> {
        self.goals
            .iter()
            .filter(|g| o.get(g.measure) > g.limit)
            .map(|g| {
                let got = match g.measure {
                    Measure::Errors => format!("{:.3}%", o.errors_pct),
                    m => micros(o.get(m)),
                };
                format!("{} {got} > {}", g.measure, g.limit_text())
            })
            .collect()
    }

    /// The highest latency quantile any goal reads (`None`: errors only).
    pub fn top_quantile(&self) -> Option<f64> {
        self.goals
            .iter()
            .filter_map(|g| g.measure.quantile())
            .reduce(f64::max)
    }
}

/// An SLO that does not parse; the caller names the flag or key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BadSlo {
    #[error("the SLO is empty; write goals like `p99<=5ms,errors<=0.1%`")]
    Empty,
    #[error("`{0}` is not a goal like `p99<=5ms` or `errors<=0.1%` (measure, `<=`, limit)")]
    NoComparison(String),
    #[error("`{0}` is not a measure; measures are p50, p90, p99, p99.9 and errors")]
    UnknownMeasure(String),
    #[error("`{goal}`: {why}")]
    BadLatency { goal: String, why: BadDuration },
    #[error("`{0}`: the errors limit is a percentage from 0 to 100, like `0.1%`")]
    BadPercent(String),
    #[error("`{0}`: a latency limit must be above zero")]
    ZeroLatency(String),
    #[error("`{0}` is given twice")]
    Repeated(String),
}

impl FromStr for Slo {
    type Err = BadSlo;

    fn from_str(text: &str) -> Result<Slo, BadSlo> {
        let mut goals: Vec<Goal> = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let goal = parse_goal(part)?;
            if goals.iter().any(|g| g.measure == goal.measure) {
                return Err(BadSlo::Repeated(goal.measure.to_string()));
            }
            goals.push(goal);
        }
        if goals.is_empty() {
            return Err(BadSlo::Empty);
        }
        goals.sort_by_key(|g| g.measure);
        Ok(Slo { goals })
    }
}

fn parse_goal(part: &str) -> Result<Goal, BadSlo> {
    let (name, limit) = part
        .split_once("<=")
        .or_else(|| part.split_once('<'))
        .ok_or_else(|| BadSlo::NoComparison(part.to_string()))?;
    let name = name.trim().to_ascii_lowercase();
    let measure = Measure::ALL
        .into_iter()
        .find(|m| m.as_str() == name || (name == "p999" && *m == Measure::P999))
        .ok_or_else(|| BadSlo::UnknownMeasure(name.clone()))?;
    let limit = limit.trim();
    let limit = match measure {
        Measure::Errors => limit
            .strip_suffix('%')
            .and_then(|n| n.trim().parse::<f64>().ok())
            .filter(|p| (0.0..=100.0).contains(p))
            .ok_or_else(|| BadSlo::BadPercent(part.to_string()))?,
        _ => {
            let d = parse_duration(limit).map_err(|why| BadSlo::BadLatency {
                goal: part.to_string(),
                why,
            })?;
            if d.is_zero() {
                return Err(BadSlo::ZeroLatency(part.to_string()));
            }
            d.as_secs_f64() * 1e6
        }
    };
    Ok(Goal { measure, limit })
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let goals: Vec<String> = self.goals.iter().map(Goal::to_string).collect();
        f.write_str(&goals.join(","))
    }
}

impl Serialize for Slo {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Slo {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Slo, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latency_and_an_error_goal_parse_into_microseconds_and_percent() {
        let slo: Slo = "p99<=5ms, errors<=0.1%".parse().unwrap();
        assert_eq!(
            slo.goals,
            vec![
                Goal {
                    measure: Measure::P99,
                    limit: 5000.0
                },
                Goal {
                    measure: Measure::Errors,
                    limit: 0.1
                }
            ]
        );
        assert_eq!(slo.to_string(), "p99<=5ms,errors<=0.1%");
    }

    #[test]
    fn every_measure_round_trips_through_its_text() {
        let slo: Slo = "p50<=1ms,p90<=2ms,p99<=3ms,p99.9<=250us,errors<=1%"
            .parse()
            .unwrap();
        assert_eq!(slo.goals.len(), 5);
        assert_eq!(slo.to_string().parse::<Slo>().unwrap(), slo);
        assert_eq!(slo.top_quantile(), Some(0.999));
    }

    #[test]
    fn bad_slos_say_what_is_wrong() {
        let cases = [
            ("", "empty"),
            ("p99=5ms", "not a goal"),
            ("p95<=5ms", "p95` is not a measure"),
            ("p99<=fast", "not a duration"),
            ("p99<=0ms", "above zero"),
            ("errors<=0.1", "percentage"),
            ("errors<=120%", "percentage"),
            ("p99<=5ms,p99<=6ms", "twice"),
        ];
        for (text, needle) in cases {
            let err = text.parse::<Slo>().unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn misses_name_each_goal_that_failed_with_its_figure() {
        let slo: Slo = "p99<=5ms,errors<=0.1%".parse().unwrap();
        let fine = Observed {
            p99_us: 4000.0,
            errors_pct: 0.0,
            ..Observed::default()
        };
        assert!(slo.misses(&fine).is_empty());
        let slow = Observed {
            p99_us: 7200.0,
            errors_pct: 0.5,
            ..Observed::default()
        };
        assert_eq!(
            slo.misses(&slow),
            vec!["p99 7.2ms > 5ms".to_string(), "errors 0.500% > 0.1%".into()]
        );
    }
}
