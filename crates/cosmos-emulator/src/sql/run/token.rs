//! Query continuation tokens: where the next page starts, as a position (a query without ORDER BY:
//! an item in creation order within a range's span; the others: the container's stable document
//! order, effective partition key, id, row of the document's JOIN rows), never as an index into
//! a page, so a token stays valid when ranges split.
//!
//! A token is base64url of a small JSON object; anything else is refused with 400.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::epk::{epk_hex, Epk};
use crate::protocol::ApiError;
use crate::store::DocKey;

/// Longest continuation token accepted, in bytes.
pub(super) const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// An ORDER BY key value as a token carries it (`undefined` is its own case).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum SortKey {
    #[serde(rename = "u")]
    Undefined,
    #[serde(rename = "v")]
    Value(Value),
}

impl SortKey {
    pub(crate) fn from_val(v: &Option<Value>) -> Self {
        match v {
            None => Self::Undefined,
            Some(v) => Self::Value(v.clone()),
        }
    }

    pub(crate) fn to_val(&self) -> Option<Value> {
        match self {
            Self::Undefined => None,
            Self::Value(v) => Some(v.clone()),
        }
    }
}

/// A position in document order: the document's key and how many of its rows were consumed (a
/// scan resumes at that row of that document).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Position {
    pub epk: String,
    pub id: String,
    /// Rows of this document already consumed.
    pub row: u64,
}

impl Position {
    pub(crate) fn new(key: &DocKey, row: u64) -> Self {
        Self {
            epk: epk_hex(key.epk),
            id: key.id.clone(),
            row,
        }
    }

    /// The document key this position names.
    pub(crate) fn key(&self) -> Result<DocKey, ApiError> {
        let epk = Epk::parse_hex(&self.epk).map_err(|_| malformed())?;
        Ok(DocKey {
            epk,
            id: self.id.clone(),
        })
    }
}

/// A position in creation order (how a query without ORDER BY lists items, range by range): go
/// on in the range holding `range` (an EPK); when that range lies within `span` (the range the
/// position was taken in, `[min, max)`, no max: the end), start at the item whose ordinal
/// (`_rid` counter, marker) is `at`, its first `row` rows consumed; otherwise from its start.
/// Across a split the children of the range hold what it held, and every item created in them
/// later comes after `at`, so the position holds in each of them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct CreatedAt {
    pub range: String,
    pub span: (String, Option<String>),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<(u64, u16)>,
    pub row: u64,
}

impl CreatedAt {
    /// The EPKs this position names: the range to go on in and the span.
    pub(crate) fn epks(&self) -> Result<(Epk, Epk, Option<Epk>), ApiError> {
        let parse = |t: &str| Epk::parse_hex(t).map_err(|_| malformed());
        let max = match &self.span.1 {
            Some(t) => Some(parse(t)?),
            None => None,
        };
        Ok((parse(&self.range)?, parse(&self.span.0)?, max))
    }
}

/// Where the next page of a query starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k")]
pub(crate) enum QueryToken {
    /// A query without ORDER BY resumes at `at` in creation order; `seen` rows have passed the
    /// filter so far (for OFFSET/LIMIT/TOP).
    #[serde(rename = "s")]
    Scan { at: CreatedAt, seen: u64 },
    /// An ORDER BY query resumes after the row with these keys at `at`.
    #[serde(rename = "o")]
    Order {
        keys: Vec<SortKey>,
        at: Position,
        seen: u64,
    },
    /// A query answered from all its rows (aggregates, GROUP BY, DISTINCT) resumes at result `n`.
    #[serde(rename = "r")]
    Results { n: u64 },
    /// A per-range aggregate query of a query plan, answered in partial aggregates page by page,
    /// resumes at `at`.
    #[serde(rename = "p")]
    Partial { at: Position },
    /// A query that must see every row is still reading its scope: build `id` reads on at `at`
    /// (from the start when absent); once built, its pages resume after `then` (an `Order` or
    /// `Results` token; from the first result when absent).
    #[serde(rename = "b")]
    Build {
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<Position>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        then: Option<Box<QueryToken>>,
    },
    /// A query ranked by `ORDER BY RANK` within one partition key is still running its plan:
    /// where it stands is kept under number `id` (see `ranked.rs`).
    #[serde(rename = "k")]
    Ranked { id: u64 },
}

fn malformed() -> ApiError {
    ApiError::bad_request(
        "The continuation token is malformed: send back exactly the x-ms-continuation value a previous page of this query returned.",
    )
}

impl QueryToken {
    pub(crate) fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).unwrap_or_default())
    }

    pub(crate) fn decode(text: &str) -> Result<Self, ApiError> {
        let text = text.trim();
        if text.len() > MAX_TOKEN_BYTES {
            return Err(ApiError::bad_request(format!(
                "The continuation token is longer than {MAX_TOKEN_BYTES} bytes, the limit."
            )));
        }
        let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| malformed())?;
        let token: Self = serde_json::from_slice(&bytes).map_err(|_| malformed())?;
        match &token {
            QueryToken::Scan { at, .. } => {
                at.epks()?;
            }
            QueryToken::Order { at, .. } | QueryToken::Partial { at } => {
                at.key()?;
            }
            QueryToken::Results { .. } | QueryToken::Ranked { .. } => {}
            QueryToken::Build { at, then, .. } => {
                if let Some(at) = at {
                    at.key()?;
                }
                match then.as_deref() {
                    None | Some(QueryToken::Results { .. }) => {}
                    Some(QueryToken::Order { at, .. }) => {
                        at.key()?;
                    }
                    Some(_) => return Err(malformed()),
                }
            }
        }
        Ok(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_bad_ones_are_refused() {
        let key = DocKey {
            epk: Epk::single(0xABCD),
            id: "x\"y".into(),
        };
        for token in [
            QueryToken::Scan {
                at: CreatedAt {
                    range: "80".into(),
                    span: ("".into(), None),
                    at: Some((7, 2)),
                    row: 2,
                },
                seen: 5,
            },
            QueryToken::Order {
                keys: vec![
                    SortKey::Undefined,
                    SortKey::Value(Value::from(9007199254740993i64)),
                ],
                at: Position::new(&key, 0),
                seen: 0,
            },
            QueryToken::Results { n: 7 },
            QueryToken::Ranked { id: 12 },
            QueryToken::Partial {
                at: Position::new(&key, 0),
            },
            QueryToken::Build {
                id: 9,
                at: None,
                then: None,
            },
            QueryToken::Build {
                id: u64::MAX,
                at: Some(Position::new(&key, 0)),
                then: Some(Box::new(QueryToken::Order {
                    keys: vec![SortKey::Value(Value::from("k"))],
                    at: Position::new(&key, 1),
                    seen: 3,
                })),
            },
        ] {
            assert_eq!(QueryToken::decode(&token.encode()).unwrap(), token);
        }
        for bad in [
            "",
            "!!",
            "e30",
            "eyJrIjoicyJ9",
            // A build whose `then` is another build, or a scan.
            &URL_SAFE_NO_PAD.encode(r#"{"k":"b","id":1,"then":{"k":"b","id":2}}"#),
            &URL_SAFE_NO_PAD.encode(
                r#"{"k":"b","id":1,"then":{"k":"s","at":{"range":"","span":["",null],"row":0},"seen":0}}"#,
            ),
            // A scan position that names no EPK.
            &URL_SAFE_NO_PAD.encode(r#"{"k":"s","at":{"range":"zz","span":["",null],"row":0},"seen":0}"#),
            // A build whose position names no EPK.
            &URL_SAFE_NO_PAD.encode(r#"{"k":"b","id":1,"at":{"epk":"zz","id":"a","row":0}}"#),
            &"A".repeat(MAX_TOKEN_BYTES + 1),
        ] {
            assert_eq!(QueryToken::decode(bad).unwrap_err().status, 400, "{bad}");
        }
    }
}
