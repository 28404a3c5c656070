//! Queries: the query and its body, its options, one query as a pure state machine
//! (`query_execution`), the pager that runs it over a page source, and the typed streams. The
//! pure pieces are in one folder per stage:
//!
//! - `plan/`: the gateway's query plan, the features the driver serves, a page as an operation;
//! - `merge/`: per-range results merged (ORDER BY over range cursors, value order, vector merge);
//! - `aggregate/`: aggregates, GROUP BY, the blocking stage, DISTINCT/OFFSET/LIMIT/TOP;
//! - `continuation/`: the composite continuation token and its text encoding.

mod aggregate;
mod continuation;
mod driver_page_source;
mod hybrid;
mod merge;
mod page_source;
mod plan;
mod query_execution;
mod query_options;
mod query_pager;
mod query_spec;
mod query_stream;
mod vector_query;

pub use continuation::token_text::MAX_TOKEN_BYTES;
pub(crate) use driver_page_source::DriverPageSource;
pub use merge::range_merge::TargetRange;
pub use page_source::{
    page_operation, plan_operation, PageSettings, PageTarget, QueryPageSource, RangePage,
};
pub use plan::query_plan::{
    AggregateKind, DistinctType, QueryInfo, QueryPlan, QueryRange, SortOrder,
};
pub use query_options::{
    KeySpan, QueryOptions, QueryScope, DEFAULT_MAX_CONCURRENCY, MAX_CONCURRENCY_LIMIT,
};
pub use query_pager::{QueryPager, QuerySummary, RawQueryPage};
pub use query_spec::{Query, QueryParameter, MAX_PARAMETERS};
pub(crate) use query_stream::item_error;
pub use query_stream::{QueryItems, QueryPage, QueryPages};
pub use vector_query::{VectorHit, MAX_VECTOR_TOP, VECTOR_PARAMETER};
