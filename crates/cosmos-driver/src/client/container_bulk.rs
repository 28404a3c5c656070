//! `container.bulk()`: many independent operations run as non-atomic batches per partition key
//! range, each batch one operation through the driver's pipeline.

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::Stream;
use http::HeaderValue;
use serde::Deserialize;
use tokio::sync::OnceCell;

use super::container_client::ContainerClient;
use super::driver_page_source::DriverPageSource;
use crate::bulk::{
    run_bulk, BulkOperation, BulkOptions, BulkResponse, BulkRoute, BulkTarget, KeyDefinition,
    RangeMap,
};
use crate::protocol::{header_names as h, ContainerReference};
use crate::query::QueryPageSource;
use crate::{CosmosDriver, CosmosError, CosmosOperation, CosmosResponse, OperationOptions};

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
        let target = DriverBulkTarget {
            driver: self.client.driver.clone(),
            container: self.client.reference()?.clone(),
            options: self
                .client
                .options
                .clone()
                .with_content_response_on_write(true),
            definition: OnceCell::new(),
        };
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

/// Bulk batches through a driver.
struct DriverBulkTarget {
    driver: CosmosDriver,
    container: ContainerReference,
    options: OperationOptions,
    definition: OnceCell<KeyDefinition>,
}

#[derive(Deserialize)]
struct ContainerBody {
    #[serde(rename = "partitionKey", default)]
    partition_key: KeyDefinition,
}

impl DriverBulkTarget {
    async fn definition(&self) -> Result<&KeyDefinition, CosmosError> {
        self.definition
            .get_or_try_init(|| async {
                let op = CosmosOperation::read_container(self.container.clone());
                let response = self.driver.execute(op, &self.options).await?;
                Ok::<_, CosmosError>(response.json::<ContainerBody>()?.partition_key)
            })
            .await
    }
}

impl BulkTarget for DriverBulkTarget {
    fn routes(&self, refresh: bool) -> BoxFuture<'_, Result<RangeMap, CosmosError>> {
        Box::pin(async move {
            let definition = self.definition().await?;
            if !definition.routes_by_range() {
                return Ok(RangeMap::by_partition_key());
            }
            let source = DriverPageSource::new(self.driver.clone(), self.container.clone());
            let ranges = source.ranges(refresh, &self.options).await?;
            Ok(RangeMap::new(definition, ranges))
        })
    }

    fn send(
        &self,
        route: BulkRoute,
        body: Bytes,
    ) -> BoxFuture<'_, Result<CosmosResponse, CosmosError>> {
        Box::pin(async move {
            let mut op = CosmosOperation::batch(self.container.clone()).with_body(body);
            for (name, value) in BulkOperation::headers() {
                op = op.with_header(name, value);
            }
            op = match route {
                BulkRoute::Range(id) => {
                    let value = HeaderValue::from_str(&id).map_err(|_| {
                        CosmosError::invalid_input(format!(
                            "the partition key range id {id:?} is not a valid header value"
                        ))
                    })?;
                    op.with_header(h::PARTITION_KEY_RANGE_ID, value)
                }
                BulkRoute::PartitionKey(pk) => op.with_partition_key(pk),
            };
            self.driver.execute(op, &self.options).await
        })
    }
}
