//! `container.transactional_batch(pk)`: operations on the items of one partition key, applied all
//! or none in one request. Each operation is checked as it is added (100 operations and 2 MB at
//! most), so a batch the service would refuse is never sent.

use serde::Serialize;

use super::container_client::ContainerClient;
use crate::batch::{BatchResponse, TransactionalBatch};
use crate::error::CosmosError;
use crate::operation::Precondition;
use crate::patch::PatchInstructions;
use crate::protocol::PartitionKey;

/// A transactional batch being built on a container. Run it with [`ContainerBatch::execute`].
///
/// A batch that commits answers a [`BatchResponse`] with one result per operation. A batch the
/// service rolls back answers an error whose message names the failing operation's index, kind
/// and id, and whose status and sub-status ([`CosmosError::cosmos_status`]) are that operation's;
/// nothing was applied.
#[derive(Clone, Debug)]
pub struct ContainerBatch {
    client: ContainerClient,
    batch: TransactionalBatch,
}

impl ContainerClient {
    /// An empty transactional batch on the items whose partition key is `partition_key`.
    pub fn transactional_batch(&self, partition_key: impl Into<PartitionKey>) -> ContainerBatch {
        ContainerBatch {
            client: self.clone(),
            batch: TransactionalBatch::new(partition_key),
        }
    }

    /// Sends a batch built on its own (see [`TransactionalBatch`]).
    pub async fn execute_batch(
        &self,
        batch: &TransactionalBatch,
    ) -> Result<BatchResponse, CosmosError> {
        let operation = batch.operation(self.reference()?)?;
        // The results are the response body: a batch always asks for it.
        let options = self.options.clone().with_content_response_on_write(true);
        let response = self.driver.execute(operation, &options).await?;
        batch.response(response)
    }
}

impl ContainerBatch {
    fn map(
        self,
        add: impl FnOnce(TransactionalBatch) -> Result<TransactionalBatch, CosmosError>,
    ) -> Result<Self, CosmosError> {
        Ok(Self {
            batch: add(self.batch)?,
            client: self.client,
        })
    }

    /// Creates `item` (a JSON object with a string `id`); the batch fails when the id exists.
    pub fn create<T: Serialize + ?Sized>(self, item: &T) -> Result<Self, CosmosError> {
        self.map(|b| b.create(item))
    }

    /// Creates `item` or replaces the item with its id.
    pub fn upsert<T: Serialize + ?Sized>(self, item: &T) -> Result<Self, CosmosError> {
        self.map(|b| b.upsert(item))
    }

    /// Replaces item `id` with `item` (whose `id` must be the same).
    pub fn replace<T: Serialize + ?Sized>(self, id: &str, item: &T) -> Result<Self, CosmosError> {
        self.map(|b| b.replace(id, item))
    }

    /// Deletes item `id`.
    pub fn delete(self, id: &str) -> Result<Self, CosmosError> {
        self.map(|b| b.delete(id))
    }

    /// Reads item `id`; its body is in the operation's result.
    pub fn read(self, id: &str) -> Result<Self, CosmosError> {
        self.map(|b| b.read(id))
    }

    /// Applies `instructions` to item `id`.
    pub fn patch(self, id: &str, instructions: &PatchInstructions) -> Result<Self, CosmosError> {
        self.map(|b| b.patch(id, instructions))
    }

    /// Makes the operation added last conditional on the item's ETag.
    pub fn with_precondition(self, precondition: Precondition) -> Result<Self, CosmosError> {
        self.map(|b| b.with_precondition(precondition))
    }

    /// The batch as built so far.
    pub fn batch(&self) -> &TransactionalBatch {
        &self.batch
    }

    /// Sends the batch as one request. See [`ContainerBatch`] for what a rolled-back batch answers.
    pub async fn execute(self) -> Result<BatchResponse, CosmosError> {
        self.client.execute_batch(&self.batch).await
    }
}
