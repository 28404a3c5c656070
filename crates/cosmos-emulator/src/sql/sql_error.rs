//! Errors of parsing and evaluating a query: what was wrong and, when known, where.

use std::fmt;
use std::time::Duration;

/// Which budget ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The units of work a page (or condition) may use.
    Work(u64),
    /// The time a page (or condition) may take.
    Time(Duration),
}

/// A query the emulator refuses (the handlers answer 400 with its text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    /// Character offset in the query text, when the problem has one.
    pub position: Option<usize>,
    pub message: String,
    /// Set when evaluation stopped because a budget ran out (not because the query is wrong):
    /// the executor ends the page there, or answers 400 naming the limit.
    pub limit: Option<Limit>,
}

impl SqlError {
    /// An error at character offset `position`.
    pub fn at(position: usize, message: impl Into<String>) -> Self {
        Self {
            position: Some(position),
            message: message.into(),
            limit: None,
        }
    }

    /// An error without a position (evaluation, limits of the whole text).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            position: None,
            message: message.into(),
            limit: None,
        }
    }

    /// Evaluation stopped at `limit`.
    pub fn budget(limit: Limit) -> Self {
        let message = match limit {
            Limit::Work(units) => format!("The evaluation needs more than {units} units of work."),
            Limit::Time(t) => format!("The evaluation takes longer than {} ms.", t.as_millis()),
        };
        Self {
            position: None,
            message,
            limit: Some(limit),
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
