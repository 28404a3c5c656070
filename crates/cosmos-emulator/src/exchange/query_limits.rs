//! What one page of a query may use: the work and time a page may take before it ends (with a
//! continuation), and the memory a query that must see every row may hold while it is built.

use std::time::Duration;

/// The page budget of queries (configurable for tests; the defaults are the service's scale).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueryLimits {
    /// Rows bound (JOINs and subqueries included) before a page ends.
    pub page_work: u64,
    /// Time a page may take before it ends.
    pub page_time: Duration,
    /// Bytes a query that must see every row (ORDER BY, aggregates, GROUP BY, DISTINCT) may hold
    /// while its answer is built; past it the query is refused.
    pub build_bytes: usize,
}

impl Default for QueryLimits {
    fn default() -> Self {
        Self {
            page_work: 1_000_000,
            page_time: Duration::from_secs(2),
            build_bytes: 256 * 1024 * 1024,
        }
    }
}
