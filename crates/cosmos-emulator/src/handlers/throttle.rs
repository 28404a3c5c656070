//! `--enforce-throughput`: a request on a container's items is refused with 429/3200 while a
//! partition key range it reads or writes has used its share of the container's RU/s (its own
//! offer, else its database's) in the current second; what a served request is charged counts
//! against the shares of the ranges it read. A request without a partition key or range id
//! (cross-partition query, read feed, change feed over the container) reads every range. A
//! request's `x-ms-cosmos-priority-level` (High by default) decides which is throttled first when
//! the share is contended (`store::ru_meter`); another value is refused with 400.

use std::sync::Arc;

use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{headers, ApiError, Resource, Route};
use crate::store::{Container, Priority, Store};

/// Sub-status of a 429 for RU/s use over the provisioned throughput.
pub(super) const REQUEST_RATE_TOO_LARGE: u32 = 3200;

/// Which ranges a request on a container is admitted and charged against: the one its partition
/// key or range id header names, else every range (a cross-partition query, a read feed or a
/// change feed over the whole container reads them all). None when a header names no range.
pub(super) fn ranges_of(
    partition_key: Option<&str>,
    range_id: Option<&str>,
    container: &Container,
) -> Option<Vec<usize>> {
    match (partition_key, range_id) {
        (Some(raw), _) => Some(container.ranges_of(&container.header_filter(raw).ok()?)),
        (None, Some(id)) => Some(vec![container.range_by_id(id.trim())?]),
        (None, None) => Some((0..container.partitions().len()).collect()),
    }
}

/// How a served request's charge is split over the ranges it was admitted on: all of it on the
/// range the answer names (a query a WHERE clause pinned to one range), else evenly.
pub(super) fn split_charge<'a>(
    charge: f64,
    ranges: &'a [String],
    answered_by: Option<&str>,
) -> Vec<(&'a str, f64)> {
    if let Some(one) = answered_by.and_then(|id| ranges.iter().find(|r| r.as_str() == id)) {
        return vec![(one.as_str(), charge)];
    }
    let share = charge / ranges.len().max(1) as f64;
    ranges.iter().map(|r| (r.as_str(), share)).collect()
}

/// Runs `serve` unless a range the request reads is over its share; records what it was charged.
pub(super) fn metered(
    ctx: &RequestCtx<'_>,
    route: &Route,
    serve: impl FnOnce() -> Result<Reply, ApiError>,
) -> Result<Reply, ApiError> {
    let store = &ctx.shared.store;
    let Some(meter) = &store.ru_meter else {
        return serve();
    };
    let Some((container, range_ids, budget)) = target(ctx, route, store) else {
        return serve();
    };
    let priority = match ctx.header(headers::PRIORITY_LEVEL) {
        None => Priority::High,
        Some(value) => Priority::parse(value).ok_or_else(|| {
            ApiError::new(
                400,
                format!(
                    "The value of header {} is not High or Low.",
                    headers::PRIORITY_LEVEL
                ),
            )
        })?,
    };
    let mut reservations = Vec::with_capacity(range_ids.len());
    for range_id in &range_ids {
        match meter.admit(&container.rid, range_id, budget, priority, ctx.now) {
            Ok(reservation) => reservations.push(reservation),
            Err(wait) => {
                for (range, reservation) in range_ids.iter().zip(reservations) {
                    meter.release(&container.rid, range, reservation, ctx.now);
                }
                return Err(throttled(range_id, budget, wait));
            }
        }
    }
    let answer = serve();
    let (charge, answered_by) = match &answer {
        Ok(reply) => (
            reply.charge,
            reply
                .headers
                .iter()
                .find(|(name, _)| name.as_str() == headers::PARTITION_KEY_RANGE_ID)
                .and_then(|(_, v)| v.to_str().ok()),
        ),
        Err(_) => (crate::protocol::charge::data_error(), None),
    };
    // By range id: a request over every range of a large container looks each one up once.
    let shares: std::collections::HashMap<&str, f64> =
        split_charge(charge, &range_ids, answered_by)
            .into_iter()
            .collect();
    for (range_id, reservation) in range_ids.iter().zip(reservations) {
        let share = shares.get(range_id.as_str()).copied().unwrap_or(0.0);
        meter.record(
            &container.rid,
            range_id,
            share,
            Some(reservation),
            priority,
            ctx.now,
        );
    }
    answer
}

/// The 429/3200 of a range past its share, retried after `wait`.
fn throttled(range_id: &str, budget: f64, wait: std::time::Duration) -> ApiError {
    let mut e = ApiError::new(
        429,
        format!(
            "Request rate is large: partition key range {range_id} has used its {budget} RU of this second."
        ),
    )
    .with_sub_status(REQUEST_RATE_TOO_LARGE);
    e.retry_after_ms = Some(wait.as_millis().max(1) as u64);
    e
}

/// The container and ranges an item request reads or writes, and each range's RU per second.
fn target(
    ctx: &RequestCtx<'_>,
    route: &Route,
    store: &Store,
) -> Option<(Arc<Container>, Vec<String>, f64)> {
    let (db, coll) = match &route.resource {
        Resource::Item { db, coll, .. } | Resource::Items { db, coll } => (db, coll),
        _ => return None,
    };
    let container = store.catalog.container(db, coll).ok()?;
    let ranges = ranges_of(
        ctx.header(headers::PARTITION_KEY),
        ctx.header(headers::PARTITION_KEY_RANGE_ID),
        &container,
    )?;
    let database = store.catalog.database(db)?;
    let offer = store
        .offers
        .of_resource(&container.rid)
        .or_else(|| store.offers.of_resource(&database.rid))?;
    let budget = offer.throughput.ceiling() as f64 / container.partitions().len().max(1) as f64;
    let range_ids = ranges
        .into_iter()
        .map(|r| container.range_id(r).to_owned())
        .collect();
    Some((container, range_ids, budget))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_charge_lands_on_the_answering_range_or_is_shared_evenly() {
        let ranges: Vec<String> = ["0", "1", "2", "3"].map(String::from).to_vec();
        assert_eq!(split_charge(8.0, &ranges, Some("2")), vec![("2", 8.0)]);
        assert_eq!(
            split_charge(8.0, &ranges, None),
            vec![("0", 2.0), ("1", 2.0), ("2", 2.0), ("3", 2.0)]
        );
        assert_eq!(
            split_charge(8.0, &ranges, Some("9")).len(),
            4,
            "a range the request was not admitted on is not charged"
        );
        assert_eq!(split_charge(3.0, &ranges[..1], None), vec![("0", 3.0)]);
    }
}
