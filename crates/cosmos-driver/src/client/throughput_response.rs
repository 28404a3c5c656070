//! The answer to a throughput read or replace.

use crate::error::CosmosError;
use crate::protocol::OfferId;
use crate::resources::{OfferDocument, ThroughputBucketLimit, ThroughputProperties};
use crate::response::CosmosResponse;

/// A database's or container's throughput as its offer holds it, with the response that carried it
/// (status, RU charge, diagnostics).
#[derive(Debug)]
pub struct ThroughputResponse {
    throughput: ThroughputProperties,
    buckets: Vec<ThroughputBucketLimit>,
    current: Option<u64>,
    offer_id: OfferId,
    response: CosmosResponse,
}

impl ThroughputResponse {
    pub(super) fn from_response(response: CosmosResponse) -> Result<Self, CosmosError> {
        let offer = OfferDocument::from_json(response.body())?;
        Ok(Self {
            throughput: offer.throughput()?,
            buckets: offer.throughput_buckets().to_vec(),
            current: offer.current_throughput(),
            offer_id: OfferId::new(&offer.id)?,
            response,
        })
    }

    /// The provisioned throughput: manual RU/s or the autoscale maximum.
    pub fn throughput(&self) -> ThroughputProperties {
        self.throughput
    }

    /// The caps of the container's throughput buckets (empty: none configured).
    pub fn throughput_buckets(&self) -> &[ThroughputBucketLimit] {
        &self.buckets
    }

    /// The RU/s the resource has now, when the service said (for autoscale, what it scales from).
    pub fn current_throughput(&self) -> Option<u64> {
        self.current
    }

    /// The offer's id.
    pub fn offer_id(&self) -> &OfferId {
        &self.offer_id
    }

    /// The response of the offer read or replace.
    pub fn response(&self) -> &CosmosResponse {
        &self.response
    }
}
