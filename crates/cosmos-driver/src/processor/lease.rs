//! The lease document: one per feed range of the monitored container, in the shape the .NET and
//! Java processors write (`id` of `{name}..{token}`, `version`, `LeaseToken`, `FeedRange`,
//! `Owner`, `ContinuationToken`, `timestamp`, `properties`; the `_etag` fences every write), and
//! the store's marker documents. Plain data, no I/O.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::change_feed::FeedRange;
use crate::error::CosmosError;

/// The lease format version written (2: a lease keyed by a feed range, as the .NET processor's
/// EPK-based leases).
pub(crate) const LEASE_VERSION: u32 = 2;

/// The longest processor or instance name accepted.
pub const MAX_NAME_LEN: usize = 200;

/// A feed range as the lease writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseRange {
    /// The range's bounds.
    #[serde(rename = "EffectiveRange")]
    pub effective_range: RangeBounds,
}

/// `[min, max)` of the effective partition key space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeBounds {
    /// The inclusive lower bound.
    pub min: String,
    /// The exclusive upper bound.
    pub max: String,
}

/// One lease document, as stored in the lease container.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Lease {
    /// `{processor name}..{lease token}`.
    pub id: String,
    /// The format version.
    #[serde(default)]
    pub version: u32,
    /// The partition key range id the lease was made for (a child of a split gets its own).
    #[serde(rename = "LeaseToken")]
    pub lease_token: String,
    /// The span of the key space the lease covers.
    #[serde(rename = "FeedRange")]
    pub feed_range: LeaseRange,
    /// The instance that owns it; `None` when released.
    #[serde(rename = "Owner", default)]
    pub owner: Option<String>,
    /// Where the range has been handled to: the pull model's continuation; `None` until the first
    /// checkpoint.
    #[serde(rename = "ContinuationToken", default)]
    pub continuation: Option<String>,
    /// When the owner last wrote it (RFC 3339, UTC).
    pub timestamp: String,
    /// Free-form properties.
    #[serde(default)]
    pub properties: BTreeMap<String, String>,
    /// The fencing token of the last write (set by the service).
    #[serde(rename = "_etag", default, skip_serializing)]
    pub etag: Option<String>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("id", &self.id)
            .field("owner", &self.owner)
            .field("range", &self.range())
            .field("timestamp", &self.timestamp)
            .field("etag", &self.etag)
            .finish_non_exhaustive()
    }
}

impl Lease {
    /// A new lease of `range` (range id `token`) for processor `name`, with no owner.
    pub(crate) fn new(
        name: &str,
        token: &str,
        range: &FeedRange,
        continuation: Option<String>,
        owner: Option<String>,
        now: SystemTime,
    ) -> Self {
        Lease {
            id: lease_id(name, token),
            version: LEASE_VERSION,
            lease_token: token.to_owned(),
            feed_range: LeaseRange {
                effective_range: RangeBounds {
                    min: range.min().to_owned(),
                    max: range.max().to_owned(),
                },
            },
            owner,
            continuation,
            timestamp: format_timestamp(now),
            properties: BTreeMap::new(),
            etag: None,
        }
    }

    /// The lease's feed range; an error when the stored bounds are not a range.
    pub fn range(&self) -> Result<FeedRange, CosmosError> {
        FeedRange::new(
            self.feed_range.effective_range.min.clone(),
            self.feed_range.effective_range.max.clone(),
        )
    }

    /// When the owner last wrote it; the epoch when the stored time cannot be read (so a lease
    /// with a bad time reads as expired).
    pub fn renewed_at(&self) -> SystemTime {
        parse_timestamp(&self.timestamp).unwrap_or(UNIX_EPOCH)
    }
}

/// A lease's document id.
pub(crate) fn lease_id(name: &str, token: &str) -> String {
    format!("{name}..{token}")
}

/// The id prefix of every lease of processor `name`.
pub(crate) fn lease_prefix(name: &str) -> String {
    format!("{name}..")
}

/// The marker that says the store of processor `name` holds a lease for every range.
pub(crate) fn info_id(name: &str) -> String {
    format!("{name}.info")
}

/// The lock one instance creates (create-if-absent) while it creates the first leases.
pub(crate) fn lock_id(name: &str) -> String {
    format!("{name}.lock")
}

/// Checks a processor or instance name: 1 to [`MAX_NAME_LEN`] characters, none of `/ \ ? #` nor
/// a control character (they cannot stand in a document id), and no `..` (the separator of a
/// lease id: processor `a` would otherwise list the leases of processor `a..b`).
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), CosmosError> {
    let bad = name
        .chars()
        .any(|c| matches!(c, '/' | '\\' | '?' | '#') || c.is_control())
        || name.contains("..");
    if name.is_empty() || name.len() > MAX_NAME_LEN || bad {
        return Err(CosmosError::invalid_input(format!(
            "the {what} must be 1 to {MAX_NAME_LEN} characters without .., / \\ ? # or control characters"
        )));
    }
    Ok(())
}

/// `at` as RFC 3339 in UTC with milliseconds (`2026-12-07T03:16:40.120Z`); before 1970 reads as
/// the epoch.
pub fn format_timestamp(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = date_of_day(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// Reads an RFC 3339 time (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`), from 1970 on.
pub fn parse_timestamp(text: &str) -> Result<SystemTime, CosmosError> {
    let bad = || CosmosError::invalid_input(format!("not an RFC 3339 time: {text:?}"));
    let b = text.as_bytes();
    if b.len() < 20 || b.len() > 40 || !text.is_ascii() {
        return Err(bad());
    }
    let num = |from: usize, to: usize| -> Result<u64, CosmosError> {
        text[from..to]
            .bytes()
            .try_fold(0u64, |n, c| {
                c.is_ascii_digit().then(|| n * 10 + u64::from(c - b'0'))
            })
            .ok_or_else(bad)
    };
    let seps = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if seps.iter().any(|&(i, c)| b[i] != c) || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(bad());
    }
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if year < 1970 || !(1..=12).contains(&month) || day == 0 || day > days_in(year, month) {
        return Err(bad());
    }
    if hour > 23 || minute > 59 || second > 60 {
        return Err(bad());
    }
    let mut i = 19;
    let mut nanos = 0u64;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return Err(bad());
        }
        let digits = &text[start..i.min(start + 9)];
        nanos = num(start, start + digits.len())? * 10u64.pow(9 - digits.len() as u32);
    }
    let offset: i64 = match &text[i..] {
        "Z" | "z" => 0,
        zone if zone.len() == 6 && (zone.starts_with('+') || zone.starts_with('-')) => {
            if zone.as_bytes()[3] != b':' {
                return Err(bad());
            }
            let minutes = (num(i + 1, i + 3)? * 60 + num(i + 4, i + 6)?) as i64;
            if zone.starts_with('-') {
                -minutes
            } else {
                minutes
            }
        }
        _ => return Err(bad()),
    };
    let secs = (days_before(year, month) + day - 1) * 86_400 + hour * 3600 + minute * 60 + second;
    let secs = secs as i64 - offset * 60;
    if secs < 0 {
        return Err(bad());
    }
    Ok(UNIX_EPOCH + Duration::from_secs(secs as u64) + Duration::from_nanos(nanos))
}

fn is_leap(y: u64) -> bool {
    y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400))
}

fn days_in(y: u64, m: u64) -> u64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the first of `month` of `year`.
fn days_before(year: u64, month: u64) -> u64 {
    let years: u64 = (1970..year)
        .map(|y| if is_leap(y) { 366 } else { 365 })
        .sum();
    years + (1..month).map(|m| days_in(year, m)).sum::<u64>()
}

/// The date `days` after 1970-01-01.
fn date_of_day(mut days: u64) -> (u64, u64, u64) {
    let mut year = 1970;
    loop {
        let len = if is_leap(year) { 366 } else { 365 };
        if days < len {
            break;
        }
        days -= len;
        year += 1;
    }
    let mut month = 1;
    while days >= days_in(year, month) {
        days -= days_in(year, month);
        month += 1;
    }
    (year, month, days + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_and_bad_ones_are_refused() {
        for secs in [0u64, 951_782_400, 1_796_000_000, 4_102_444_800] {
            let at = UNIX_EPOCH + Duration::from_millis(secs * 1000 + 120);
            assert_eq!(
                parse_timestamp(&format_timestamp(at)).unwrap(),
                at,
                "{secs}"
            );
        }
        assert_eq!(
            format_timestamp(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(
            parse_timestamp("2000-02-29T01:00:00+01:00").unwrap(),
            UNIX_EPOCH + Duration::from_secs(951_782_400)
        );
        for bad in [
            "",
            "2000-02-30T00:00:00Z",
            "1969-12-31T23:59:59Z",
            "2000-01-01 00:00:00",
            "2000-01-01T24:00:00Z",
            "2000-01-01T00:00:00.Z",
            "2000-01-01T00:00:00+0100",
            "２000-01-01T00:00:00Z",
        ] {
            assert!(parse_timestamp(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_document_has_the_documented_field_names_and_no_etag_is_written() {
        let r = FeedRange::new("", "80").unwrap();
        let mut lease = Lease::new("p", "0", &r, Some("c".into()), Some("i".into()), UNIX_EPOCH);
        lease.etag = Some("\"e\"".into());
        let v = serde_json::to_value(&lease).unwrap();
        assert_eq!(v["id"], "p..0");
        assert_eq!(v["LeaseToken"], "0");
        assert_eq!(v["Owner"], "i");
        assert_eq!(v["ContinuationToken"], "c");
        assert_eq!(v["FeedRange"]["EffectiveRange"]["max"], "80");
        assert_eq!(v["timestamp"], "1970-01-01T00:00:00.000Z");
        assert!(v.get("_etag").is_none());
        let mut stored = v.clone();
        stored["_etag"] = "\"e\"".into();
        let back: Lease = serde_json::from_value(stored).unwrap();
        assert_eq!(back, lease);
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("name", "orders-processor").is_ok());
        for bad in [
            "",
            "a/b",
            "a#b",
            "a\nb",
            "a..b",
            &"x".repeat(MAX_NAME_LEN + 1),
        ] {
            assert!(check_name("name", bad).is_err(), "{bad:?}");
        }
    }
}
