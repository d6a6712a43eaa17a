//! UTC timestamps for results folders and lap records: `20260101T120000Z` and RFC 3339 with
//! milliseconds, formatted by jiff.

use jiff::Timestamp;
use std::time::SystemTime;

/// The instant as a jiff timestamp (the Unix epoch for an instant jiff cannot hold).
fn timestamp(t: SystemTime) -> Timestamp {
    Timestamp::try_from(t).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// `YYYYmmddTHHMMSSZ`.
pub fn compact_utc(t: SystemTime) -> String {
    timestamp(t).strftime("%Y%m%dT%H%M%SZ").to_string()
}

/// `YYYY-mm-ddTHH:MM:SS.sssZ` (milliseconds truncated).
pub fn rfc3339(t: SystemTime) -> String {
    timestamp(t).strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn known_instants_format_in_utc() {
        let t = UNIX_EPOCH + Duration::from_millis(1_709_251_199_123); // 2024-02-29 23:59:59.123
        assert_eq!(compact_utc(t), "20240229T235959Z");
        assert_eq!(rfc3339(t), "2024-02-29T23:59:59.123Z");
        assert_eq!(compact_utc(UNIX_EPOCH), "19700101T000000Z");
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let late = UNIX_EPOCH + Duration::from_nanos(1_767_225_599_999_999_999);
        assert_eq!(rfc3339(late), "2025-12-31T23:59:59.999Z");
    }
}
