//! A bulk run's batches through the dispatcher: the container's partition key definition (read
//! once), its range map (from the kept range listing, read again after a batch found its range
//! gone) and each batch as one operation through the pipeline.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::HeaderValue;
use serde::Deserialize;
use tokio::sync::OnceCell;

use super::bulk_operation::BulkOperation;
use super::bulk_target::BulkTarget;
use super::range_map::{BulkRoute, KeyDefinition, RangeMap};
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::operations::{partition_key_ranges, run};
use crate::options::OperationOptions;
use crate::pipeline::DriverCore;
use crate::protocol::{header_names as h, ContainerReference};
use crate::response::CosmosResponse;

/// Bulk batches of one container through the driver's pipeline.
pub(crate) struct DriverBulkTarget {
    core: Arc<DriverCore>,
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
    /// Batches of `container`, each sent with `options`.
    pub(crate) fn new(
        core: Arc<DriverCore>,
        container: ContainerReference,
        options: OperationOptions,
    ) -> Self {
        DriverBulkTarget {
            core,
            container,
            options,
            definition: OnceCell::new(),
        }
    }

    async fn definition(&self) -> Result<&KeyDefinition, CosmosError> {
        self.definition
            .get_or_try_init(|| async {
                let op = CosmosOperation::read_container(self.container.clone());
                let response = run(&self.core, op, &self.options).await?;
                let definition = response.json::<ContainerBody>()?.partition_key;
                // Kept for the driver's other operations too (a point operation's session token
                // entry is picked by the range its key hashes to).
                if let Some(version) = definition.range_hashing() {
                    let paths: Arc<[String]> = definition.paths.clone().into();
                    self.core.containers.remember_partition_key_definition(
                        self.container.link_arc().clone(),
                        paths,
                        version,
                    );
                }
                Ok::<_, CosmosError>(definition)
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
            let ranges =
                partition_key_ranges(&self.core, &self.container, refresh, &self.options).await?;
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
            run(&self.core, op, &self.options).await
        })
    }
}
