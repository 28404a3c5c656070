//! A container's settings through its handle: its definition (indexing policy, default TTL, unique
//! keys) and its throughput.

use super::offer_flow::{self, OfferOwner};
use super::throughput_response::ThroughputResponse;
use super::ContainerClient;
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::resources::{ContainerProperties, ThroughputBucketLimit, ThroughputProperties};
use crate::response::CosmosResponse;

/// A container definition as read or replaced, with the response that carried it.
#[derive(Debug)]
pub struct ContainerResponse {
    properties: ContainerProperties,
    response: CosmosResponse,
}

impl ContainerResponse {
    pub(super) fn from_response(response: CosmosResponse) -> Result<Self, CosmosError> {
        Ok(Self {
            properties: ContainerProperties::from_json(response.body())?,
            response,
        })
    }

    /// The definition.
    pub fn properties(&self) -> &ContainerProperties {
        &self.properties
    }

    /// The definition, taken.
    pub fn into_properties(self) -> ContainerProperties {
        self.properties
    }

    /// The response (status, RU charge, etag, diagnostics).
    pub fn response(&self) -> &CosmosResponse {
        &self.response
    }
}

impl ContainerClient {
    /// Reads the container's definition.
    pub async fn read_properties(&self) -> Result<ContainerResponse, CosmosError> {
        let op = CosmosOperation::read_container(self.reference()?.clone());
        let response = self.driver.execute(op, &self.options).await?;
        ContainerResponse::from_response(response)
    }

    /// Replaces the container's definition with `properties` (typically one read with
    /// [`ContainerClient::read_properties`] and changed): the indexing policy and default TTL
    /// change; the service refuses a changed partition key definition or unique key policy.
    pub async fn replace_properties(
        &self,
        properties: &ContainerProperties,
    ) -> Result<ContainerResponse, CosmosError> {
        let reference = self.reference()?;
        properties.validate()?;
        if properties.id != reference.id() {
            return Err(CosmosError::invalid_input(format!(
                "the definition names container {:?}, the handle is for {:?}",
                properties.id,
                reference.id()
            )));
        }
        let op = CosmosOperation::replace_container(reference.clone(), properties.to_json()?);
        let response = self.driver.execute(op, &self.options).await?;
        ContainerResponse::from_response(response)
    }

    /// Deletes the container and every item in it.
    pub async fn delete(&self) -> Result<(), CosmosError> {
        let op = CosmosOperation::delete_container(self.reference()?.clone());
        self.driver.execute(op, &self.options).await.map(|_| ())
    }

    /// The container's own throughput (a 404 error when it has none: it shares its database's).
    pub async fn read_throughput(&self) -> Result<ThroughputResponse, CosmosError> {
        let owner = OfferOwner::container(self.reference()?);
        offer_flow::read_throughput(self.driver.core(), owner, &self.options)
            .await
            .and_then(ThroughputResponse::from_response)
    }

    /// Sets the container's throughput. A manual container stays manual and an autoscale one
    /// autoscale: the service refuses a switch, which is a migration rather than a replace.
    pub async fn replace_throughput(
        &self,
        throughput: ThroughputProperties,
    ) -> Result<ThroughputResponse, CosmosError> {
        let owner = OfferOwner::container(self.reference()?);
        offer_flow::replace_throughput(self.driver.core(), owner, throughput, &self.options)
            .await
            .and_then(ThroughputResponse::from_response)
    }

    /// Sets the caps of the container's throughput buckets (an empty list removes them); its
    /// throughput stays as it is. A request names its bucket with
    /// [`OperationOptions::with_throughput_bucket`](crate::OperationOptions::with_throughput_bucket).
    pub async fn replace_throughput_buckets(
        &self,
        buckets: Vec<ThroughputBucketLimit>,
    ) -> Result<ThroughputResponse, CosmosError> {
        let owner = OfferOwner::container(self.reference()?);
        offer_flow::replace_throughput_buckets(self.driver.core(), owner, buckets, &self.options)
            .await
            .and_then(ThroughputResponse::from_response)
    }
}
