//! A multi-write container's conflicts through its handle: the conflict feed as a stream, and
//! one conflict read or deleted.

use super::resource_feed::ResourceFeed;
use super::ContainerClient;
use crate::error::CosmosError;
use crate::operation::{CosmosOperation, OperationTarget};
use crate::protocol::{ConflictReference, OperationType};
use crate::resources::ConflictProperties;

impl ContainerClient {
    /// The container's conflicts (writes that lost to a concurrent one in another region of a
    /// multi-write account), read page by page as the stream is polled.
    pub fn conflicts(&self) -> ResourceFeed<ConflictProperties> {
        match self.reference() {
            Ok(c) => {
                let op = CosmosOperation::read_feed(OperationTarget::Conflicts(c.clone()));
                ResourceFeed::new(self.driver.pages(op, self.options.clone()), "Conflicts")
            }
            Err(e) => ResourceFeed::failed(e),
        }
    }

    fn conflict(&self, id: &str) -> Result<ConflictReference, CosmosError> {
        Ok(self.reference()?.conflict(id)?)
    }

    /// Reads conflict `id`.
    pub async fn read_conflict(&self, id: &str) -> Result<ConflictProperties, CosmosError> {
        let target = OperationTarget::Conflict(self.conflict(id)?);
        let op = CosmosOperation::new(OperationType::Read, target);
        self.driver.execute(op, &self.options).await?.json()
    }

    /// Deletes conflict `id` (once it has been dealt with).
    pub async fn delete_conflict(&self, id: &str) -> Result<(), CosmosError> {
        let target = OperationTarget::Conflict(self.conflict(id)?);
        let op = CosmosOperation::new(OperationType::Delete, target);
        self.driver.execute(op, &self.options).await.map(|_| ())
    }
}
