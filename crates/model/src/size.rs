//! Byte sizes as users write them (`1024`, `500KB`, `1MiB`) and `--body-size`'s range of them
//! (`500KB..20MB`, or one size). Decimal units are powers of 1000 (`KB`, `MB`, `GB`; `K`, `M`,
//! `G` alike), binary ones powers of 1024 (`KiB`, `MiB`, `GiB`), as SI and IEC say.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Why a size or a range did not parse (the text and what is wrong with it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}`: {why}")]
pub struct BadSize {
    pub text: String,
    pub why: String,
}

fn bad(text: &str, why: &str) -> BadSize {
    BadSize {
        text: text.to_string(),
        why: why.to_string(),
    }
}

/// Parses one size: digits, then an optional unit.
pub fn parse_size(text: &str) -> Result<u64, BadSize> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits == 0 {
        return Err(bad(
            text,
            "give a number of bytes, e.g. 1024, 500KB or 1MiB",
        ));
    }
    let n: u64 = t[..digits]
        .parse()
        .map_err(|_| bad(text, "the number is too large"))?;
    let unit = t[digits..].trim();
    let times: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "m" | "mb" => 1000 * 1000,
        "g" | "gb" => 1000 * 1000 * 1000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(bad(text, "unknown unit (B, KB, MB, GB, KiB, MiB, GiB)")),
    };
    n.checked_mul(times)
        .ok_or_else(|| bad(text, "the size is too large"))
}

/// A size written back the shortest exact way: `1MiB`, `500KB`, `1000`.
pub fn format_size(n: u64) -> String {
    let units: [(u64, &str); 6] = [
        (1 << 30, "GiB"),
        (1_000_000_000, "GB"),
        (1 << 20, "MiB"),
        (1_000_000, "MB"),
        (1 << 10, "KiB"),
        (1000, "KB"),
    ];
    for (size, unit) in units {
        if n >= size && n % size == 0 {
            return format!("{}{unit}", n / size);
        }
    }
    n.to_string()
}

/// `--body-size`: the body's size, drawn per request from `min..=max` (one size: equal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeRange {
    pub min: u64,
    pub max: u64,
}

impl FromStr for SizeRange {
    type Err = BadSize;

    /// `A..B` (both included) or one size; a backwards range is refused.
    fn from_str(s: &str) -> Result<SizeRange, BadSize> {
        let (min, max) = match s.split_once("..") {
            Some((a, b)) => (parse_size(a)?, parse_size(b.trim_start_matches('='))?),
            None => {
                let n = parse_size(s)?;
                (n, n)
            }
        };
        if min > max {
            return Err(bad(s, "the range is backwards (give SMALLER..LARGER)"));
        }
        Ok(SizeRange { min, max })
    }
}

impl fmt::Display for SizeRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min == self.max {
            return f.write_str(&format_size(self.min));
        }
        write!(f, "{}..{}", format_size(self.min), format_size(self.max))
    }
}

/// In JSON as the flag writes it: `"500KB..20MB"`.
impl Serialize for SizeRange {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SizeRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SizeRange, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// An optional size in a suite or a record: written back as [`format_size`] text (`"16KiB"`),
/// read from that text or from a plain number of bytes (`chunk_size = 16384`).
pub mod opt_text {
    use super::{format_size, parse_size};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(n) => s.serialize_str(&format_size(*n)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum TextOrNumber {
            Number(u64),
            Text(String),
        }
        match Option::<TextOrNumber>::deserialize(d)? {
            None => Ok(None),
            Some(TextOrNumber::Number(n)) => Ok(Some(n)),
            Some(TextOrNumber::Text(t)) => {
                parse_size(&t).map(Some).map_err(serde::de::Error::custom)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_units_are_powers_of_1000_and_binary_ones_of_1024() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("500KB"), Ok(500_000));
        assert_eq!(parse_size("20mb"), Ok(20_000_000));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size(" 16 KiB "), Ok(16 << 10));
    }

    #[test]
    fn a_size_without_digits_or_with_an_unknown_unit_says_so() {
        assert!(parse_size("MB").unwrap_err().why.contains("number"));
        assert!(parse_size("3 parsecs").unwrap_err().why.contains("unit"));
        assert!(parse_size("99999999999GB").is_err());
    }

    #[test]
    fn a_range_includes_both_ends_and_one_size_is_a_range_of_one() {
        let r: SizeRange = "500KB..20MB".parse().unwrap();
        assert_eq!((r.min, r.max), (500_000, 20_000_000));
        let one: SizeRange = "1MiB".parse().unwrap();
        assert_eq!((one.min, one.max), (1 << 20, 1 << 20));
        assert_eq!(one.to_string(), "1MiB");
        assert_eq!(r.to_string(), "500KB..20MB");
    }

    #[test]
    fn a_backwards_range_is_refused_naming_the_text() {
        let e = "20MB..500KB".parse::<SizeRange>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "`20MB..500KB`: the range is backwards (give SMALLER..LARGER)"
        );
    }

    #[test]
    fn an_optional_size_reads_text_or_a_number_and_is_written_as_text() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct S {
            #[serde(default, with = "opt_text")]
            n: Option<u64>,
        }
        let text: S = serde_json::from_str(r#"{"n": "16KiB"}"#).unwrap();
        let number: S = serde_json::from_str(r#"{"n": 16384}"#).unwrap();
        assert_eq!((text.n, number.n), (Some(16384), Some(16384)));
        assert_eq!(serde_json::to_string(&text).unwrap(), r#"{"n":"16KiB"}"#);
        let bad = serde_json::from_str::<S>(r#"{"n": "16 parsecs"}"#).unwrap_err();
        assert!(bad.to_string().contains("unknown unit"), "{bad}");
    }

    #[test]
    fn a_range_round_trips_through_json_as_text() {
        let r: SizeRange = "1KiB..3000".parse().unwrap();
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, "\"1KiB..3KB\"");
        assert_eq!(serde_json::from_str::<SizeRange>(&json).unwrap(), r);
    }
}
