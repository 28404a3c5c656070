//! What a benchmark report says about the run itself: the tool, when it started, how it was called.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// The tool that wrote a report.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ToolInfo {
    /// `cosmos`.
    pub name: String,
    /// The crate version, e.g. `0.1.0`.
    pub version: String,
}

impl ToolInfo {
    /// This build of `cosmos`.
    pub fn current() -> Self {
        Self {
            name: "cosmos".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// `at` as RFC 3339 in UTC with milliseconds, e.g. `2026-12-02T00:33:49.120Z`; times before 1970
/// read as the epoch.
pub fn rfc3339_utc(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (the well-known era-based conversion).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// Flags whose value is a secret: the value is replaced by `<redacted>`.
const SECRET_FLAGS: [&str; 1] = ["--key"];

/// The command line as given, with the value of every secret flag (`--key K`, `--key=K`) replaced.
pub fn redacted_command_line(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for arg in args {
        if hide_next {
            out.push("<redacted>".to_owned());
            hide_next = false;
            continue;
        }
        if SECRET_FLAGS.contains(&arg.as_str()) {
            hide_next = true;
            out.push(arg.clone());
        } else if let Some(flag) = SECRET_FLAGS
            .iter()
            .find(|f| arg.starts_with(&format!("{f}=")))
        {
            out.push(format!("{flag}=<redacted>"));
        } else {
            out.push(arg.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        for (secs, millis, want) in [
            (0, 0, "1970-01-01T00:00:00.000Z"),
            (951_782_400, 5, "2000-02-29T00:00:00.005Z"),
            (1_796_172_829, 120, "2026-12-02T00:53:49.120Z"),
            (4_107_542_399, 999, "2100-02-28T23:59:59.999Z"),
        ] {
            let at = UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis);
            assert_eq!(rfc3339_utc(at), want, "{secs}");
        }
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00.000Z"
        );
    }

    #[test]
    fn keys_never_reach_the_recorded_command_line() {
        let line = |s: &[&str]| s.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        for (given, want) in [
            (
                line(&["cosmos", "bench", "--key", "c2VjcmV0", "--ops", "5"]),
                line(&["cosmos", "bench", "--key", "<redacted>", "--ops", "5"]),
            ),
            (
                line(&["cosmos", "bench", "--key=c2VjcmV0"]),
                line(&["cosmos", "bench", "--key=<redacted>"]),
            ),
            (
                line(&["cosmos", "bench", "--key-file", "/run/k", "--keyx"]),
                line(&["cosmos", "bench", "--key-file", "/run/k", "--keyx"]),
            ),
            (
                line(&["cosmos", "bench", "--key"]),
                line(&["cosmos", "bench", "--key"]),
            ),
        ] {
            assert_eq!(redacted_command_line(&given), want);
        }
    }
}
