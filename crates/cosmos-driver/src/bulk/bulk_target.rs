//! The seam between a bulk run and the service: the container's routes and sending one batch.
//! The client layer implements it over the driver (each batch one operation through the
//! pipeline); tests implement it in memory.

use bytes::Bytes;
use futures::future::BoxFuture;

use super::range_map::{BulkRoute, RangeMap};
use crate::error::CosmosError;
use crate::response::CosmosResponse;

/// Where a bulk run's batches go.
pub(crate) trait BulkTarget: Send + Sync {
    /// The container's routes, read again from the service when `refresh` (after a split).
    fn routes(&self, refresh: bool) -> BoxFuture<'_, Result<RangeMap, CosmosError>>;

    /// Sends one non-atomic batch (`body`: the JSON array of operations) to `route`.
    fn send(
        &self,
        route: BulkRoute,
        body: Bytes,
    ) -> BoxFuture<'_, Result<CosmosResponse, CosmosError>>;
}
