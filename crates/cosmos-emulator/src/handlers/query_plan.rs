//! POST .../docs with `x-ms-cosmos-is-query-plan-request: True`: the plan an SDK needs to run a
//! query across partition key ranges.

use super::query::{pinned_filter, read_request};
use crate::epk::EpkFilter;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, ApiError};
use crate::sql::plan::{plan, MinMaxParts, QueryRange};

/// The header naming the query features a client can combine.
const SUPPORTED_QUERY_FEATURES: &str = "x-ms-cosmos-supported-query-features";

/// Answers the query plan.
pub fn query_plan(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let request = read_request(ctx)?;
    let pinned = pinned_filter(&request, &container).map(|filter| match filter {
        EpkFilter::Key(epk) => QueryRange {
            min: epk.hex(),
            max: epk.hex(),
            is_min_inclusive: true,
            is_max_inclusive: true,
        },
        EpkFilter::Range(min, _) => QueryRange {
            min: min.hex(),
            max: format!("{}FF", min.hex()),
            is_min_inclusive: true,
            is_max_inclusive: false,
        },
    });
    let declares = |feature: &str| {
        ctx.header(SUPPORTED_QUERY_FEATURES)
            .is_some_and(|f| f.split(',').any(|x| x.trim() == feature))
    };
    let declares_non_value_aggregates = declares("NonValueAggregate");
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
    // As the service does: a client that declares its features but not GROUP BY cannot run a
    // grouped query across partitions, so its plan is refused rather than handed over.
    if ctx.header(SUPPORTED_QUERY_FEATURES).is_some()
        && !plan.query_info.group_by_expressions.is_empty()
        && !declares("GroupBy")
    {
        return Err(ApiError::bad_request(
            "Query contains 1 or more unsupported features. Upgrade your SDK to a version that does support the requested features: Query contained GroupBy, which the calling client does not support.",
        ));
    }
    let body = serde_json::to_vec(&plan)
        .map_err(|e| ApiError::new(500, format!("The plan could not be written: {e}")))?;
    Ok(Reply::json(200, body.into(), charge::metadata()))
}
