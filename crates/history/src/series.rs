//! Series: the runs of one cell (server x scenario x profile x transport) on one testbed with
//! one set of load settings, in time order. Series are never pooled across testbeds or
//! settings: a different machine or a different connection count is a different series.

use crate::db::{History, HistoryError};
use serde::{Deserialize, Serialize};
use serverbench_analysis::stats;
use std::fmt;

/// What a series measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Requests per second of a lap (bigger is better).
    Rps,
    /// The lap's 99th percentile latency in microseconds (smaller is better).
    P99,
    /// What a request cost: CPU µs per request of the server's process tree plus the
    /// database's where one ran (smaller is better). Recorded only where it answers the cost
    /// question: laps at a fixed rate (`rate = …`, where every server does the same work per
    /// second) and capacity searches (`find_max`, the server's CPU at its capacity step). A
    /// closed-loop lap's CPU per request is about one core over its req/s, which `rps`
    /// already judges.
    Cpu,
}

impl Measure {
    /// Every measure, in table order.
    pub const ALL: [Measure; 3] = [Measure::Rps, Measure::P99, Measure::Cpu];

    /// Whether a larger value is an improvement.
    pub fn bigger_is_better(self) -> bool {
        matches!(self, Measure::Rps)
    }

    /// The unit in tables and tracker formats.
    pub fn unit(self) -> &'static str {
        match self {
            Measure::Rps => "req/s",
            Measure::P99 => "µs",
            Measure::Cpu => "µs/req",
        }
    }

    /// A short name: `rps`, `p99`, `cpu`.
    pub fn key(self) -> &'static str {
        match self {
            Measure::Rps => "rps",
            Measure::P99 => "p99",
            Measure::Cpu => "cpu",
        }
    }
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A cell of a run: what was measured.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CellKey {
    /// Catalog id or the user's server name.
    pub server: String,
    /// Scenario name.
    pub scenario: String,
    /// Profile label.
    pub profile: String,
    /// `h1`, `https`, `h2`, `h2c`, with `new-conn`, `resume=...`, `mN` as they apply.
    pub transport: String,
}

impl fmt::Display for CellKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {}",
            self.server, self.scenario, self.profile, self.transport
        )
    }
}

/// One series: a cell on a testbed with one set of settings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct SeriesKey {
    /// The testbed's fingerprint (hex).
    pub testbed: String,
    /// The cell.
    pub cell: CellKey,
    /// Hash of the lap's load settings (tool, parameters, warm-up).
    pub settings: String,
}

impl SeriesKey {
    /// `server scenario profile transport` (what `history show` matches against).
    pub fn label(&self) -> String {
        self.cell.to_string()
    }

    /// Whether every word of `pattern` names one of the cell's fields.
    pub fn matches(&self, pattern: &str) -> bool {
        let c = &self.cell;
        let fields = [&c.server, &c.scenario, &c.profile, &c.transport];
        pattern
            .split_whitespace()
            .all(|w| fields.iter().any(|f| f.as_str() == w))
    }
}

/// The median and interval of one measure in one cell of one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Median over the laps.
    pub median: f64,
    /// Bootstrap interval of the median (the range with fewer than three laps).
    pub low: f64,
    pub high: f64,
}

impl Estimate {
    /// The median and its bootstrap interval over `laps`; `None` when there are none.
    pub fn of(laps: &[f64], seed_key: &str) -> Option<Estimate> {
        let median = stats::median(laps)?;
        let i = stats::bootstrap_median_ci(
            laps,
            stats::DEFAULT_CONFIDENCE,
            stats::DEFAULT_RESAMPLES,
            stats::seed_for(seed_key),
        )?;
        Some(Estimate {
            median,
            low: i.low,
            high: i.high,
        })
    }
}

/// Per measure, as stored in a cell's `stats` column (`cpu` absent in cells of schema 2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CellStats {
    pub rps: Option<Estimate>,
    pub p99: Option<Estimate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Estimate>,
}

impl CellStats {
    /// The estimate of `m`.
    pub fn get(&self, m: Measure) -> Option<Estimate> {
        match m {
            Measure::Rps => self.rps,
            Measure::P99 => self.p99,
            Measure::Cpu => self.cpu,
        }
    }

    /// Computed from the laps, per measure.
    pub fn of(laps: &LapSeries, seed_key: &str) -> CellStats {
        let e = |m: Measure| Estimate::of(laps.get(m), &format!("{seed_key}/{m}"));
        CellStats {
            rps: e(Measure::Rps),
            p99: e(Measure::P99),
            cpu: e(Measure::Cpu),
        }
    }
}

/// The successful laps' values, per measure (a lap without a value is left out of that
/// measure only).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LapSeries {
    /// Req/s.
    pub rps: Vec<f64>,
    /// p99 in µs.
    pub p99: Vec<f64>,
    /// CPU µs per request (see [`Measure::Cpu`]).
    pub cpu: Vec<f64>,
}

impl LapSeries {
    /// The laps of `m`.
    pub fn get(&self, m: Measure) -> &[f64] {
        match m {
            Measure::Rps => &self.rps,
            Measure::P99 => &self.p99,
            Measure::Cpu => &self.cpu,
        }
    }
}

/// One run of a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// The run's id in the history.
    pub run: i64,
    /// When it started (RFC 3339 UTC).
    pub started_at: String,
    /// The source it measured.
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub dirty: Option<bool>,
    /// Per-lap req/s, p99 (µs) and CPU µs/request of the successful laps.
    #[serde(flatten)]
    pub laps: LapSeries,
    /// Medians and intervals.
    pub stats: CellStats,
    /// The cell's merged latency histogram (V2, base64), when the tool gave one.
    pub histogram: Option<String>,
    /// The fewest requests of any of its laps (`None` for laps recorded before history
    /// schema 4, which kept no count).
    pub fewest_requests: Option<u64>,
}

impl Point {
    /// The laps of `m`.
    pub fn laps(&self, m: Measure) -> &[f64] {
        self.laps.get(m)
    }

    /// `abc1234` or `run 12`.
    pub fn label(&self) -> String {
        match &self.commit {
            Some(c) => c.chars().take(7).collect(),
            None => format!("run {}", self.run),
        }
    }
}

impl History {
    /// Every series, sorted by testbed, cell and settings.
    pub fn series_keys(&self) -> Result<Vec<SeriesKey>, HistoryError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT DISTINCT t.fingerprint, c.server, c.scenario, c.profile, c.transport,
                        c.settings_hash
                 FROM cells c JOIN runs r ON r.id = c.run_id JOIN testbeds t ON t.id = r.testbed_id
                 ORDER BY 1, 2, 3, 4, 5, 6",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                Ok(SeriesKey {
                    testbed: r.get(0)?,
                    cell: CellKey {
                        server: r.get(1)?,
                        scenario: r.get(2)?,
                        profile: r.get(3)?,
                        transport: r.get(4)?,
                    },
                    settings: r.get(5)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The runs of one series, oldest first.
    pub fn series(&self, key: &SeriesKey) -> Result<Vec<Point>, HistoryError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT c.id, r.id, r.started_at, r.git_commit, r.branch, r.dirty, c.stats,
                        c.histogram,
                        (SELECT group_concat(coalesce(l.rps, ''), ' ') FROM laps l
                         WHERE l.cell_id = c.id),
                        (SELECT group_concat(coalesce(l.p99_us, ''), ' ') FROM laps l
                         WHERE l.cell_id = c.id),
                        (SELECT group_concat(coalesce(l.cpu_us, ''), ' ') FROM laps l
                         WHERE l.cell_id = c.id),
                        (SELECT min(l.requests) FROM laps l WHERE l.cell_id = c.id)
                 FROM cells c JOIN runs r ON r.id = c.run_id JOIN testbeds t ON t.id = r.testbed_id
                 WHERE t.fingerprint = ?1 AND c.server = ?2 AND c.scenario = ?3
                   AND c.profile = ?4 AND c.transport = ?5 AND c.settings_hash = ?6
                 ORDER BY r.started_at, r.id",
            )
            .map_err(|e| self.err(e))?;
        let c = &key.cell;
        let params = rusqlite::params![
            key.testbed,
            c.server,
            c.scenario,
            c.profile,
            c.transport,
            key.settings
        ];
        let rows = st
            .query_map(params, |r| {
                let cell: i64 = r.get(0)?;
                let stats: Option<String> = r.get(6)?;
                let laps = LapSeries {
                    rps: numbers(r.get::<_, Option<String>>(8)?),
                    p99: numbers(r.get::<_, Option<String>>(9)?),
                    cpu: numbers(r.get::<_, Option<String>>(10)?),
                };
                let stats = stats
                    .and_then(|s| serde_json::from_str(&s).ok())
                    .unwrap_or_else(|| CellStats::of(&laps, &format!("cell/{cell}")));
                Ok(Point {
                    run: r.get(1)?,
                    started_at: r.get(2)?,
                    commit: r.get(3)?,
                    branch: r.get(4)?,
                    dirty: r.get(5)?,
                    laps,
                    stats,
                    histogram: r.get(7)?,
                    fewest_requests: r.get(11)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The series whose cell matches every word of `pattern` (see [`SeriesKey::matches`]).
    pub fn find_series(&self, pattern: &str) -> Result<Vec<SeriesKey>, HistoryError> {
        let found: Vec<SeriesKey> = self
            .series_keys()?
            .into_iter()
            .filter(|k| k.matches(pattern))
            .collect();
        if found.is_empty() {
            return Err(HistoryError::NotFound(format!(
                "{}: no series matches `{pattern}` (see `serverbench history list`)",
                self.path.display()
            )));
        }
        Ok(found)
    }
}

fn numbers(text: Option<String>) -> Vec<f64> {
    text.unwrap_or_default()
        .split(' ')
        .filter_map(|s| s.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_matches_whole_fields_only() {
        let key = SeriesKey {
            testbed: "t".into(),
            cell: CellKey {
                server: "node/http".into(),
                scenario: "hello".into(),
                profile: "c100".into(),
                transport: "h1".into(),
            },
            settings: "s".into(),
        };
        assert!(key.matches("node/http hello"));
        assert!(key.matches("c100"));
        assert!(!key.matches("node"));
        assert!(!key.matches("node/http routes"));
    }
}
