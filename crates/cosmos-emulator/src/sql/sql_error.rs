//! Errors of parsing and evaluating a query: what was wrong and, when known, where.

use std::fmt;

/// A query the emulator refuses (the handlers answer 400 with its text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    /// Character offset in the query text, when the problem has one.
    pub position: Option<usize>,
    pub message: String,
}

impl SqlError {
    /// An error at character offset `position`.
    pub fn at(position: usize, message: impl Into<String>) -> Self {
        Self {
            position: Some(position),
            message: message.into(),
        }
    }

    /// An error without a position (evaluation, limits of the whole text).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            position: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(f, "{} (at position {p})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for SqlError {}
