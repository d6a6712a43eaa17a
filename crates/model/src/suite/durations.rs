//! How suites write durations (`500ms`, `2s`, `1.5s`): seconds in, text out, and the serde
//! adapters of the suite's duration keys.

use crate::duration::{format_duration, parse_duration, BadDuration};
use std::time::Duration;

/// Seconds from a suite's duration text, in the one grammar of
/// [`crate::duration::parse_duration`].
pub(super) fn seconds(text: &str) -> Result<f64, BadDuration> {
    parse_duration(text).map(|d| d.as_secs_f64())
}

/// Seconds written the way suites write them (`500ms`, `2s`, `1.5s`).
pub(super) fn duration_text(seconds: f64) -> String {
    format_duration(Duration::try_from_secs_f64(seconds).unwrap_or_default())
}

/// `d` times `factor`, to the millisecond (so labels read `18s`, not `17.999999s`).
pub(super) fn scaled(d: f64, factor: f64) -> f64 {
    (d * factor * 1000.0).round() / 1000.0
}

pub(super) mod duration {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::duration_text(*v))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let text = String::deserialize(d)?;
        super::seconds(&text).map_err(serde::de::Error::custom)
    }
}

pub(super) mod opt_duration {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_str(&super::duration_text(*v)),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        let text = String::deserialize(d)?;
        super::seconds(&text)
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}
