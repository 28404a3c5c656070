//! Consistency levels.

use std::fmt;

use http::HeaderValue;

/// A Cosmos DB consistency level, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConsistencyLevel {
    /// Linearizable reads.
    Strong,
    /// Reads lag writes by at most a configured bound.
    BoundedStaleness,
    /// Read-your-writes within a session (carried by session tokens).
    Session,
    /// Reads never see writes out of order.
    ConsistentPrefix,
    /// No ordering guarantee.
    Eventual,
}

impl ConsistencyLevel {
    /// The level as the service spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            ConsistencyLevel::Strong => "Strong",
            ConsistencyLevel::BoundedStaleness => "BoundedStaleness",
            ConsistencyLevel::Session => "Session",
            ConsistencyLevel::ConsistentPrefix => "ConsistentPrefix",
            ConsistencyLevel::Eventual => "Eventual",
        }
    }

    /// The `x-ms-consistency-level` header value.
    pub const fn header_value(self) -> HeaderValue {
        HeaderValue::from_static(self.as_str())
    }

    /// Parses the service's spelling, ignoring case.
    pub fn parse(text: &str) -> Option<Self> {
        [
            ConsistencyLevel::Strong,
            ConsistencyLevel::BoundedStaleness,
            ConsistencyLevel::Session,
            ConsistencyLevel::ConsistentPrefix,
            ConsistencyLevel::Eventual,
        ]
        .into_iter()
        .find(|l| l.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

impl fmt::Display for ConsistencyLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips() {
        for l in [
            ConsistencyLevel::Strong,
            ConsistencyLevel::Session,
            ConsistencyLevel::Eventual,
        ] {
            assert_eq!(ConsistencyLevel::parse(l.as_str()), Some(l));
        }
        assert_eq!(
            ConsistencyLevel::parse("session"),
            Some(ConsistencyLevel::Session)
        );
        assert_eq!(ConsistencyLevel::parse("nope"), None);
    }
}
