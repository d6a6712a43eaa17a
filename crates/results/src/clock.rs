//! UTC timestamps without a date library: `20260101T120000Z` and RFC 3339.

use std::time::{SystemTime, UNIX_EPOCH};

/// (year, month, day, hour, minute, second, millisecond) in UTC.
fn civil(t: SystemTime) -> (i64, u32, u32, u32, u32, u32, u32) {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400) as u32;
    // Howard Hinnant's days-from-civil inverse.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        month,
        day,
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        d.subsec_millis(),
    )
}

/// `YYYYmmddTHHMMSSZ`.
pub fn compact_utc(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s, _) = civil(t);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

/// `YYYY-mm-ddTHH:MM:SS.sssZ`.
pub fn rfc3339(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s, ms) = civil(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_instants_format_in_utc() {
        let t = UNIX_EPOCH + Duration::from_millis(1_709_251_199_123); // 2024-02-29 23:59:59.123
        assert_eq!(compact_utc(t), "20240229T235959Z");
        assert_eq!(rfc3339(t), "2024-02-29T23:59:59.123Z");
        assert_eq!(compact_utc(UNIX_EPOCH), "19700101T000000Z");
    }
}
