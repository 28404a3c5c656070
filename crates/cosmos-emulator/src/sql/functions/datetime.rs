//! `GetCurrentDateTime`: the current UTC time as `YYYY-MM-DDTHH:MM:SS.fffffffZ`.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in the service's ISO 8601 form (seven fractional digits).
pub(super) fn now_iso8601() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_utc(since.as_secs(), since.subsec_nanos())
}

/// Formats seconds and nanoseconds since the Unix epoch.
pub(super) fn format_utc(secs: u64, nanos: u32) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:07}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        nanos / 100
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_known_instants() {
        assert_eq!(super::format_utc(0, 0), "1970-01-01T00:00:00.0000000Z");
        assert_eq!(
            super::format_utc(1_709_210_096, 123_456_789),
            "2024-02-29T12:34:56.1234567Z"
        );
    }
}
