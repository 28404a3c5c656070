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
    /// Within one feed range (`ContainerClient::feed_ranges`): the ranges it overlaps, each asked
    /// for its part only. Built with `QueryScope::from(feed_range)`; several such queries, one per
    /// feed range, read a container in parallel, each with its own continuation.
    FeedRange(KeySpan),
}

/// The effective partition key span `[min, max)` of a [`QueryScope::FeedRange`], taken from a
/// checked feed range.
#[derive(Clone, Debug, PartialEq)]
pub struct KeySpan {
    pub(crate) min: String,
    pub(crate) max: String,
}

impl QueryScope {
    /// The scope as text (binds continuation tokens to it).
    pub(crate) fn fingerprint(&self) -> String {
        match self {
            QueryScope::CrossPartition => "*".to_owned(),
            QueryScope::PartitionKey(pk) => pk.as_json().to_owned(),
            QueryScope::FeedRange(span) => format!("[{},{})", span.min, span.max),
        }
    }
}

/// The default number of page requests in flight at once for a cross-partition query.
pub const DEFAULT_MAX_CONCURRENCY: usize = 4;
/// The most page requests one query may have in flight.
pub const MAX_CONCURRENCY_LIMIT: usize = 64;

/// A query's options. The per-call options of every page request (session token, consistency,
/// excluded regions, availability strategy) have the names of `ItemOptions`'s; set ones win over
/// the container handle's options.
///
/// ```
/// use cosmos_driver::prelude::*;
///
/// let options = QueryOptions::new()
///     .with_max_item_count(50)
///     .with_consistency_level(ConsistencyLevel::Eventual)
///     .with_excluded_regions(["West US"]);
/// assert_eq!(options.request.consistency_level, Some(ConsistencyLevel::Eventual));
/// ```
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
    /// Per-request options of every page request (a field set here wins over the handle's
    /// options). Its `end_to_end_timeout` bounds each page
    /// request; a page that has no value yet also ends (empty, with a continuation) once that
    /// time has passed, checked between its requests, as with [`QueryOptions::page_time_limit`].
    pub request: OperationOptions,
    /// The most service pages one result page reads while it has no value yet: past it, the
    /// page ends empty with a continuation that resumes exactly where it stopped. A
    /// cross-partition aggregate or GROUP BY reads every range before its first value; this
    /// bounds the work behind each of its pages. `None`: no limit.
    pub page_read_limit: Option<u32>,
    /// How long one result page keeps reading service pages while it has no value yet: past it,
    /// the page ends empty (once the requests in flight are answered) with a continuation that
    /// resumes exactly where it stopped. `None`: no limit.
    pub page_time_limit: Option<Duration>,
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

    /// Ends a page that has no value yet after `n` service pages (at least 1), with a
    /// continuation.
    pub fn with_page_read_limit(mut self, n: u32) -> Self {
        self.page_read_limit = Some(n.max(1));
        self
    }

    /// Ends a page that has no value yet once it has read service pages for `d`, with a
    /// continuation.
    pub fn with_page_time_limit(mut self, d: Duration) -> Self {
        self.page_time_limit = Some(d);
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

crate::options::request_setters!(
    QueryOptions,
    "every request of the query (plan, range listing, pages)"
);
