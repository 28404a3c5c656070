//! What a caller can set on a query: its scope, page size, parallelism, where to resume, the
//! metrics headers, deadlines for the whole query and for each page, and the per-request options
//! (session token, consistency, excluded regions, hedging) every page request carries.

use std::time::Duration;

use crate::options::OperationOptions;
use crate::protocol::PartitionKey;

/// Where a query runs.
#[derive(Clone, Debug, PartialEq)]
pub enum QueryScope {
    /// Over every partition: the driver asks the gateway for a plan and fans out over the ranges.
    CrossPartition,
    /// Within one partition key: one range, the query sent as written.
    PartitionKey(PartitionKey),
}

impl QueryScope {
    /// The scope as text (binds continuation tokens to it).
    pub(crate) fn fingerprint(&self) -> String {
        match self {
            QueryScope::CrossPartition => "*".to_owned(),
            QueryScope::PartitionKey(pk) => pk.as_json().to_owned(),
        }
    }
}

/// The default number of page requests in flight at once for a cross-partition query.
pub const DEFAULT_MAX_CONCURRENCY: usize = 4;
/// The most page requests one query may have in flight.
pub const MAX_CONCURRENCY_LIMIT: usize = 64;

/// A query's options.
#[derive(Clone, Debug, Default)]
pub struct QueryOptions {
    /// Items per page (the service's `x-ms-max-item-count`; its default when unset, 100).
    pub max_item_count: Option<u32>,
    /// Page requests in flight at once (default [`DEFAULT_MAX_CONCURRENCY`], at most
    /// [`MAX_CONCURRENCY_LIMIT`]).
    pub max_concurrency: Option<usize>,
    /// Resume from a page's continuation token.
    pub continuation: Option<String>,
    /// Ask the service for query metrics (`x-ms-documentdb-populatequerymetrics`).
    pub populate_query_metrics: bool,
    /// Ask the service for index metrics (`x-ms-cosmos-populateindexmetrics`).
    pub populate_index_metrics: bool,
    /// A deadline for the whole query, across pages.
    pub query_timeout: Option<Duration>,
    /// Per-request options of every page request; its `end_to_end_timeout` bounds each page.
    pub request: OperationOptions,
}

impl QueryOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the page size.
    pub fn with_max_item_count(mut self, n: u32) -> Self {
        self.max_item_count = Some(n);
        self
    }

    /// Sets the number of page requests in flight.
    pub fn with_max_concurrency(mut self, n: usize) -> Self {
        self.max_concurrency = Some(n);
        self
    }

    /// Resumes from `token`.
    pub fn with_continuation(mut self, token: impl Into<String>) -> Self {
        self.continuation = Some(token.into());
        self
    }

    /// Sets a deadline for the whole query.
    pub fn with_query_timeout(mut self, d: Duration) -> Self {
        self.query_timeout = Some(d);
        self
    }

    /// Sets the per-request options of every page request.
    pub fn with_request_options(mut self, options: OperationOptions) -> Self {
        self.request = options;
        self
    }

    /// The effective number of page requests in flight.
    pub fn effective_concurrency(&self) -> usize {
        self.max_concurrency
            .unwrap_or(DEFAULT_MAX_CONCURRENCY)
            .clamp(1, MAX_CONCURRENCY_LIMIT)
    }
}
