//! The protocol layer's own error: a value that does not fit the service's rules (an id, a
//! partition key, a session token, an endpoint URL). It becomes a [`crate::CosmosError`] of kind
//! `InvalidInput` through `From`, so callers above use `?` unchanged.

use std::fmt;

/// A value refused by the protocol's rules, with a message that says what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError {
    message: String,
}

impl ProtocolError {
    /// A refusal saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// What was wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ProtocolError {}
