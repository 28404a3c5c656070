//! The change feed's continuation as one opaque string: base64 (URL-safe, no padding) of a small
//! JSON document naming the container, the mode, the partition key (for a partition-key scope),
//! where ranges not yet read start, and each range with the position it has been read to.
//! Decoding is bounded in size and range count, and checks what it reads.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::feed_range::FeedRange;
use crate::error::CosmosError;

/// The longest continuation string accepted.
pub const MAX_CONTINUATION_BYTES: usize = 1 << 20;
/// The longest position (etag) of one range.
const MAX_ETAG_LEN: usize = 256;
/// The format version written.
const VERSION: u32 = 1;

/// Where a range with no position yet starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum UnreadStart {
    /// From the first change held.
    Beginning,
    /// From the time the range is first read.
    Now,
    /// From changes committed at or after this Unix second.
    Since(u64),
}

/// One range of a feed and how far it has been read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RangePosition {
    pub(crate) min: String,
    pub(crate) max: String,
    /// The etag of the last page read; `None` until the range is first read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) etag: Option<String>,
}

/// The continuation's content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ContinuationData {
    pub(crate) v: u32,
    /// The container's link (`dbs/d/colls/c`).
    pub(crate) container: String,
    /// `true` for all-versions-and-deletes.
    #[serde(default)]
    pub(crate) all_versions: bool,
    /// The partition key (header JSON) of a partition-key scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) partition_key: Option<String>,
    pub(crate) start: UnreadStart,
    pub(crate) ranges: Vec<RangePosition>,
}

impl ContinuationData {
    pub(crate) fn new(
        container: String,
        all_versions: bool,
        partition_key: Option<String>,
        start: UnreadStart,
        ranges: Vec<RangePosition>,
    ) -> Self {
        ContinuationData {
            v: VERSION,
            container,
            all_versions,
            partition_key,
            start,
            ranges,
        }
    }

    /// The opaque string.
    pub(crate) fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).unwrap_or_default())
    }

    /// Reads a string [`ContinuationData::encode`] wrote; at most `max_ranges` ranges.
    pub(crate) fn decode(token: &str, max_ranges: usize) -> Result<Self, CosmosError> {
        let bad = |why: String| {
            CosmosError::invalid_input(format!("the change feed continuation is not valid: {why}"))
        };
        if token.len() > MAX_CONTINUATION_BYTES {
            return Err(bad(format!(
                "it is {} bytes; at most {MAX_CONTINUATION_BYTES} are accepted",
                token.len()
            )));
        }
        let json = URL_SAFE_NO_PAD
            .decode(token.trim())
            .map_err(|e| bad(format!("not base64 ({e})")))?;
        let data: ContinuationData =
            serde_json::from_slice(&json).map_err(|e| bad(format!("{e}")))?;
        if data.v != VERSION {
            return Err(bad(format!("format version {} is not {VERSION}", data.v)));
        }
        if data.ranges.is_empty() || data.ranges.len() > max_ranges {
            return Err(bad(format!(
                "it names {} ranges; 1 to {max_ranges} are accepted",
                data.ranges.len()
            )));
        }
        for r in &data.ranges {
            FeedRange::new(r.min.clone(), r.max.clone())?;
            if let Some(etag) = &r.etag {
                let printable = etag.bytes().all(|b| (0x20..0x7F).contains(&b));
                if etag.is_empty() || etag.len() > MAX_ETAG_LEN || !printable {
                    return Err(bad(format!(
                        "a range position must be 1 to {MAX_ETAG_LEN} printable ASCII characters"
                    )));
                }
            }
        }
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ContinuationData {
        ContinuationData::new(
            "dbs/d/colls/c".into(),
            false,
            None,
            UnreadStart::Beginning,
            vec![
                RangePosition {
                    min: String::new(),
                    max: "80".into(),
                    etag: Some("\"12\"".into()),
                },
                RangePosition {
                    min: "80".into(),
                    max: "FF".into(),
                    etag: None,
                },
            ],
        )
    }

    #[test]
    fn round_trips() {
        let data = sample();
        assert_eq!(ContinuationData::decode(&data.encode(), 10).unwrap(), data);
    }

    #[test]
    fn refusals_say_why() {
        let table: Vec<(String, &str)> = vec![
            ("!!!".into(), "base64"),
            (URL_SAFE_NO_PAD.encode("{}"), "missing field"),
            ("A".repeat(MAX_CONTINUATION_BYTES + 1), "bytes"),
            (
                {
                    let mut d = sample();
                    d.v = 9;
                    d.encode()
                },
                "version",
            ),
            (
                {
                    let mut d = sample();
                    d.ranges.clear();
                    d.encode()
                },
                "ranges",
            ),
            (
                {
                    let mut d = sample();
                    d.ranges[0].etag = Some("\n".into());
                    d.encode()
                },
                "position",
            ),
            (
                {
                    let mut d = sample();
                    d.ranges[0].max = "zz".into();
                    d.encode()
                },
                "hex",
            ),
        ];
        for (token, why) in table {
            let err = ContinuationData::decode(&token, 10).unwrap_err();
            assert!(err.is_invalid_input());
            assert!(err.message().contains(why), "{why}: {}", err.message());
        }
        assert!(ContinuationData::decode(&sample().encode(), 1).is_err());
    }
}
