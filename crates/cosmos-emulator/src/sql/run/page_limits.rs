//! What one page of a query may use: the work and time a page may take before it ends (with a
//! continuation), the memory a query that must see every row may hold while it is built, and the
//! memory all queries together may hold between and during their pages.

use std::time::Duration;

/// The page budget of queries (configurable for tests; the defaults are the service's scale).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueryLimits {
    /// Units of work (`crate::sql::meter`: evaluated expressions, bound rows, bytes read and
    /// built) a page may use before it ends; also the most one PATCH condition (or one batch's
    /// conditions) may use.
    pub page_work: u64,
    /// Time a page may take before it ends (and one PATCH condition).
    pub page_time: Duration,
    /// Bytes a query that must see every row (ORDER BY, aggregates, GROUP BY, DISTINCT) may hold
    /// while its answer is built; past it the query is refused.
    pub build_bytes: usize,
    /// Bytes all queries may hold at once: answers kept between pages, answers being built, and
    /// the builds of pages in progress. Kept answers make room first; a page that still finds no
    /// room answers 429.
    pub memory_bytes: usize,
    /// How long a kept answer or a shelved build stays unused before it is dropped.
    pub state_idle: Duration,
}

impl Default for QueryLimits {
    fn default() -> Self {
        Self {
            page_work: 1_000_000,
            page_time: Duration::from_secs(2),
            build_bytes: 256 * 1024 * 1024,
            memory_bytes: 512 * 1024 * 1024,
            state_idle: Duration::from_secs(30),
        }
    }
}
