//! `container.bulk()`: many independent operations run as non-atomic batches per partition key
//! range, each batch one operation through the driver's pipeline.

use futures::Stream;

use super::container_client::ContainerClient;
use crate::bulk::DriverBulkTarget;
use crate::bulk::{run_bulk, BulkOperation, BulkOptions, BulkResponse};
use crate::error::CosmosError;

/// A bulk run being set up on a container. Run it with [`ContainerBulk::run`] (a stream) or
/// [`ContainerBulk::run_iter`] (an iterator).
#[derive(Clone, Debug)]
pub struct ContainerBulk {
    client: ContainerClient,
    options: BulkOptions,
}

impl ContainerClient {
    /// A bulk run with the default [`BulkOptions`].
    pub fn bulk(&self) -> ContainerBulk {
        self.bulk_with(BulkOptions::default())
    }

    /// A bulk run with `options`.
    pub fn bulk_with(&self, options: BulkOptions) -> ContainerBulk {
        ContainerBulk {
            client: self.clone(),
            options,
        }
    }
}

impl ContainerBulk {
    /// Runs every operation of `operations` (read lazily, a bounded number at a time) and answers
    /// each one's result in the stream's order. Fails as a whole only when the container's
    /// partition key ranges cannot be read.
    pub async fn run<S>(self, operations: S) -> Result<BulkResponse, CosmosError>
    where
        S: Stream<Item = BulkOperation>,
    {
        let target = DriverBulkTarget::new(
            self.client.driver.core().clone(),
            self.client.reference()?.clone(),
            self.client
                .options
                .clone()
                .with_content_response_on_write(true),
        );
        run_bulk(&target, operations, &self.options).await
    }

    /// [`ContainerBulk::run`] over an iterator.
    pub async fn run_iter<I>(self, operations: I) -> Result<BulkResponse, CosmosError>
    where
        I: IntoIterator<Item = BulkOperation>,
    {
        self.run(futures::stream::iter(operations)).await
    }
}
