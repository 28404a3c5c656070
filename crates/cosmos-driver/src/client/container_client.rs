//! `driver.container("shop", "orders")`: a cheap, cloneable handle with typed item operations and
//! queries as streams.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::change_feed_reader::ChangeFeed;
use super::item_options::ItemOptions;
use super::item_response::ItemResponse;
use crate::change_feed::ChangeFeedReader;
use crate::change_feed::{ChangeFeedOptions, ChangeFeedStart, FeedRange, FeedScope, FeedState};
use crate::driver::CosmosDriver;
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::operations::partition_key_ranges;
use crate::options::OperationOptions;
use crate::patch::PatchInstructions;
use crate::protocol::{ContainerReference, DatabaseReference, PartitionKey};
use crate::query::DriverPageSource;
use crate::query::{Query, QueryItems, QueryOptions, QueryPager, QueryScope};
use crate::read_many::{ReadManyOptions, ReadManyResponse};

/// A container of one account. Cheap to clone; every operation goes through the driver's
/// `execute` (or, for queries, one page request at a time through the same pipeline).
#[derive(Clone, Debug)]
pub struct ContainerClient {
    pub(super) driver: CosmosDriver,
    container: Result<ContainerReference, Arc<str>>,
    pub(super) options: OperationOptions,
}

impl CosmosDriver {
    /// A handle to container `container` of database `database`. The ids are checked here; a bad
    /// id makes every operation of the handle fail with the reason.
    pub fn container(&self, database: &str, container: &str) -> ContainerClient {
        let reference = DatabaseReference::new(database)
            .and_then(|d| d.container(container))
            .map_err(|e| Arc::from(e.message()));
        ContainerClient {
            driver: self.clone(),
            container: reference,
            options: OperationOptions::default(),
        }
    }
}

impl ContainerClient {
    /// The same handle with `options` applied to each of its operations.
    pub fn with_options(mut self, options: OperationOptions) -> Self {
        self.options = options;
        self
    }

    /// The driver the handle runs on.
    pub(crate) fn driver(&self) -> &CosmosDriver {
        &self.driver
    }

    /// The container's reference, or why its ids were refused.
    pub fn reference(&self) -> Result<&ContainerReference, CosmosError> {
        self.container
            .as_ref()
            .map_err(|m| CosmosError::invalid_input(m.to_string()))
    }

    async fn run<T>(
        &self,
        operation: CosmosOperation,
        options: Option<ItemOptions>,
    ) -> Result<ItemResponse<T>, CosmosError> {
        let (operation, merged) = match options {
            Some(o) => {
                let merged = o.over(&self.options);
                let mut operation = match &o.precondition {
                    Some(p) => operation.with_precondition(p.clone()),
                    None => operation,
                };
                for (name, value) in o.trigger_headers()? {
                    operation = operation.with_header(name, value);
                }
                (operation, merged)
            }
            None => (operation, self.options.clone()),
        };
        self.driver
            .execute(operation, &merged)
            .await
            .map(ItemResponse::new)
    }

    /// Reads item `id` in partition `partition_key` as `T`.
    pub async fn read_item<T: DeserializeOwned>(
        &self,
        partition_key: impl Into<PartitionKey>,
        id: &str,
        options: Option<ItemOptions>,
    ) -> Result<ItemResponse<T>, CosmosError> {
        let item = self.reference()?.item(id)?;
        self.run(
            CosmosOperation::read_item(item).with_partition_key(partition_key),
            options,
        )
        .await
    }

    /// Creates `item` in partition `partition_key` (409 when its id is taken).
    pub async fn create_item<T: Serialize>(
        &self,
        partition_key: impl Into<PartitionKey>,
        item: &T,
        options: Option<ItemOptions>,
    ) -> Result<ItemResponse<T>, CosmosError> {
        let op = CosmosOperation::create_item(self.reference()?.clone())
            .with_partition_key(partition_key)
            .with_json_body(item)?;
        self.run(op, options).await
    }

    /// Creates or replaces `item` in partition `partition_key`.
    pub async fn upsert_item<T: Serialize>(
        &self,
        partition_key: impl Into<PartitionKey>,
        item: &T,
        options: Option<ItemOptions>,
    ) -> Result<ItemResponse<T>, CosmosError> {
        let op = CosmosOperation::upsert_item(self.reference()?.clone())
            .with_partition_key(partition_key)
            .with_json_body(item)?;
        self.run(op, options).await
    }

    /// Replaces item `id` in partition `partition_key` with `item` (404 when it does not exist;
    /// 412 when `options` carries an ETag condition the item no longer meets).
    pub async fn replace_item<T: Serialize>(
        &self,
        partition_key: impl Into<PartitionKey>,
        id: &str,
        item: &T,
        options: Option<ItemOptions>,
    ) -> Result<ItemResponse<T>, CosmosError> {
        let reference = self.reference()?.item(id)?;
        let op = CosmosOperation::replace_item(reference)
            .with_partition_key(partition_key)
            .with_json_body(item)?;
        self.run(op, options).await
    }

    /// Deletes item `id` in partition `partition_key`. The response carries no item.
    pub async fn delete_item(
        &self,
        partition_key: impl Into<PartitionKey>,
        id: &str,
        options: Option<ItemOptions>,
    ) -> Result<ItemResponse<()>, CosmosError> {
        let item = self.reference()?.item(id)?;
        self.run(
            CosmosOperation::delete_item(item).with_partition_key(partition_key),
            options,
        )
        .await
    }

    /// Deletes every item of partition `partition_key` in one operation (200 without a body; the
    /// service finishes the deletes in the background, the emulator before answering).
    pub async fn delete_all_items_by_partition_key(
        &self,
        partition_key: impl Into<PartitionKey>,
        options: Option<ItemOptions>,
    ) -> Result<ItemResponse<()>, CosmosError> {
        let op = CosmosOperation::delete_all_items_by_partition_key(self.reference()?.clone())
            .with_partition_key(partition_key);
        self.run(op, options).await
    }

    /// Applies `instructions` to item `id` in partition `partition_key`; the response carries the
    /// patched item as `T`. Its [`ItemResponse::request_charge`] is everything the PATCH was billed
    /// (under the default read-modify-write strategy, the read and the replace).
    pub async fn patch_item<T: DeserializeOwned>(
        &self,
        partition_key: impl Into<PartitionKey>,
        id: &str,
        instructions: &PatchInstructions,
        options: Option<ItemOptions>,
    ) -> Result<ItemResponse<T>, CosmosError> {
        let item = self.reference()?.item(id)?;
        let op = CosmosOperation::patch_item(item)
            .with_partition_key(partition_key)
            .with_json_body(instructions)?;
        self.run(op, options).await
    }

    /// Runs `query` in `scope`; the result is read lazily as the stream is polled.
    pub fn query_items<T: DeserializeOwned>(
        &self,
        query: Query,
        scope: QueryScope,
    ) -> QueryItems<T> {
        self.query_items_with(query, scope, QueryOptions::new())
    }

    /// Runs `query` in `scope` with `options` (page size, concurrency, continuation, deadlines,
    /// and per-call request options: a field set in `options.request` wins over the handle's).
    pub fn query_items_with<T: DeserializeOwned>(
        &self,
        query: Query,
        scope: QueryScope,
        mut options: QueryOptions,
    ) -> QueryItems<T> {
        options.request = options.request.over(&self.options);
        match self.reference() {
            Ok(c) => {
                let source = Arc::new(DriverPageSource::new(self.driver.core().clone(), c.clone()));
                QueryItems::new(QueryPager::new(source, query, scope, options))
            }
            Err(e) => QueryItems::failed(e),
        }
    }

    /// Every item of the container, across partitions.
    pub fn read_all_items<T: DeserializeOwned>(&self) -> QueryItems<T> {
        self.query_items(Query::new("SELECT * FROM c"), QueryScope::CrossPartition)
    }

    /// The container's change feed from `start` over `scope`, latest-version mode. The feed is a
    /// `Stream` of one poll's changes with a running charge and the continuation; read it page by
    /// page with `into_pages`, or one page at a time with `next_page` (an empty page ends a poll
    /// and keeps the continuation).
    pub fn change_feed<T: DeserializeOwned + Send + 'static>(
        &self,
        start: ChangeFeedStart,
        scope: FeedScope,
    ) -> ChangeFeed<T> {
        self.change_feed_with(start, scope, ChangeFeedOptions::default())
    }

    /// The container's change feed with `options` (mode, page size, per-call request options: a
    /// field set in `options.request` wins over the handle's). In all-versions-and-deletes mode
    /// the items are `ChangeFeedItem<U>`.
    pub fn change_feed_with<T: DeserializeOwned + Send + 'static>(
        &self,
        start: ChangeFeedStart,
        scope: FeedScope,
        mut options: ChangeFeedOptions,
    ) -> ChangeFeed<T> {
        options.request = options.request.over(&self.options);
        let mode = options.mode;
        ChangeFeed::new(ChangeFeedReader::new(
            self.driver.core().clone(),
            self.reference().cloned(),
            |c| FeedState::new(c, start, scope, mode),
            options,
        ))
    }

    /// The container's feed ranges (one per partition key range, in key order): spread change
    /// feed consumers over them.
    pub async fn feed_ranges(&self) -> Result<Vec<FeedRange>, CosmosError> {
        let ranges =
            partition_key_ranges(self.driver.core(), self.reference()?, true, &self.options)
                .await?;
        Ok(ranges
            .iter()
            .map(|r| FeedRange::from_bounds(&r.min, &r.max))
            .collect())
    }

    /// Reads many items by (partition key, id): one request per partition key range (a point
    /// read for a single item, else a query on id and partition key), several ranges at once.
    /// Items that do not exist are absent from the answer; the others come in the order asked.
    pub async fn read_many<T: DeserializeOwned>(
        &self,
        items: &[(PartitionKey, String)],
    ) -> Result<ReadManyResponse<T>, CosmosError> {
        self.read_many_with(items, ReadManyOptions::default()).await
    }

    /// [`ContainerClient::read_many`] with `options` (concurrency, per-call request options: a
    /// field set in `options.request` wins over the handle's).
    pub async fn read_many_with<T: DeserializeOwned>(
        &self,
        items: &[(PartitionKey, String)],
        mut options: ReadManyOptions,
    ) -> Result<ReadManyResponse<T>, CosmosError> {
        options.request = options.request.over(&self.options);
        crate::read_many::read_many(
            self.driver.core(),
            self.reference()?,
            items.to_vec(),
            &options,
        )
        .await
    }
}
