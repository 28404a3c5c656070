//! What an application on the typed handles needs, in one `use`:
//!
//! ```
//! use cosmos_driver::prelude::*;
//!
//! let query = Query::new("SELECT * FROM c WHERE c.n > @lo").with_parameter("@lo", 10)?;
//! let scope = QueryScope::CrossPartition;
//! let options = ItemOptions::new().with_if_match("\"etag\"");
//! let key = PartitionKeyDefinition::new("/pk")?;
//! let properties = ContainerProperties::new("orders", &key);
//! # let _ = (query, scope, options, key, properties, ChangeFeedMode::LatestVersion);
//! # Ok::<(), CosmosError>(())
//! ```
//!
//! It also brings `futures`' `StreamExt` and `TryStreamExt`, which the streams of queries, feeds
//! and listings are read with.

pub use crate::{
    AvailabilityStrategy, BatchResponse, BulkOperation, BulkOptions, BulkResponse, ChangeFeed,
    ChangeFeedItem, ChangeFeedMode, ChangeFeedOptions, ChangeFeedPage, ChangeFeedStart,
    ConsistencyLevel, ContainerBatch, ContainerClient, ContainerProperties, ContainerResponse,
    CosmosDriver, CosmosError, Credential, DatabaseClient, DatabaseProperties, DriverOptions,
    ErrorKind, FeedRange, FeedScope, IndexingPolicy, ItemOptions, ItemResponse, OperationOptions,
    PartitionKey, PartitionKeyDefinition, PatchInstructions, Precondition, Query, QueryItems,
    QueryOptions, QueryPage, QueryScope, ReadManyOptions, ReadManyResponse, Region, ResourceFeed,
    ResourcePage, SessionToken, ThroughputProperties, ThroughputResponse,
};
pub use futures::{StreamExt, TryStreamExt};
