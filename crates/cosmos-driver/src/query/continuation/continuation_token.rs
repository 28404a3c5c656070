//! The driver's continuation token for a query: which query it belongs to, each range's position
//! (the service continuation of its current page and how many of that page's rows are gone), for
//! ORDER BY the key of the last row, the DISTINCT/OFFSET/LIMIT/TOP state, and for a
//! cross-partition aggregate or GROUP BY the blocking stage's state (partial aggregates, the
//! table of groups, or the rest of the built result). Encoded as base64url JSON of format 2;
//! refused with a clear error when it is corrupted, too large, of an older format, or from
//! another query.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::query::aggregate::blocking_stage::BlockingState;
use crate::query::aggregate::result_shaping::ShapingState;
use crate::query::continuation::token_text::MAX_TOKEN_BYTES;

/// The most range positions one token may hold.
pub(crate) const MAX_TOKEN_RANGES: usize = 4096;
const VERSION: u8 = 2;
const PREFIX: &str = "cq2.";
/// The prefix of format-1 tokens (before aggregate state was carried).
const FORMAT_1_PREFIX: &str = "cq1.";
/// The most JSON bytes a token holds: base64 of them, with the prefix, fits [`MAX_TOKEN_BYTES`].
pub(crate) const MAX_TOKEN_JSON_BYTES: usize = (MAX_TOKEN_BYTES - PREFIX.len()) / 4 * 3;

/// One range's position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RangePosition {
    /// The range's lower effective partition key.
    #[serde(rename = "a")]
    pub min: String,
    /// The range's upper effective partition key.
    #[serde(rename = "b")]
    pub max: String,
    /// The service continuation of the range's current page (`None`: its start).
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Rows of that page already returned.
    #[serde(rename = "n", default, skip_serializing_if = "is_zero")]
    pub skip: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One ORDER BY key value in a token: `{"item": v}`, or `{}` for undefined.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct KeyCell {
    /// The value (`None`: undefined).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub item: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The key of the last row an ORDER BY query returned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct LastKey {
    /// One cell per ORDER BY expression.
    #[serde(rename = "k")]
    pub keys: Vec<KeyCell>,
    /// The row's `_rid`, when projected.
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub rid: Option<String>,
}

/// A query's continuation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct QueryContinuation {
    #[serde(rename = "v")]
    version: u8,
    /// The fingerprint of the query (text and parameters) that issued the token.
    #[serde(rename = "q")]
    pub query: String,
    /// The scope the query ran in (cross-partition, or a partition key), as text.
    #[serde(rename = "s")]
    pub scope: String,
    /// The position of every range not yet drained, in range order.
    #[serde(rename = "r")]
    pub ranges: Vec<RangePosition>,
    /// ORDER BY: the key of the last row returned.
    #[serde(rename = "k", default, skip_serializing_if = "Option::is_none")]
    pub last_key: Option<LastKey>,
    /// The result stages' state.
    #[serde(rename = "p", default)]
    pub shaping: ShapingState,
    /// A cross-partition aggregate or GROUP BY: the blocking stage's state.
    #[serde(rename = "g", default, skip_serializing_if = "Option::is_none")]
    pub(crate) blocking: Option<BlockingState>,
}

/// A writer that refuses to grow past a limit, so an oversized token is found without building
/// it whole.
struct Capped {
    out: Vec<u8>,
    limit: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.out.len() + b.len() > self.limit {
            return Err(std::io::Error::other("over the limit"));
        }
        self.out.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Why a token was refused.
fn refused(why: impl std::fmt::Display) -> String {
    format!("the continuation token is not valid for this query: {why}")
}

impl QueryContinuation {
    /// A token for `query` (its fingerprint) in `scope`.
    pub(crate) fn new(
        query: String,
        scope: String,
        ranges: Vec<RangePosition>,
        last_key: Option<LastKey>,
        shaping: ShapingState,
    ) -> QueryContinuation {
        QueryContinuation {
            version: VERSION,
            query,
            scope,
            ranges,
            last_key,
            shaping,
            blocking: None,
        }
    }

    /// The token carrying a blocking stage's state too.
    pub(crate) fn with_blocking(mut self, state: BlockingState) -> QueryContinuation {
        self.blocking = Some(state);
        self
    }

    /// The token as text, or why it cannot be issued (too large).
    pub(crate) fn encode(&self) -> Result<String, String> {
        let mut w = Capped {
            out: Vec::new(),
            limit: MAX_TOKEN_JSON_BYTES,
        };
        if let Err(e) = serde_json::to_writer(&mut w, self) {
            return Err(if e.is_io() {
                format!("the continuation token would take more than the {MAX_TOKEN_BYTES} bytes the driver issues")
            } else {
                format!("cannot encode the token: {e}")
            });
        }
        Ok(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(w.out)))
    }

    /// Reads a token and checks that it belongs to the query `fingerprint` run in `scope`.
    pub(crate) fn decode(
        text: &str,
        fingerprint: &str,
        scope: &str,
    ) -> Result<QueryContinuation, String> {
        if text.len() > MAX_TOKEN_BYTES {
            return Err(refused(format_args!(
                "it is {} bytes long, more than the {MAX_TOKEN_BYTES} the driver issues",
                text.len()
            )));
        }
        if text.starts_with(FORMAT_1_PREFIX) {
            return Err(refused(format_args!(
                "it has format 1, from an older version of the driver; this driver reads format {VERSION}: run the query from its start"
            )));
        }
        let Some(body) = text.strip_prefix(PREFIX) else {
            return Err(refused("it was not issued by this driver for a query"));
        };
        let json = URL_SAFE_NO_PAD
            .decode(body.trim_end())
            .map_err(|e| refused(format_args!("it is corrupted ({e})")))?;
        let token: QueryContinuation = serde_json::from_slice(&json)
            .map_err(|e| refused(format_args!("it is corrupted ({e})")))?;
        if token.version != VERSION {
            return Err(refused(format_args!(
                "it has version {}, this driver reads version {VERSION}",
                token.version
            )));
        }
        if token.query != fingerprint {
            return Err(refused(
                "it was issued by a different query (text or parameters differ)",
            ));
        }
        if token.scope != scope {
            return Err(refused(
                "it was issued for a different partition key or scope",
            ));
        }
        // Only an aggregate's state can outlive the ranges: its result is built but not all
        // handed out, or every range is read and the result not built yet.
        let needs_ranges = token.blocking.is_none();
        if (needs_ranges && token.ranges.is_empty()) || token.ranges.len() > MAX_TOKEN_RANGES {
            return Err(refused(format_args!(
                "it names {} ranges",
                token.ranges.len()
            )));
        }
        if token.ranges.windows(2).any(|w| w[0].min >= w[1].min) {
            return Err(refused("its ranges are out of order"));
        }
        Ok(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn sample() -> QueryContinuation {
        QueryContinuation::new(
            "q1".into(),
            "cross".into(),
            vec![
                RangePosition {
                    min: "".into(),
                    max: "80".into(),
                    token: Some("+RID:~abc#RT:1".into()),
                    skip: 3,
                },
                RangePosition {
                    min: "80".into(),
                    max: "FF".into(),
                    token: None,
                    skip: 0,
                },
            ],
            Some(LastKey {
                keys: vec![
                    KeyCell {
                        item: Some(json!(null)),
                    },
                    KeyCell { item: None },
                ],
                rid: Some("x".into()),
            }),
            ShapingState {
                offset_left: 0,
                limit_left: Some(4),
                top_left: None,
                distinct_seen: vec![[7; 16]],
            },
        )
    }

    #[test]
    fn a_token_round_trips_and_keeps_null_apart_from_undefined() {
        let t = sample();
        let text = t.encode().unwrap();
        assert!(text.starts_with("cq2."));
        let back = QueryContinuation::decode(&text, "q1", "cross").unwrap();
        assert_eq!(back, t);
        assert_eq!(back.last_key.unwrap().keys[0].item, Some(Value::Null));
    }

    #[test]
    fn foreign_corrupted_and_oversized_tokens_are_refused_with_the_reason() {
        let text = sample().encode().unwrap();
        let table: Vec<(String, &str, &str, &str)> = vec![
            (text.clone(), "q2", "cross", "different query"),
            (text.clone(), "q1", "[\"pk\"]", "different partition key"),
            (
                "+RID:~abc#RT:1".into(),
                "q1",
                "cross",
                "not issued by this driver",
            ),
            (format!("{}!", text), "q1", "cross", "corrupted"),
            (
                format!("cq2.{}", URL_SAFE_NO_PAD.encode(b"{\"v\":2}")),
                "q1",
                "cross",
                "corrupted",
            ),
            (
                format!(
                    "cq2.{}",
                    URL_SAFE_NO_PAD.encode(br#"{"v":9,"q":"q1","s":"cross","r":[]}"#)
                ),
                "q1",
                "cross",
                "version 9",
            ),
            (
                format!(
                    "cq2.{}",
                    URL_SAFE_NO_PAD.encode(br#"{"v":2,"q":"q1","s":"cross","r":[]}"#)
                ),
                "q1",
                "cross",
                "names 0 ranges",
            ),
            (
                format!(
                    "cq2.{}",
                    URL_SAFE_NO_PAD.encode(
                        br#"{"v":2,"q":"q1","s":"cross","r":[{"a":"8","b":"F"},{"a":"","b":"8"}]}"#
                    )
                ),
                "q1",
                "cross",
                "out of order",
            ),
            ("x".repeat(MAX_TOKEN_BYTES + 1), "q1", "cross", "bytes long"),
            (
                format!(
                    "cq1.{}",
                    URL_SAFE_NO_PAD
                        .encode(br#"{"v":1,"q":"q1","s":"cross","r":[{"a":"","b":"FF"}]}"#)
                ),
                "q1",
                "cross",
                "format 1, from an older version of the driver",
            ),
            (
                format!(
                    "cq2.{}",
                    URL_SAFE_NO_PAD.encode(
                        br#"{"v":2,"q":"q1","s":"cross","r":[],"g":{"v":[{"count":{"i":"x"}}]}}"#
                    )
                ),
                "q1",
                "cross",
                "corrupted",
            ),
            (
                format!(
                    "cq2.{}",
                    URL_SAFE_NO_PAD.encode(br#"{"v":2,"q":"q1","s":"cross","r":[],"g":{"o":[7]}}"#)
                ),
                "q1",
                "cross",
                "corrupted",
            ),
        ];
        for (token, q, scope, why) in table {
            let e = QueryContinuation::decode(&token, q, scope).unwrap_err();
            assert!(e.contains(why), "{why}: {e}");
            assert!(e.starts_with("the continuation token is not valid"));
        }
    }

    #[test]
    fn deeply_nested_json_in_a_token_is_refused_not_overflowed() {
        let deep = format!(
            r#"{{"v":2,"q":"q1","s":"cross","r":[{{"a":"","b":"FF"}}],"k":{{"k":[{{"item":{}1{}}}]}}}}"#,
            "[".repeat(5000),
            "]".repeat(5000)
        );
        let text = format!("cq2.{}", URL_SAFE_NO_PAD.encode(deep));
        assert!(QueryContinuation::decode(&text, "q1", "cross")
            .unwrap_err()
            .contains("corrupted"));
    }

    #[test]
    fn an_aggregate_token_may_outlive_its_ranges_and_round_trips() {
        use crate::query::aggregate::aggregates::{Aggregator, Total};
        use crate::query::continuation::token_text::JsonText;
        let states = [
            BlockingState::Values(vec![
                Aggregator::Count(Total::Int(3)),
                Aggregator::Sum(None),
                Aggregator::Extreme {
                    max: true,
                    value: Some(json!({"deep": [[null]]})),
                },
                Aggregator::Average {
                    sum: Total::Float(f64::INFINITY),
                    count: Total::Int(2),
                },
            ]),
            BlockingState::Output(vec![
                JsonText(json!({"k": "a", "n": 2})),
                JsonText(json!(null)),
            ]),
            BlockingState::Output(vec![]),
        ];
        for state in states {
            let mut t = sample().with_blocking(state);
            t.ranges.clear();
            let text = t.encode().unwrap();
            let back = QueryContinuation::decode(&text, "q1", "cross").unwrap();
            assert_eq!(back, t);
        }
    }

    #[test]
    fn a_token_too_large_to_issue_says_so() {
        let mut t = sample();
        t.shaping.distinct_seen = vec![[1; 16]; 20_000];
        assert!(t.encode().unwrap_err().contains("more than"));
        // Right at the limit it is issued, and read back.
        let mut t = sample();
        let base = t.encode().unwrap().len();
        let (mut fits, mut over) = (0usize, 20_000usize);
        while over - fits > 1 {
            let mid = (fits + over) / 2;
            t.shaping.distinct_seen = vec![[1; 16]; mid];
            if t.encode().is_ok() {
                fits = mid;
            } else {
                over = mid;
            }
        }
        t.shaping.distinct_seen = vec![[1; 16]; fits];
        let text = t.encode().unwrap();
        assert!(text.len() > base && text.len() <= MAX_TOKEN_BYTES);
        assert!(QueryContinuation::decode(&text, "q1", "cross").is_ok());
    }

    proptest! {
        #[test]
        fn no_input_panics(s in ".{0,300}") {
            let _ = QueryContinuation::decode(&s, "q1", "cross");
            let _ = QueryContinuation::decode(&format!("cq2.{s}"), "q1", "cross");
        }

        #[test]
        fn any_byte_flip_is_refused_or_decodes_to_a_checked_token(pos in 4usize..200, bit in 0u8..6) {
            let text = sample().encode().unwrap();
            let mut bytes = text.into_bytes();
            let pos = pos % bytes.len();
            let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
            let i = alphabet.iter().position(|&b| b == bytes[pos]).unwrap_or(0);
            bytes[pos] = alphabet[(i + 1 + bit as usize) % 64];
            let text = String::from_utf8(bytes).unwrap();
            if let Ok(t) = QueryContinuation::decode(&text, "q1", "cross") {
                prop_assert_eq!(t.query, "q1");
                prop_assert_eq!(t.scope, "cross");
            }
        }
    }
}
