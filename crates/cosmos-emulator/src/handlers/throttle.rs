//! `--enforce-throughput`: a request on one partition key range is refused with 429/3200 while the
//! range has used its share of the container's RU/s (its own offer, else its database's) in the
//! current second; what a served request is charged counts against that share.

use std::sync::Arc;

use crate::epk::PartitionKeyValue;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{headers, ApiError, Resource, Route};
use crate::store::{Container, Store};

/// Sub-status of a 429 for RU/s use over the provisioned throughput.
pub const REQUEST_RATE_TOO_LARGE: u32 = 3200;

/// Runs `serve` unless the request's range is over its share; records what it was charged.
pub fn metered(
    ctx: &RequestCtx<'_>,
    route: &Route,
    serve: impl FnOnce() -> Result<Reply, ApiError>,
) -> Result<Reply, ApiError> {
    let store = &ctx.shared.store;
    let Some(meter) = &store.ru_meter else {
        return serve();
    };
    let Some((container, range_id, budget)) = target(ctx, route, store) else {
        return serve();
    };
    if let Err(wait) = meter.admit(&container.rid, &range_id, budget, ctx.now) {
        let mut e = ApiError::new(
            429,
            format!(
                "Request rate is large: partition key range {range_id} has used its {budget} RU of this second."
            ),
        )
        .with_sub_status(REQUEST_RATE_TOO_LARGE);
        e.retry_after_ms = Some(wait.as_millis().max(1) as u64);
        return Err(e);
    }
    let answer = serve();
    let charge = match &answer {
        Ok(reply) => reply.charge,
        Err(_) => crate::protocol::charge::data_error(),
    };
    meter.record(&container.rid, &range_id, charge, ctx.now);
    answer
}

/// The container and range an item request lands on, and the range's RU per second.
fn target(
    ctx: &RequestCtx<'_>,
    route: &Route,
    store: &Store,
) -> Option<(Arc<Container>, String, f64)> {
    let (db, coll) = match &route.resource {
        Resource::Item { db, coll, .. } | Resource::Items { db, coll } => (db, coll),
        _ => return None,
    };
    let container = store.catalog.container(db, coll).ok()?;
    let range = match ctx.header(headers::PARTITION_KEY) {
        Some(raw) => container.range_index(PartitionKeyValue::from_header(raw).ok()?.epk()),
        None => container.range_by_id(ctx.header(headers::PARTITION_KEY_RANGE_ID)?.trim())?,
    };
    let database = store.catalog.database(db)?;
    let offer = store
        .offers
        .of_resource(&container.rid)
        .or_else(|| store.offers.of_resource(&database.rid))?;
    let budget = offer.throughput.ceiling() as f64 / container.partitions().len().max(1) as f64;
    Some((
        container.clone(),
        container.range_id(range).to_owned(),
        budget,
    ))
}
