//! A feed range: a span of the container's effective partition key space, `[min, max)`, as the
//! partition key range feed writes its bounds. Opaque to callers: they list them, hand them out
//! to consumers, and store them as strings.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::CosmosError;
use crate::protocol::EPK_MAX;
use crate::query::{KeySpan, QueryScope};

/// The most characters of one bound (a hierarchical key of three levels is 96 hex digits).
const MAX_BOUND_LEN: usize = 128;

/// A span of a container's partition key space. Serializable; [`FeedRange::to_token`] and
/// [`FeedRange::from_token`] carry it as one string.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FeedRange {
    min: String,
    max: String,
}

impl fmt::Debug for FeedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FeedRange[{:?}, {:?})", self.min, self.max)
    }
}

impl FeedRange {
    /// `[min, max)`; bounds are upper-case hex (`""` the start of the space, `"FF"` its end).
    pub fn new(min: impl Into<String>, max: impl Into<String>) -> Result<Self, CosmosError> {
        let (min, max) = (min.into(), max.into());
        for bound in [&min, &max] {
            if bound.len() > MAX_BOUND_LEN
                || !bound
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('A'..='F').contains(&c))
            {
                return Err(CosmosError::invalid_input(format!(
                    "a feed range bound must be at most {MAX_BOUND_LEN} upper-case hex digits; got {} characters",
                    bound.len()
                )));
            }
        }
        if min >= max {
            return Err(CosmosError::invalid_input(format!(
                "the feed range [{min:?}, {max:?}) is empty"
            )));
        }
        Ok(FeedRange { min, max })
    }

    /// The whole partition key space.
    pub fn full() -> Self {
        FeedRange {
            min: String::new(),
            max: EPK_MAX.to_owned(),
        }
    }

    /// The inclusive lower bound.
    pub fn min(&self) -> &str {
        &self.min
    }

    /// The exclusive upper bound.
    pub fn max(&self) -> &str {
        &self.max
    }

    /// The range as one string (JSON), for storing or handing to another process.
    pub fn to_token(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A range from [`FeedRange::to_token`]'s string; an error says what was wrong.
    pub fn from_token(token: &str) -> Result<Self, CosmosError> {
        if token.len() > 2 * MAX_BOUND_LEN + 64 {
            return Err(CosmosError::invalid_input(format!(
                "a feed range token is at most {} characters; got {}",
                2 * MAX_BOUND_LEN + 64,
                token.len()
            )));
        }
        let raw: FeedRange = serde_json::from_str(token)
            .map_err(|e| CosmosError::invalid_input(format!("not a feed range token: {e}")))?;
        FeedRange::new(raw.min, raw.max)
    }

    /// The part both ranges cover, if any.
    pub(crate) fn intersect(&self, other: &FeedRange) -> Option<FeedRange> {
        let min = self.min.as_str().max(other.min.as_str());
        let max = self.max.as_str().min(other.max.as_str());
        (min < max).then(|| FeedRange {
            min: min.to_owned(),
            max: max.to_owned(),
        })
    }

    pub(crate) fn from_bounds(min: &str, max: &str) -> Self {
        FeedRange {
            min: min.to_owned(),
            max: max.to_owned(),
        }
    }
}

impl From<FeedRange> for QueryScope {
    /// A query scoped to this feed range.
    fn from(range: FeedRange) -> Self {
        QueryScope::FeedRange(KeySpan {
            min: range.min,
            max: range.max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_bad_ones_are_refused() {
        let r = FeedRange::new("", "3F").unwrap();
        assert_eq!(FeedRange::from_token(&r.to_token()).unwrap(), r);
        for bad in [
            "",
            "{}",
            r#"{"min":"3F","max":"3F"}"#,
            r#"{"min":"zz","max":"FF"}"#,
        ] {
            assert!(FeedRange::from_token(bad).is_err(), "{bad}");
        }
        assert!(FeedRange::from_token(&"A".repeat(1000)).is_err());
    }

    #[test]
    fn intersections() {
        let full = FeedRange::full();
        let low = FeedRange::new("", "80").unwrap();
        let high = FeedRange::new("80", "FF").unwrap();
        assert_eq!(full.intersect(&low), Some(low.clone()));
        assert_eq!(low.intersect(&high), None);
        let mid = FeedRange::new("40", "C0").unwrap();
        assert_eq!(
            mid.intersect(&high),
            Some(FeedRange::new("80", "C0").unwrap())
        );
    }
}
