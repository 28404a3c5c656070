//! The part of a query plan that tells the SDK what to do on top of the per-range results: the
//! shape both a plain plan and each component of a hybrid search plan answer with.

use serde::Serialize;
use serde_json::{Map, Value};

/// What the SDK must do on top of the per-range results.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueryInfo {
    pub distinct_type: &'static str,
    pub top: Option<u64>,
    pub offset: Option<u64>,
    pub limit: Option<u64>,
    pub order_by: Vec<&'static str>,
    pub order_by_expressions: Vec<String>,
    pub group_by_expressions: Vec<String>,
    pub group_by_aliases: Vec<String>,
    pub aggregates: Vec<&'static str>,
    pub group_by_alias_to_aggregate_type: Map<String, Value>,
    pub rewritten_query: String,
    pub has_select_value: bool,
    pub has_non_streaming_order_by: bool,
}
