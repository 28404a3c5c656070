//! The query plan an SDK asks for to run a query across partition key ranges, as the service
//! answers it: the plan of the query (with the range a WHERE clause pins), refused with 400 when
//! it needs a feature the client did not declare.

use super::scope::{pinned_filter, pinned_partition_key};
use super::QueryRequest;
use crate::epk::EpkFilter;
use crate::protocol::ApiError;
use crate::sql::plan::{plan, MinMaxParts, QueryPlan, QueryRange};
use crate::sql::query_info::QueryInfo;
use crate::store::Container;

/// The plan of `request` over `container`; `supported` is the list of query features the client
/// declares it can combine (`None`: it declares none, and is handed any plan).
pub(crate) fn plan_for(
    request: &QueryRequest,
    container: &Container,
    supported: Option<&str>,
) -> Result<QueryPlan, ApiError> {
    let pinned = pinned_filter(request, container).map(|filter| match filter {
        EpkFilter::Key(epk) => {
            // The key's EPK as the service writes it (for hash V1 not the emulator's image).
            let text = pinned_partition_key(request, container)
                .map_or_else(|| epk.hex(), |key| container.pk.epk_text(&key));
            QueryRange {
                min: text.clone(),
                max: text,
                is_min_inclusive: true,
                is_max_inclusive: true,
            }
        }
        EpkFilter::Range(min, _) => QueryRange {
            min: min.hex(),
            max: format!("{}FF", min.hex()),
            is_min_inclusive: true,
            is_max_inclusive: false,
        },
    });
    let declares_non_value_aggregates =
        supported.is_some_and(|f| f.split(',').any(|x| x.trim() == "NonValueAggregate"));
    let min_max = if declares_non_value_aggregates {
        MinMaxParts::WithCount
    } else {
        MinMaxParts::Plain
    };
    let plan = plan(
        &request.query,
        &request.text,
        &request.params,
        pinned,
        min_max,
    )
    .map_err(|e| ApiError::bad_request(format!("The query cannot be planned: {e}")))?;
    // As the service does: a client that declares its features is handed only a plan it can run;
    // a query needing a feature it did not declare is refused, naming the feature.
    if let Some(declared) = supported {
        let declared: Vec<&str> = declared.split(',').map(str::trim).collect();
        let mut missing = missing_features(&plan.query_info, &declared);
        missing.extend(missing_search_features(&plan, &declared));
        if !missing.is_empty() {
            return Err(ApiError::bad_request(unsupported_message(&missing)));
        }
    }
    Ok(plan)
}

/// The features a plan needs that `declared` lacks, in the service's order, by the service's
/// rules: one aggregate under `SELECT VALUE` needs `Aggregate`, one without it
/// `NonValueAggregate`, several both `NonValueAggregate` and `MultipleAggregates`; one ORDER BY
/// key needs `OrderBy`, several `MultipleOrderBy`.
fn missing_features(info: &QueryInfo, declared: &[&str]) -> Vec<&'static str> {
    let aggregate_aliases = info
        .group_by_alias_to_aggregate_type
        .values()
        .filter(|kind| !kind.is_null())
        .count();
    let aggregates = info.aggregates.len().max(aggregate_aliases);
    let mut needed = Vec::new();
    match aggregates {
        0 => {}
        1 if info.has_select_value => needed.push("Aggregate"),
        1 => needed.push("NonValueAggregate"),
        _ => needed.extend(["MultipleAggregates", "NonValueAggregate"]),
    }
    if info.distinct_type != "None" {
        needed.push("Distinct");
    }
    if !info.group_by_expressions.is_empty() {
        needed.push("GroupBy");
    }
    match info.order_by.len() {
        0 => {}
        1 => needed.push("OrderBy"),
        _ => needed.push("MultipleOrderBy"),
    }
    if info.offset.is_some() || info.limit.is_some() {
        needed.push("OffsetAndLimit");
    }
    if info.top.is_some() {
        needed.push("Top");
    }
    // The service lists them in the order of its feature flags.
    const ORDER: [&str; 9] = [
        "Aggregate",
        "Distinct",
        "GroupBy",
        "MultipleAggregates",
        "MultipleOrderBy",
        "OffsetAndLimit",
        "OrderBy",
        "Top",
        "NonValueAggregate",
    ];
    ORDER
        .into_iter()
        .filter(|f| needed.contains(f) && !declared.contains(f))
        .collect()
}

/// The search features a plan needs that `declared` lacks: `NonStreamingOrderBy` for a vector
/// search, `HybridSearch` for a ranked one, and `WeightedRankFusion` when RRF has weights.
fn missing_search_features(plan: &QueryPlan, declared: &[&str]) -> Vec<&'static str> {
    let mut needed = Vec::new();
    if plan.query_info.has_non_streaming_order_by {
        needed.push("NonStreamingOrderBy");
    }
    if let Some(hybrid) = &plan.hybrid_search_query_info {
        needed.push("HybridSearch");
        if !hybrid.component_weights.is_empty() {
            needed.push("WeightedRankFusion");
        }
    }
    needed.retain(|f| !declared.contains(f));
    needed
}

/// The service's message for a plan the client cannot run.
fn unsupported_message(missing: &[&str]) -> String {
    let mut message = String::from(
        "Query contains 1 or more unsupported features. Upgrade your SDK to a version that does support the requested features:",
    );
    for feature in missing {
        message.push_str(&format!(
            "\nQuery contained {feature}, which the calling client does not support."
        ));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parse_query;
    use std::collections::HashMap;

    fn missing(text: &str, declared: &str) -> Vec<&'static str> {
        let q = parse_query(text).unwrap();
        let plan = plan(&q, text, &HashMap::new(), None, MinMaxParts::Plain).unwrap();
        let declared: Vec<&str> = declared.split(',').collect();
        missing_features(&plan.query_info, &declared)
    }

    /// What the Python SDK 4.17 declares.
    const PYTHON: &str = "Aggregate,CompositeAggregate,Distinct,MultipleOrderBy,OffsetAndLimit,OrderBy,Top,NonStreamingOrderBy,HybridSearch,CountIf,WeightedRankFusion";

    #[test]
    fn a_plan_is_refused_for_each_feature_the_client_did_not_declare() {
        let table: [(&str, &str, &[&str]); 10] = [
            ("SELECT VALUE COUNT(1) FROM c", PYTHON, &[]),
            ("SELECT COUNT(1) FROM c", PYTHON, &["NonValueAggregate"]),
            (
                "SELECT COUNT(1) AS n FROM c",
                "Aggregate,NonValueAggregate",
                &[],
            ),
            (
                "SELECT COUNT(1) AS n, MAX(c.a) AS m FROM c",
                "Aggregate,NonValueAggregate",
                &["MultipleAggregates"],
            ),
            (
                "SELECT c.k, COUNT(1) AS n FROM c GROUP BY c.k",
                PYTHON,
                &["GroupBy", "NonValueAggregate"],
            ),
            ("SELECT c.k FROM c GROUP BY c.k", PYTHON, &["GroupBy"]),
            (
                "SELECT * FROM c ORDER BY c.a, c.b",
                "OrderBy",
                &["MultipleOrderBy"],
            ),
            (
                "SELECT DISTINCT TOP 3 c.a FROM c ORDER BY c.a",
                "OrderBy",
                &["Distinct", "Top"],
            ),
            ("SELECT * FROM c OFFSET 1 LIMIT 2", PYTHON, &[]),
            (
                "SELECT * FROM c OFFSET 1 LIMIT 2",
                "Top",
                &["OffsetAndLimit"],
            ),
        ];
        for (text, declared, want) in table {
            assert_eq!(missing(text, declared), want, "{text} with {declared}");
        }
    }

    #[test]
    fn the_refusal_names_each_feature_on_its_own_line() {
        assert_eq!(
            unsupported_message(&["GroupBy", "NonValueAggregate"]),
            "Query contains 1 or more unsupported features. Upgrade your SDK to a version that does support the requested features:\nQuery contained GroupBy, which the calling client does not support.\nQuery contained NonValueAggregate, which the calling client does not support."
        );
    }
}
