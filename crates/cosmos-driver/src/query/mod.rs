//! Queries: the query and its body, the gateway's query plan, the features the driver serves,
//! and the pure pieces that combine per-range results (ORDER BY merge, aggregates, GROUP BY,
//! DISTINCT, OFFSET/LIMIT/TOP) and resume them (the composite continuation token).

mod aggregates;
mod blocking_stage;
mod continuation_token;
mod group_by;
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

pub use aggregates::{partial_of, Aggregator, Total};
pub use continuation_token::{KeyCell, LastKey, QueryContinuation, RangePosition, MAX_TOKEN_RANGES};
pub use token_text::MAX_TOKEN_BYTES;
pub use group_by::{GroupByMerge, MAX_GROUPS};
pub use page_source::{
    page_operation, plan_operation, PageSettings, PageTarget, QueryPageSource, RangePage,
};
pub use query_execution::{overlapping_ranges, resume_cursors, Next, PageRequest, QueryExecution};
pub use query_features::{
    check_plan, Aggregation, ExecutionPlan, GroupedAggregation, UnsupportedFeature, QUERY_VERSION,
    SUPPORTED_QUERY_FEATURES,
};
pub use query_options::{QueryOptions, QueryScope, DEFAULT_MAX_CONCURRENCY, MAX_CONCURRENCY_LIMIT};
pub use query_pager::{QueryPager, QuerySummary, RawQueryPage};
pub use query_plan::{AggregateKind, DistinctType, QueryInfo, QueryPlan, QueryRange, SortOrder};
pub use query_spec::{Query, QueryParameter, MAX_PARAMETERS};
pub(crate) use query_stream::item_error;
pub use query_stream::{QueryItems, QueryPage, QueryPages};
pub use range_merge::{MergeOrder, MergeStep, RangeCursor, RangeMerge, RangeRow, TargetRange};
pub use result_shaping::{
    value_hash, ResultShaper, Shaped, ShapingState, ValueHash, MAX_DISTINCT_VALUES,
};
pub use value_order::{canonical_text, compare_keys, compare_values};
