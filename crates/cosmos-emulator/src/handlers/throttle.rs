//! `--enforce-throughput`: a request on a container's items is refused with 429/3200 while a
//! partition key range it reads or writes has used its share of the container's RU/s (its own
//! offer, else its database's) in the current second; what a served request is charged counts
//! against the shares of the ranges it read. A request without a partition key or range id
//! (cross-partition query, read feed, change feed over the container) reads every range. A
//! request's `x-ms-cosmos-priority-level` (High by default) decides which is throttled first when
//! the share is contended (`store::ru_meter`); another value is refused with 400.
//!
//! Throughput buckets (`store::throughput_buckets`): a request naming a bucket its container's
//! offer caps at P% is refused with 429/3212 while that bucket has used P% of a range's share in
//! the current second; the bucket is checked before the range's own decision, so a request over
//! its bucket's cap is refused whatever its priority. A request naming no bucket counts in the
//! offer's default bucket when one is marked; one naming a bucket the offer does not configure
//! uses the container's throughput. A bucket id outside 1 to 5 is a 400 whether
//! or not throughput is enforced.

use std::sync::Arc;

use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{headers, ApiError, Resource, Route};
use crate::store::ru_meter::Reservation;
use crate::store::throughput_buckets::{self, ThroughputBucket};
use crate::store::{Container, Lane, Priority, Store};

/// Sub-status of a 429 for RU/s use over the provisioned throughput.
pub(super) const REQUEST_RATE_TOO_LARGE: u32 = 3200;

/// Sub-status of a 429 for a throughput bucket past its share (the service's documented value for
/// "a bucket exceeds its configured maximum throughput").
pub(super) const THROUGHPUT_BUCKET_EXCEEDED: u32 = 3212;

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
    let bucket = match ctx.header(headers::THROUGHPUT_BUCKET) {
        None => None,
        Some(value) => Some(throughput_buckets::parse_header(value).map_err(|why| {
            ApiError::bad_request(format!(
                "The value of header {} is not valid: {why}.",
                headers::THROUGHPUT_BUCKET
            ))
        })?),
    };
    let Some(meter) = &store.ru_meter else {
        return serve();
    };
    let Some(Target {
        container,
        range_ids,
        budget,
        buckets,
    }) = target(ctx, route, store)
    else {
        return serve();
    };
    // The configured bucket the request counts in: the one it names, else the default; none
    // when it names an unconfigured bucket or names none without a default.
    let resolved = throughput_buckets::resolve(&buckets, bucket);
    let bucket = resolved.map(|b| b.id);
    let bucket_cap = resolved.map(|b| throughput_buckets::cap(&b, budget));
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
    // What each admitted range set aside, on its own lane and on the bucket's.
    let mut reservations: Vec<(Reservation, Option<Reservation>)> =
        Vec::with_capacity(range_ids.len());
    let give_back = |admitted: Vec<(Reservation, Option<Reservation>)>| {
        for (range, (own, in_bucket)) in range_ids.iter().zip(admitted) {
            meter.release(&container.rid, range, Lane::Range, own, ctx.now);
            if let (Some(id), Some(r)) = (bucket, in_bucket) {
                meter.release(&container.rid, range, Lane::Bucket(id), r, ctx.now);
            }
        }
    };
    for range_id in &range_ids {
        let in_bucket = match (bucket, bucket_cap) {
            (Some(id), Some(cap)) => {
                match meter.admit_bucket(&container.rid, range_id, id, cap, ctx.now) {
                    Ok(r) => Some(r),
                    Err(wait) => {
                        give_back(reservations);
                        return Err(bucket_throttled(id, range_id, cap, wait));
                    }
                }
            }
            _ => None,
        };
        match meter.admit(&container.rid, range_id, budget, priority, ctx.now) {
            Ok(reservation) => reservations.push((reservation, in_bucket)),
            Err(wait) => {
                if let (Some(id), Some(r)) = (bucket, in_bucket) {
                    meter.release(&container.rid, range_id, Lane::Bucket(id), r, ctx.now);
                }
                give_back(reservations);
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
    for (range_id, (own, in_bucket)) in range_ids.iter().zip(reservations) {
        let share = shares.get(range_id.as_str()).copied().unwrap_or(0.0);
        let rid = &container.rid;
        meter.record(
            rid,
            range_id,
            Lane::Range,
            share,
            Some(own),
            priority,
            ctx.now,
        );
        if let (Some(id), Some(r)) = (bucket, in_bucket) {
            let lane = Lane::Bucket(id);
            meter.record(rid, range_id, lane, share, Some(r), priority, ctx.now);
        }
    }
    answer
}

/// The 429/3212 of a throughput bucket past its share of a range, retried after `wait`.
fn bucket_throttled(bucket: u8, range_id: &str, cap: f64, wait: std::time::Duration) -> ApiError {
    let mut e = ApiError::new(
        429,
        format!(
            "Request rate is large: throughput bucket {bucket} has used its {cap} RU of this second on partition key range {range_id}."
        ),
    )
    .with_sub_status(THROUGHPUT_BUCKET_EXCEEDED);
    e.retry_after_ms = Some(wait.as_millis().max(1) as u64);
    e
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

/// What a metered request is admitted against.
struct Target {
    container: Arc<Container>,
    /// The ranges it reads or writes.
    range_ids: Vec<String>,
    /// Each range's RU per second.
    budget: f64,
    /// The buckets the container's offer caps (none when the throughput is its database's).
    buckets: Vec<ThroughputBucket>,
}

/// The container and ranges an item request reads or writes, each range's RU per second, and the
/// container's bucket settings.
fn target(ctx: &RequestCtx<'_>, route: &Route, store: &Store) -> Option<Target> {
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
    let own = store.offers.of_resource(&container.rid);
    let buckets = own.as_ref().map(|o| o.buckets.clone()).unwrap_or_default();
    let offer = own.or_else(|| store.offers.of_resource(&database.rid))?;
    let budget = offer.throughput.ceiling() as f64 / container.partitions().len().max(1) as f64;
    let range_ids = ranges
        .into_iter()
        .map(|r| container.range_id(r).to_owned())
        .collect();
    Some(Target {
        container,
        range_ids,
        budget,
        buckets,
    })
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
