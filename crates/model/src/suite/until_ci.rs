//! A suite's `until_ci = "5%"`, `min_laps` and `max_laps` (the defaults of `run --until-ci`):
//! the percent parsing and the rule they make.

use super::Suite;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `max_laps` when only `until_ci` is given: three times the suite's laps.
const DEFAULT_MAX_FACTOR: u32 = 3;

/// Laps below which a cell's interval is only its range: no cell is judged before.
pub const MIN_JUDGED_LAPS: u32 = 3;

/// The bounds of `until_ci` as a run applies them (the arithmetic of the rule is
/// `serverbench_analysis::until_ci`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Target half-width of the 95% interval of the median, percent of the median.
    pub pct: f64,
    /// Laps every cell runs before it is judged (at least [`MIN_JUDGED_LAPS`]).
    pub min_laps: u32,
    /// Laps after which a cell stops, clear or not (at least `min_laps`).
    pub max_laps: u32,
}

impl StopRule {
    /// The rule with its bounds made sane.
    pub fn new(pct: f64, min_laps: u32, max_laps: u32) -> StopRule {
        let min_laps = min_laps.max(MIN_JUDGED_LAPS);
        StopRule {
            pct,
            min_laps,
            max_laps: max_laps.max(min_laps),
        }
    }
}

impl Suite {
    /// The stopping rule of `until_ci`: at least `min_laps` (default: `laps`), at most
    /// `max_laps` (default: three times `laps`); `None`: a fixed number of laps.
    pub fn until_ci_rule(&self) -> Option<StopRule> {
        let pct = self.until_ci?;
        let min = self.min_laps.unwrap_or(self.laps);
        let max = self
            .max_laps
            .unwrap_or(self.laps.saturating_mul(DEFAULT_MAX_FACTOR));
        Some(StopRule::new(pct, min, max))
    }

    /// The rounds the plan lays out: `laps`, or `max_laps` under `until_ci` (the rounds past
    /// the minimum run only for the cells whose interval is still too wide).
    pub fn planned_laps(&self) -> u32 {
        self.until_ci_rule().map_or(self.laps, |r| r.max_laps)
    }
}

/// An `until_ci` (or `--until-ci`) percent that is not one (the text given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a percent between 0 and 100 (e.g. \"5%\")")]
pub struct BadPct(pub String);

/// A percent written `"5%"`, `"5"` or `5`.
pub fn parse_pct(text: &str) -> Result<f64, BadPct> {
    let t = text.trim().trim_end_matches('%').trim();
    match t.parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(p),
        _ => Err(BadPct(text.to_string())),
    }
}

/// Serde for `until_ci`: a percent as text or a number.
pub mod pct {
    use super::*;

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Text(String),
        Number(f64),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        let text = match Option::<Raw>::deserialize(d)? {
            None => return Ok(None),
            Some(Raw::Text(t)) => t,
            Some(Raw::Number(n)) => n.to_string(),
        };
        parse_pct(&text).map(Some).map_err(serde::de::Error::custom)
    }

    pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(p) => s.serialize_str(&format!("{p}%")),
            None => s.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percents_read_with_or_without_the_sign_and_zero_is_refused() {
        assert_eq!(parse_pct("5%"), Ok(5.0));
        assert_eq!(parse_pct(" 2.5 "), Ok(2.5));
        assert!(parse_pct("0%").is_err() && parse_pct("five").is_err());
    }
}
