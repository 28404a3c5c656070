//! The query plan the gateway answers to a plan request (`x-ms-cosmos-is-query-plan-request`):
//! what the client must do to combine the per-range results of a cross-partition query.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The plan: the version of its shape, what to do with the results, and the effective partition
/// key ranges the query touches.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryPlan {
    /// The version of the plan's shape (2 today).
    #[serde(default)]
    pub partitioned_query_execution_info_version: u32,
    /// How to combine the per-range results.
    pub query_info: QueryInfo,
    /// The effective partition key ranges the query can touch.
    #[serde(default)]
    pub query_ranges: Vec<QueryRange>,
    /// Present for hybrid (full-text and vector) search (`crate::query::hybrid`).
    #[serde(default)]
    pub hybrid_search_query_info: Option<serde_json::Value>,
}

/// The query's post-processing: the fields the official SDKs read.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct QueryInfo {
    /// Whether (and how) duplicates must be removed across ranges.
    pub distinct_type: DistinctType,
    /// `TOP n`.
    pub top: Option<u64>,
    /// `OFFSET n`.
    pub offset: Option<u64>,
    /// `LIMIT n`.
    pub limit: Option<u64>,
    /// The direction of each `ORDER BY` key.
    pub order_by: Vec<SortOrder>,
    /// The text of each `ORDER BY` key.
    pub order_by_expressions: Vec<String>,
    /// The text of each `GROUP BY` key.
    pub group_by_expressions: Vec<String>,
    /// The projected aliases of a `GROUP BY` query.
    pub group_by_aliases: Vec<String>,
    /// The aggregates of a `SELECT VALUE` aggregate query.
    pub aggregates: Vec<AggregateKind>,
    /// For each projected alias of a `GROUP BY` (or non-VALUE aggregate) query, its aggregate;
    /// `None` for a grouping key.
    pub group_by_alias_to_aggregate_type: BTreeMap<String, Option<AggregateKind>>,
    /// The query each range runs instead of the original (ORDER BY, aggregates, GROUP BY).
    pub rewritten_query: String,
    /// `SELECT VALUE`.
    pub has_select_value: bool,
    /// `DCOUNT`-style distinct counting, which the driver does not run.
    pub d_count_info: Option<serde_json::Value>,
    /// ORDER BY that must be sorted in full on the client (vector search, `crate::query::merge::vector_merge`).
    pub has_non_streaming_order_by: bool,
}

/// The plan's `distinctType`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum DistinctType {
    /// No `DISTINCT`.
    #[default]
    None,
    /// `DISTINCT` over results that arrive ordered: duplicates are adjacent.
    Ordered,
    /// `DISTINCT` over unordered results: every value seen must be remembered.
    Unordered,
}

/// The direction of one `ORDER BY` key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum SortOrder {
    /// `ASC`
    Ascending,
    /// `DESC`
    Descending,
}

/// An aggregate the plan asks the client to combine. Names the driver does not know are kept so
/// that the refusal can say which one.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(from = "String")]
pub enum AggregateKind {
    /// `COUNT`
    Count,
    /// `SUM`
    Sum,
    /// `MIN`
    Min,
    /// `MAX`
    Max,
    /// `AVG`, combined from partial sums and counts.
    Average,
    /// Any other aggregate (e.g. `MakeList`, `MakeSet`, `CountIf`).
    Other(String),
}

impl From<String> for AggregateKind {
    fn from(s: String) -> Self {
        match s.as_str() {
            "Count" => AggregateKind::Count,
            "Sum" => AggregateKind::Sum,
            "Min" => AggregateKind::Min,
            "Max" => AggregateKind::Max,
            "Average" => AggregateKind::Average,
            _ => AggregateKind::Other(s),
        }
    }
}

/// One effective partition key range of `queryRanges`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryRange {
    /// The lower bound (hex effective partition key; `""` is the start of the key space).
    pub min: String,
    /// The upper bound (`"FF"` is the end of the key space).
    pub max: String,
    /// Whether `min` belongs to the range.
    #[serde(default = "yes")]
    pub is_min_inclusive: bool,
    /// Whether `max` belongs to the range.
    #[serde(default)]
    pub is_max_inclusive: bool,
}

fn yes() -> bool {
    true
}

/// The largest plan body accepted.
pub(crate) const MAX_PLAN_BYTES: usize = 1024 * 1024;

impl QueryPlan {
    /// Parses a plan response body, refusing an oversized or malformed one with a message that
    /// says what was wrong.
    pub fn from_body(body: &[u8]) -> Result<QueryPlan, String> {
        if body.len() > MAX_PLAN_BYTES {
            return Err(format!(
                "the query plan is {} bytes; at most {MAX_PLAN_BYTES} are accepted",
                body.len()
            ));
        }
        serde_json::from_slice(body).map_err(|e| format!("the query plan cannot be read: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_shape_the_gateway_answers() {
        let body = br#"{"partitionedQueryExecutionInfoVersion":2,
          "queryInfo":{"distinctType":"Ordered","top":5,"offset":null,"limit":null,
            "orderBy":["Descending","Ascending"],"orderByExpressions":["c.n","c.s"],
            "groupByExpressions":[],"groupByAliases":[],"aggregates":["Average"],
            "groupByAliasToAggregateType":{"n":"Count","k":null},
            "rewrittenQuery":"SELECT c._rid FROM c","hasSelectValue":true,
            "dCountInfo":null,"hasNonStreamingOrderBy":false},
          "queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}"#;
        let plan = QueryPlan::from_body(body).unwrap();
        assert_eq!(plan.partitioned_query_execution_info_version, 2);
        let qi = &plan.query_info;
        assert_eq!(qi.distinct_type, DistinctType::Ordered);
        assert_eq!(qi.top, Some(5));
        assert_eq!(
            qi.order_by,
            vec![SortOrder::Descending, SortOrder::Ascending]
        );
        assert_eq!(qi.aggregates, vec![AggregateKind::Average]);
        assert_eq!(
            qi.group_by_alias_to_aggregate_type.get("n"),
            Some(&Some(AggregateKind::Count))
        );
        assert_eq!(qi.group_by_alias_to_aggregate_type.get("k"), Some(&None));
        assert!(qi.has_select_value);
        assert_eq!(plan.query_ranges.len(), 1);
        assert_eq!(plan.query_ranges[0].max, "FF");
    }

    #[test]
    fn unknown_aggregates_keep_their_name() {
        let body = br#"{"queryInfo":{"aggregates":["MakeSet"]}}"#;
        let plan = QueryPlan::from_body(body).unwrap();
        assert_eq!(
            plan.query_info.aggregates,
            vec![AggregateKind::Other("MakeSet".into())]
        );
    }

    #[test]
    fn malformed_and_oversized_plans_are_refused() {
        assert!(QueryPlan::from_body(b"{")
            .unwrap_err()
            .contains("cannot be read"));
        assert!(QueryPlan::from_body(br#"{"queryInfo":{"distinctType":"Sideways"}}"#).is_err());
        let big = vec![b' '; MAX_PLAN_BYTES + 1];
        assert!(QueryPlan::from_body(&big).unwrap_err().contains("at most"));
        let deep = "[".repeat(10_000);
        assert!(QueryPlan::from_body(deep.as_bytes()).is_err());
    }
}
