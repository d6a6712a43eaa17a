//! The one duration grammar of the CLI flags, the suites and the engine (humantime's, plus a
//! bare number meaning seconds), and the one formatter suites and profile labels use.

use std::time::Duration;

/// A duration that does not parse; the caller names the flag or the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{text}` is not a duration like 500ms, 1.5s, 10s or 1m: {why}")]
pub struct BadDuration {
    /// What was given.
    pub text: String,
    why: humantime::DurationError,
}

/// The one duration grammar of the CLI flags, the suites and the engine: humantime's
/// (`250us`, `500ms`, `1.5s`, `10s`, `1m`, `2h`, `1m 30s`), plus a bare number meaning seconds
/// (`3`, `0.5`).
pub fn parse_duration(text: &str) -> Result<Duration, BadDuration> {
    let s = text.trim();
    let bare = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let parsed = if bare {
        humantime::parse_duration(&format!("{s}s"))
    } else {
        humantime::parse_duration(s)
    };
    parsed.map_err(|why| BadDuration {
        text: text.to_string(),
        why,
    })
}

/// The one duration formatter: `500ms` under a second, else seconds with up to three
/// decimals (`2s`, `1.5s`), rounded to the millisecond. It is what suites write and what
/// profile labels (`100conn/10s`) and so recorded scenario names are made of, and
/// [`parse_duration`] reads it back.
pub fn format_duration(d: Duration) -> String {
    let ms = (d.as_nanos() + 500_000) / 1_000_000;
    if d < Duration::from_secs(1) {
        return format!("{ms}ms");
    }
    let (secs, frac) = (ms / 1000, ms % 1000);
    if frac == 0 {
        format!("{secs}s")
    } else {
        let frac = format!("{frac:03}");
        format!("{secs}.{}s", frac.trim_end_matches('0'))
    }
}

/// Serde for a [`Duration`] written as text (`"2s"`, `"250us"`, exact: humantime's spelling)
/// and read in the one grammar of [`parse_duration`]: `#[serde(with = "duration::text")]`.
pub mod text {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_duration(*d))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_duration(&text).map_err(serde::de::Error::custom)
    }
}

/// [`text`] for an optional duration (`null` when absent).
pub mod opt_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.collect_str(&humantime::format_duration(*d)),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(text) => super::parse_duration(&text)
                .map(Some)
                .map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_accept_common_units() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert!(parse_duration("ten").is_err());
    }

    #[test]
    fn a_bare_number_is_seconds_and_decimals_work_with_or_without_a_unit() {
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration(" 0.5 "), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1m 30s"), Ok(Duration::from_secs(90)));
    }

    #[test]
    fn a_bad_duration_quotes_what_was_given() {
        for text in ["s", "", "1 fortnight", "-1s", "1.", "5 apples"] {
            let err = parse_duration(text).unwrap_err();
            assert!(
                err.to_string().starts_with(&format!("`{text}` is not")),
                "{err}"
            );
        }
    }

    #[test]
    fn durations_format_the_way_suites_write_them_and_read_back() {
        let cases = [
            (500, "500ms"),
            (10_000, "10s"),
            (1_500, "1.5s"),
            (1_250, "1.25s"),
        ];
        for (ms, text) in cases {
            let d = Duration::from_millis(ms);
            assert_eq!(format_duration(d), text);
            assert_eq!(parse_duration(text), Ok(d));
        }
        assert_eq!(format_duration(Duration::from_secs(60)), "60s");
        assert_eq!(format_duration(Duration::from_micros(999_600)), "1000ms");
    }
}
