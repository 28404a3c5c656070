//! Which query features the driver can serve: the `x-ms-cosmos-supported-query-features` value it
//! declares on plan requests, and the check that turns a gateway plan into the driver's execution
//! plan or refuses it with an error naming the feature.

use crate::query::plan::query_plan::{
    AggregateKind, DistinctType, QueryPlan, QueryRange, SortOrder,
};

/// The features declared on every plan request, as the official SDKs spell them. The gateway
/// refuses a plan needing a feature not declared (`NonValueAggregate`: an aggregate without
/// `VALUE`, which the driver combines as a grouped query).
pub(crate) const SUPPORTED_QUERY_FEATURES: &str =
    "Aggregate,CompositeAggregate,Distinct,GroupBy,MultipleAggregates,MultipleOrderBy,OffsetAndLimit,OrderBy,Top,NonValueAggregate,NonStreamingOrderBy,HybridSearch,WeightedRankFusion";

/// The query-plan version header value (`x-ms-cosmos-query-version`) the SDKs send.
pub(crate) const QUERY_VERSION: &str = "1.0";

/// The marker the gateway leaves in a rewritten ORDER BY query for the client's resume filter.
const ORDER_BY_FILTER_MARKER: &str = "{documentdb-formattableorderbyquery-filter}";

/// How per-range results are combined into the query's result.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Aggregation {
    /// Results pass through.
    None,
    /// `SELECT VALUE AGG(...)`: each range answers `[{"item": partial}]`; one value results.
    Value(Vec<AggregateKind>),
    /// `GROUP BY` (or a non-VALUE aggregate): each range answers
    /// `{"groupByItems": [...], "payload": ...}`; one row per group results.
    Grouped(GroupedAggregation),
    /// A vector search (non-streaming ORDER BY): every range row
    /// `{"orderByItems": [...], "payload": ...}` is read and the best `k` kept
    /// (`crate::query::merge::vector_merge`).
    TopK {
        /// The score's direction.
        orders: Vec<SortOrder>,
        /// Rows kept.
        k: u64,
    },
}

/// The columns of a grouped query.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GroupedAggregation {
    /// For `SELECT VALUE` over groups: the value's aggregate (`None` for a grouping key).
    pub select_value: Option<Option<AggregateKind>>,
    /// Otherwise: each projected alias and its aggregate (`None` for a grouping key).
    pub aliases: Vec<(String, Option<AggregateKind>)>,
}

/// What the driver does to run a cross-partition query: checked, plain data.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ExecutionPlan {
    /// The query each range runs (the original when the plan has no rewrite).
    pub range_query: Option<String>,
    /// ORDER BY directions; empty when the ranges are read one after the other.
    pub order_by: Vec<SortOrder>,
    /// Aggregation of the per-range results.
    pub aggregation: Aggregation,
    /// Duplicate removal.
    pub distinct: DistinctType,
    /// `OFFSET n`.
    pub offset: Option<u64>,
    /// `LIMIT n`.
    pub limit: Option<u64>,
    /// `TOP n`.
    pub top: Option<u64>,
    /// The effective partition key ranges to read.
    pub ranges: Vec<QueryRange>,
}

impl ExecutionPlan {
    #[cfg(test)]
    /// Whether the result can only be produced once every range is drained.
    pub(crate) fn is_blocking(&self) -> bool {
        !matches!(self.aggregation, Aggregation::None)
    }
}

/// The feature a plan needs that the driver cannot serve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnsupportedFeature(pub String);

impl std::fmt::Display for UnsupportedFeature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the query needs {}, which this driver does not support",
            self.0
        )
    }
}

/// The plan of a vector search: the ranges read one after the other, every row offered to a
/// top-k merge of TOP (or OFFSET + LIMIT) rows, then OFFSET/LIMIT/TOP as usual.
fn top_k_plan(plan: &QueryPlan) -> Result<ExecutionPlan, UnsupportedFeature> {
    let qi = &plan.query_info;
    if qi.order_by.len() != 1 || qi.distinct_type != DistinctType::None {
        return Err(unsupported(
            "a vector search with several ORDER BY keys or DISTINCT",
        ));
    }
    let k = qi
        .top
        .or_else(|| qi.limit.map(|l| l.saturating_add(qi.offset.unwrap_or(0))))
        .ok_or_else(|| {
            unsupported("a vector search without TOP or LIMIT (its cost is unbounded)")
        })?;
    if k > crate::query::merge::vector_merge::MAX_TOP_K {
        return Err(unsupported(&format!(
            "a vector search of more than {} results",
            crate::query::merge::vector_merge::MAX_TOP_K
        )));
    }
    Ok(ExecutionPlan {
        range_query: (!qi.rewritten_query.is_empty())
            .then(|| qi.rewritten_query.replace(ORDER_BY_FILTER_MARKER, "true")),
        order_by: Vec::new(),
        aggregation: Aggregation::TopK {
            orders: qi.order_by.clone(),
            k,
        },
        distinct: qi.distinct_type,
        offset: qi.offset,
        limit: qi.limit,
        top: qi.top,
        ranges: plan.query_ranges.clone(),
    })
}

fn unsupported(feature: &str) -> UnsupportedFeature {
    UnsupportedFeature(feature.to_owned())
}

fn check_aggregate(kind: &AggregateKind) -> Result<(), UnsupportedFeature> {
    match kind {
        AggregateKind::Other(name) => Err(UnsupportedFeature(format!("the aggregate {name}"))),
        _ => Ok(()),
    }
}

/// Checks a gateway plan and turns it into an [`ExecutionPlan`].
pub(crate) fn check_plan(plan: &QueryPlan) -> Result<ExecutionPlan, UnsupportedFeature> {
    let qi = &plan.query_info;
    if plan
        .hybrid_search_query_info
        .as_ref()
        .is_some_and(|v| !v.is_null())
    {
        return Err(unsupported("hybrid search"));
    }
    if qi.has_non_streaming_order_by {
        return top_k_plan(plan);
    }
    if qi.d_count_info.as_ref().is_some_and(|v| !v.is_null()) {
        return Err(unsupported("DCOUNT"));
    }
    for kind in &qi.aggregates {
        check_aggregate(kind)?;
    }
    for kind in qi.group_by_alias_to_aggregate_type.values().flatten() {
        check_aggregate(kind)?;
    }
    if qi.order_by.len() != qi.order_by_expressions.len() && !qi.order_by_expressions.is_empty() {
        return Err(unsupported("ORDER BY with mismatched keys and directions"));
    }
    let grouped =
        !qi.group_by_expressions.is_empty() || !qi.group_by_alias_to_aggregate_type.is_empty();
    if grouped && !qi.order_by.is_empty() {
        return Err(unsupported("ORDER BY together with GROUP BY"));
    }
    let aggregation = if grouped {
        if qi.has_select_value {
            if qi.aggregates.len() > 1 {
                return Err(unsupported("several aggregates in one SELECT VALUE"));
            }
            Aggregation::Grouped(GroupedAggregation {
                select_value: Some(qi.aggregates.first().cloned()),
                aliases: Vec::new(),
            })
        } else {
            let mut aliases: Vec<(String, Option<AggregateKind>)> = Vec::new();
            // The projection order is `groupByAliases` when given; the map holds every alias.
            for alias in &qi.group_by_aliases {
                let kind = qi
                    .group_by_alias_to_aggregate_type
                    .get(alias)
                    .cloned()
                    .flatten();
                aliases.push((alias.clone(), kind));
            }
            for (alias, kind) in &qi.group_by_alias_to_aggregate_type {
                if !aliases.iter().any(|(a, _)| a == alias) {
                    aliases.push((alias.clone(), kind.clone()));
                }
            }
            Aggregation::Grouped(GroupedAggregation {
                select_value: None,
                aliases,
            })
        }
    } else if !qi.aggregates.is_empty() {
        Aggregation::Value(qi.aggregates.clone())
    } else {
        Aggregation::None
    };
    let range_query = (!qi.rewritten_query.is_empty())
        .then(|| qi.rewritten_query.replace(ORDER_BY_FILTER_MARKER, "true"));
    Ok(ExecutionPlan {
        range_query,
        order_by: qi.order_by.clone(),
        aggregation,
        distinct: qi.distinct_type,
        offset: qi.offset,
        limit: qi.limit,
        top: qi.top,
        ranges: plan.query_ranges.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(query_info: &str) -> QueryPlan {
        let body = format!(
            r#"{{"partitionedQueryExecutionInfoVersion":2,"queryInfo":{query_info},
            "queryRanges":[{{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}}]}}"#
        );
        QueryPlan::from_body(body.as_bytes()).unwrap()
    }

    #[test]
    fn refusals_name_the_feature() {
        let table = [
            (r#"{"aggregates":["MakeSet"]}"#, "the aggregate MakeSet"),
            (
                r#"{"groupByExpressions":["c.k"],"groupByAliasToAggregateType":{"l":"MakeList"}}"#,
                "the aggregate MakeList",
            ),
            (
                r#"{"hasNonStreamingOrderBy":true,"orderBy":["Descending"],"orderByExpressions":["VectorDistance(c.e, [1])"]}"#,
                "without TOP or LIMIT",
            ),
            (r#"{"dCountInfo":{"dCountAlias":"n"}}"#, "DCOUNT"),
            (
                r#"{"groupByExpressions":["c.k"],"orderBy":["Ascending"],"orderByExpressions":["c.k"]}"#,
                "ORDER BY together with GROUP BY",
            ),
            (
                r#"{"groupByExpressions":["c.k"],"hasSelectValue":true,"aggregates":["Sum","Max"]}"#,
                "several aggregates",
            ),
        ];
        for (qi, feature) in table {
            let e = check_plan(&plan(qi)).unwrap_err();
            assert!(e.to_string().contains(feature), "{qi}: {e}");
            assert!(e.to_string().contains("does not support"));
        }
        let mut hybrid = plan("{}");
        hybrid.hybrid_search_query_info = Some(serde_json::json!({"globalStatisticsQuery": ""}));
        assert!(check_plan(&hybrid).unwrap_err().0.contains("hybrid search"));
    }

    #[test]
    fn plans_map_to_their_execution() {
        let p = check_plan(&plan(
            r#"{"orderBy":["Descending"],"orderByExpressions":["c.n"],"top":3,
            "rewrittenQuery":"SELECT c._rid, [{\"item\": c.n}] AS orderByItems, c AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY c.n DESC"}"#,
        ))
        .unwrap();
        assert_eq!(p.order_by, vec![SortOrder::Descending]);
        assert_eq!(p.top, Some(3));
        assert!(p.range_query.as_deref().unwrap().contains("WHERE (true)"));
        assert_eq!(p.aggregation, Aggregation::None);
        assert!(!p.is_blocking());

        let p = check_plan(&plan(r#"{"aggregates":["Count"],"hasSelectValue":true}"#)).unwrap();
        assert_eq!(
            p.aggregation,
            Aggregation::Value(vec![AggregateKind::Count])
        );
        assert!(p.range_query.is_none());

        let p = check_plan(&plan(
            r#"{"groupByExpressions":["c.k"],"groupByAliases":["k","n"],
            "groupByAliasToAggregateType":{"n":"Count","k":null}}"#,
        ))
        .unwrap();
        assert_eq!(
            p.aggregation,
            Aggregation::Grouped(GroupedAggregation {
                select_value: None,
                aliases: vec![("k".into(), None), ("n".into(), Some(AggregateKind::Count))],
            })
        );

        let p = check_plan(&plan(r#"{"groupByAliasToAggregateType":{"total":"Sum"}}"#)).unwrap();
        assert!(p.is_blocking());

        let p = check_plan(&plan(
            r#"{"groupByExpressions":["c.k"],"hasSelectValue":true,"aggregates":[]}"#,
        ))
        .unwrap();
        assert_eq!(
            p.aggregation,
            Aggregation::Grouped(GroupedAggregation {
                select_value: Some(None),
                aliases: vec![]
            })
        );
        let p = check_plan(&plan(
            r#"{"distinctType":"Unordered","offset":2,"limit":5}"#,
        ))
        .unwrap();
        assert_eq!(
            (p.distinct, p.offset, p.limit),
            (DistinctType::Unordered, Some(2), Some(5))
        );
    }

    #[test]
    fn declared_features_cover_every_family_the_driver_combines() {
        for f in [
            "Aggregate",
            "Distinct",
            "GroupBy",
            "OffsetAndLimit",
            "OrderBy",
            "Top",
            "MultipleOrderBy",
            "MultipleAggregates",
            "NonValueAggregate",
        ] {
            assert!(SUPPORTED_QUERY_FEATURES.split(',').any(|x| x == f), "{f}");
        }
        assert!(SUPPORTED_QUERY_FEATURES.contains("HybridSearch"));
        assert!(SUPPORTED_QUERY_FEATURES.contains("NonStreamingOrderBy"));
    }

    #[test]
    fn vector_search_plans_keep_the_best_k_of_every_range() {
        let p = check_plan(&plan(
            r#"{"hasNonStreamingOrderBy":true,"top":10,"orderBy":["Descending"],"orderByExpressions":["VectorDistance(c.e, [1])"],"rewrittenQuery":"SELECT TOP 10 c._rid FROM c WHERE ({documentdb-formattableorderbyquery-filter})"}"#,
        ))
        .unwrap();
        assert_eq!(
            p.aggregation,
            Aggregation::TopK {
                orders: vec![SortOrder::Descending],
                k: 10
            }
        );
        assert!(p.order_by.is_empty() && p.is_blocking());
        assert_eq!(
            p.range_query.as_deref(),
            Some("SELECT TOP 10 c._rid FROM c WHERE (true)")
        );
        let p = check_plan(&plan(
            r#"{"hasNonStreamingOrderBy":true,"offset":5,"limit":3,"orderBy":["Ascending"],"orderByExpressions":["x"]}"#,
        ))
        .unwrap();
        assert!(matches!(p.aggregation, Aggregation::TopK { k: 8, .. }));
        let e = check_plan(&plan(
            r#"{"hasNonStreamingOrderBy":true,"top":60000,"orderBy":["Ascending"],"orderByExpressions":["x"]}"#,
        ))
        .unwrap_err();
        assert!(e.0.contains("more than 50000"), "{e}");
    }
}
