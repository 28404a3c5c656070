//! The splits a raise of a container's throughput asks for, as the service makes them: when the
//! offer's new ceiling is more than the container's ranges hold
//! ([`must_split`](super::partition_sizing::must_split)), the replace answers at once with the
//! offer marked pending, and shortly after (a background step the server starts, see
//! `server/offer_splits.rs`) every range splits in two, round after round, until they hold it;
//! then the offer is no longer pending. Only when ranges follow throughput
//! ([`PartitionSizing::FromThroughput`]); a fixed range count stays fixed. A database's offer
//! splits nothing.

use std::sync::Arc;

use super::partition_sizing::must_split;
use super::{Container, Database, Offer, PartitionSizing, Store};

/// The database and container of the container with `_rid` `rid`.
fn container_of(store: &Store, rid: &str) -> Option<(Arc<Database>, Arc<Container>)> {
    store.catalog.databases().into_iter().find_map(|db| {
        let found = db.containers().into_iter().find(|c| c.rid == rid)?;
        Some((db, found))
    })
}

/// Whether the throughput `offer` now has asks for splits of its container.
pub(crate) fn wants_split(store: &Store, offer: &Offer) -> bool {
    store.partition_sizing == PartitionSizing::FromThroughput
        && container_of(store, &offer.offer_resource_id)
            .is_some_and(|(_, c)| must_split(c.range_count(), offer.throughput.ceiling()))
}

/// Splits the ranges of offer `id`'s container until they hold its throughput, then marks the
/// offer done. Stops early (leaving what was split) when the offer or container is gone or a
/// split is refused.
pub(crate) fn split_for_offer(store: &Store, id: &str) {
    while let Some(offer) = store.offers.get(id) {
        let Some((db, container)) = container_of(store, &offer.offer_resource_id) else {
            break;
        };
        if !must_split(container.range_count(), offer.throughput.ceiling()) {
            break;
        }
        let round: Vec<String> = (0..container.range_count())
            .map(|i| container.range_id(i).to_owned())
            .collect();
        if round
            .iter()
            .any(|range| db.split_container(&container.id, range).is_err())
        {
            break;
        }
    }
    store.offers.end_pending(id);
}
