//! What a query's text decides about where it runs: the keys a WHERE clause pins, whether the
//! gateway serves a cross-partition query itself or answers the 400 that asks for a plan, and the
//! search functions readied under the container's policies.

use crate::epk::{EpkFilter, PartitionKeyValue, PkComponent};
use crate::protocol::ApiError;
use crate::sql::ast::Query;
use crate::sql::exec::needs_all_rows;
use crate::sql::partition_filter::pinned_key;
use crate::sql::plan::{plan, MinMaxParts};
use crate::store::Container;

use super::QueryRequest;

/// Sub-status of a cross-partition query the gateway cannot serve without a plan.
const CROSS_PARTITION_QUERY_NOT_SERVABLE: u32 = 1004;

/// Readies an item query's search functions under the container's policies
/// ([`crate::sql::search::prepare`]): 400 for a misuse of them.
pub(crate) fn prepare_search(
    request: &mut QueryRequest,
    container: &Container,
) -> Result<(), ApiError> {
    crate::sql::search::prepare(
        &mut request.query,
        &container.search_policy(),
        &request.params,
    )
    .map_err(|e| ApiError::bad_request(format!("The query is invalid: {e}")))
}

/// The 400 (sub-status 1004) of a query the gateway does not serve directly, carrying its plan.
pub(crate) fn not_servable(request: &QueryRequest) -> ApiError {
    let mut error = ApiError::bad_request(
        "The provided cross partition query can not be directly served by the gateway: ask for a query plan (x-ms-cosmos-is-query-plan-request) and run the rewritten query on each partition key range.",
    )
    .with_sub_status(CROSS_PARTITION_QUERY_NOT_SERVABLE);
    if let Ok(plan) = plan(
        &request.query,
        &request.text,
        &request.params,
        None,
        MinMaxParts::Plain,
    ) {
        error = error.with_additional_error_info(serde_json::to_string(&plan).unwrap_or_default());
    }
    error
}

/// The keys a WHERE clause pins: the partition key (every path of a hierarchical key, each by an
/// equality), or a leading prefix of a hierarchical key's paths.
pub(crate) fn pinned_filter(request: &QueryRequest, container: &Container) -> Option<EpkFilter> {
    container
        .pk
        .filter(&pinned_partition_key(request, container)?)
        .ok()
}

/// The partition key (or hierarchical prefix) a WHERE clause pins, as [`pinned_filter`] reads it.
pub(crate) fn pinned_partition_key(
    request: &QueryRequest,
    container: &Container,
) -> Option<PartitionKeyValue> {
    let mut components = Vec::new();
    for path in &container.pk.paths {
        let Some(component) = pinned_key(&request.query, path, &request.params)
            .and_then(|v| PkComponent::from_json(&v).ok())
        else {
            break;
        };
        components.push(component);
    }
    (!components.is_empty()).then_some(PartitionKeyValue(components))
}

/// Whether the gateway answers a cross-partition query itself: no ORDER BY, aggregates,
/// GROUP BY, DISTINCT, TOP or OFFSET/LIMIT, which need a client-side plan.
pub(crate) fn gateway_serves(q: &Query) -> bool {
    q.from.is_some()
        && q.order_by.is_empty()
        && !needs_all_rows(q)
        && q.top.is_none()
        && q.offset.is_none()
}
