//! Queries: the query and its body, the gateway's query plan, the features the driver serves,
//! and the pure pieces that combine per-range results (ORDER BY merge, aggregates, GROUP BY,
//! DISTINCT, OFFSET/LIMIT/TOP) and resume them (the composite continuation token).

mod aggregates;
mod blocking_stage;
mod continuation_token;
mod group_by;
mod hybrid;
mod page_source;
mod query_execution;
mod query_features;
mod query_operation;
mod query_options;
mod query_pager;
mod query_plan;
mod query_spec;
mod query_stream;
mod range_merge;
mod result_shaping;
mod token_text;
mod value_order;
mod vector_merge;
mod vector_query;

pub use token_text::MAX_TOKEN_BYTES;
pub use page_source::{
    page_operation, plan_operation, PageSettings, PageTarget, QueryPageSource, RangePage,
};
pub use query_options::{QueryOptions, QueryScope, DEFAULT_MAX_CONCURRENCY, MAX_CONCURRENCY_LIMIT};
pub use query_pager::{QueryPager, QuerySummary, RawQueryPage};
pub use query_plan::{AggregateKind, DistinctType, QueryInfo, QueryPlan, QueryRange, SortOrder};
pub use query_spec::{Query, QueryParameter, MAX_PARAMETERS};
pub(crate) use query_stream::item_error;
pub use query_stream::{QueryItems, QueryPage, QueryPages};
pub use range_merge::TargetRange;
pub use vector_query::{VectorHit, MAX_VECTOR_TOP, VECTOR_PARAMETER};
