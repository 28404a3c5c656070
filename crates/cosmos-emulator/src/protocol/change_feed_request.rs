//! What a change-feed request asks for, read from its headers: the mode (`A-IM`), where it starts
//! (`If-None-Match`, `If-Modified-Since`) and an effective-partition-key filter. Pure, no I/O.

use std::time::UNIX_EPOCH;

use super::headers;

/// Which change feed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FeedMode {
    /// `A-IM: Incremental feed`: each changed item once, at its latest version.
    LatestVersion,
    /// `A-IM: Full-Fidelity Feed`: every create, replace and delete, with metadata.
    AllVersionsAndDeletes,
}

/// Where the feed starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FeedStart {
    /// No `If-None-Match`: from the first retained change.
    Beginning,
    /// `If-None-Match: *`: only changes after this request.
    Now,
    /// `If-None-Match: "<lsn>"`: the etag a previous page returned.
    After(u64),
}

/// A change-feed request's own headers, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ChangeFeedRequest {
    pub mode: FeedMode,
    pub start: FeedStart,
    /// `If-Modified-Since`, in Unix seconds: only changes committed at or after it.
    pub since_unix: Option<u64>,
    /// `x-ms-start-epk` / `x-ms-end-epk` (with `x-ms-read-key-type: EffectivePartitionKeyRange`):
    /// `[min, max)` as upper-case hex strings, compared as the service compares them.
    pub epk_range: Option<(String, String)>,
}

impl ChangeFeedRequest {
    /// Whether this request starts a latest-version feed at a point in time (`If-Modified-Since`
    /// without a continuation): the service answers it with no changes, only the position the
    /// time names (the etag), from which the changes then follow.
    pub(crate) fn answers_a_position(&self) -> Option<u64> {
        match (self.mode, self.start, self.since_unix) {
            (FeedMode::LatestVersion, FeedStart::Beginning, Some(since)) => Some(since),
            _ => None,
        }
    }
}

/// The `A-IM` mode named by `value`; an error naming the value otherwise.
pub(crate) fn feed_mode(value: &str) -> Result<FeedMode, String> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("Incremental feed") {
        Ok(FeedMode::LatestVersion)
    } else if v.eq_ignore_ascii_case("Full-Fidelity Feed") {
        Ok(FeedMode::AllVersionsAndDeletes)
    } else {
        Err(format!(
            "The A-IM header value {v:?} is not supported: use \"Incremental feed\" or \"Full-Fidelity Feed\"."
        ))
    }
}

/// The wire format all-versions-and-deletes answers are written in.
pub(crate) const WIRE_FORMAT: &str = "2021-09-15";

/// Parses a change-feed request from `header` (a lookup by lower-case name); `a_im` is the `A-IM`
/// header's value. Errors say which header was wrong and why.
pub(crate) fn parse<'h>(
    a_im: &str,
    header: impl Fn(&str) -> Option<&'h str>,
) -> Result<ChangeFeedRequest, String> {
    let mode = feed_mode(a_im)?;
    if mode == FeedMode::AllVersionsAndDeletes {
        if let Some(format) = header(headers::CHANGE_FEED_WIRE_FORMAT) {
            if format.trim() != WIRE_FORMAT {
                return Err(format!(
                    "{} {format:?} is not supported; this emulator writes {WIRE_FORMAT}.",
                    headers::CHANGE_FEED_WIRE_FORMAT
                ));
            }
        }
    }
    let start = match header(headers::IF_NONE_MATCH).map(str::trim) {
        None | Some("") => FeedStart::Beginning,
        Some("*") => FeedStart::Now,
        Some(tag) => FeedStart::After(parse_etag(tag)?),
    };
    let since_unix = match header(headers::IF_MODIFIED_SINCE) {
        None => None,
        Some(text) => Some(
            httpdate::parse_http_date(text.trim())
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_secs())
                .ok_or_else(|| {
                    format!("If-Modified-Since {text:?} is not an HTTP date like \"Tue, 01 Dec 2026 00:00:00 GMT\".")
                })?,
        ),
    };
    let epk_range = match (header(headers::START_EPK), header(headers::END_EPK)) {
        (None, None) => None,
        (Some(min), Some(max)) => {
            let key_type = header(headers::READ_KEY_TYPE).map(str::trim);
            if !key_type.is_some_and(|t| t.eq_ignore_ascii_case("EffectivePartitionKeyRange")) {
                return Err(format!(
                    "{} and {} need {}: EffectivePartitionKeyRange.",
                    headers::START_EPK,
                    headers::END_EPK,
                    headers::READ_KEY_TYPE
                ));
            }
            let (min, max) = (epk_text(min)?, epk_text(max)?);
            if min >= max && max != "FF" {
                return Err(format!(
                    "The effective partition key range [{min:?}, {max:?}) is empty."
                ));
            }
            Some((min, max))
        }
        _ => {
            return Err(format!(
                "{} and {} must be sent together.",
                headers::START_EPK,
                headers::END_EPK
            ))
        }
    };
    if mode == FeedMode::AllVersionsAndDeletes && start == FeedStart::Beginning {
        return Err("An all-versions-and-deletes change feed starts now (If-None-Match: *) or from a continuation, not from the beginning.".into());
    }
    Ok(ChangeFeedRequest {
        mode,
        start,
        since_unix,
        epk_range,
    })
}

/// The etag a change-feed page answers: the partition's LSN, quoted.
pub(crate) fn etag(lsn: u64) -> String {
    format!("\"{lsn}\"")
}

/// Reads an etag this emulator gave (`"123"`, quotes optional).
fn parse_etag(tag: &str) -> Result<u64, String> {
    let bare = tag
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(tag);
    bare.parse::<u64>().map_err(|_| {
        format!("If-None-Match {tag:?} is not a change-feed continuation: send \"*\" or the etag a change-feed page returned.")
    })
}

/// The longest feed-range bound read: a hash V1 key's encoded hash and strings.
const MAX_EPK_TEXT: usize = 512;

/// An EPK bound: hex digits (at most [`MAX_EPK_TEXT`]) or empty, upper-cased.
fn epk_text(text: &str) -> Result<String, String> {
    let t = text.trim();
    // As long as a hash V1 key of long strings: the container's definition reads it after.
    if t.len() > MAX_EPK_TEXT || !t.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!(
            "{t:?} is not an effective partition key (hex digits, e.g. \"\" or \"FF\")."
        ));
    }
    Ok(t.to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_with(a_im: &str, pairs: &[(&str, &str)]) -> Result<ChangeFeedRequest, String> {
        parse(a_im, |name| {
            pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
        })
    }

    #[test]
    fn only_a_first_latest_version_request_at_a_time_answers_a_position() {
        let date = "Tue, 01 Dec 2026 00:00:00 GMT";
        let secs = 1_796_083_200;
        type Row<'a> = (&'a str, Vec<(&'a str, &'a str)>, Option<u64>);
        let table: [Row<'_>; 5] = [
            (
                "Incremental feed",
                vec![("if-modified-since", date)],
                Some(secs),
            ),
            ("Incremental feed", vec![], None),
            (
                "Incremental feed",
                vec![("if-modified-since", date), ("if-none-match", "\"4\"")],
                None,
            ),
            (
                "Incremental feed",
                vec![("if-modified-since", date), ("if-none-match", "*")],
                None,
            ),
            (
                "Full-Fidelity Feed",
                vec![("if-modified-since", date), ("if-none-match", "*")],
                None,
            ),
        ];
        for (a_im, pairs, expected) in table {
            let request = parse_with(a_im, &pairs).unwrap();
            assert_eq!(request.answers_a_position(), expected, "{a_im} {pairs:?}");
        }
    }

    #[test]
    fn reads_mode_start_and_filters() {
        type Row<'a> = (&'a str, Vec<(&'a str, &'a str)>, FeedMode, FeedStart);
        let table: Vec<Row> = vec![
            (
                "Incremental feed",
                vec![],
                FeedMode::LatestVersion,
                FeedStart::Beginning,
            ),
            (
                "incremental FEED",
                vec![("if-none-match", "*")],
                FeedMode::LatestVersion,
                FeedStart::Now,
            ),
            (
                "Incremental feed",
                vec![("if-none-match", "\"42\"")],
                FeedMode::LatestVersion,
                FeedStart::After(42),
            ),
            (
                "Incremental feed",
                vec![("if-none-match", "7")],
                FeedMode::LatestVersion,
                FeedStart::After(7),
            ),
            (
                "Full-Fidelity Feed",
                vec![
                    ("if-none-match", "*"),
                    ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
                ],
                FeedMode::AllVersionsAndDeletes,
                FeedStart::Now,
            ),
        ];
        for (a_im, pairs, mode, start) in table {
            let r = parse_with(a_im, &pairs).unwrap();
            assert_eq!((r.mode, r.start), (mode, start), "{a_im} {pairs:?}");
        }
        let r = parse_with(
            "Incremental feed",
            &[
                ("if-modified-since", "Thu, 01 Jan 1970 00:01:40 GMT"),
                ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
                ("x-ms-start-epk", "05c1"),
                ("x-ms-end-epk", "FF"),
            ],
        )
        .unwrap();
        assert_eq!(r.since_unix, Some(100));
        assert_eq!(r.epk_range, Some(("05C1".into(), "FF".into())));
    }

    #[test]
    fn refuses_what_it_does_not_implement_or_cannot_read() {
        type Row<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);
        let table: Vec<Row> = vec![
            ("Snapshot", vec![], "A-IM"),
            (
                "Incremental feed",
                vec![("if-none-match", "\"abc\"")],
                "continuation",
            ),
            (
                "Incremental feed",
                vec![("if-modified-since", "yesterday")],
                "HTTP date",
            ),
            (
                "Incremental feed",
                vec![("x-ms-start-epk", "00")],
                "together",
            ),
            (
                "Incremental feed",
                vec![("x-ms-start-epk", "00"), ("x-ms-end-epk", "10")],
                "read-key-type",
            ),
            (
                "Incremental feed",
                vec![
                    ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
                    ("x-ms-start-epk", "zz"),
                    ("x-ms-end-epk", "10"),
                ],
                "effective partition key",
            ),
            (
                "Incremental feed",
                vec![
                    ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
                    ("x-ms-start-epk", "20"),
                    ("x-ms-end-epk", "10"),
                ],
                "empty",
            ),
            ("Full-Fidelity Feed", vec![], "not from the beginning"),
            (
                "Full-Fidelity Feed",
                vec![
                    ("if-none-match", "*"),
                    ("x-ms-cosmos-changefeed-wire-format-version", "2019-01-01"),
                ],
                "not supported",
            ),
        ];
        for (a_im, pairs, reason) in table {
            let e = parse_with(a_im, &pairs).unwrap_err();
            assert!(e.contains(reason), "{a_im} {pairs:?}: {e}");
        }
    }

    #[test]
    fn etags_quote_the_lsn() {
        assert_eq!(etag(12), "\"12\"");
    }
}
