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

pub use crate::auth::{Credential, ResourceToken};
pub use crate::batch::BatchResponse;
pub use crate::bulk::{BulkOperation, BulkOptions, BulkResponse};
pub use crate::change_feed::{
    ChangeFeedItem, ChangeFeedMode, ChangeFeedOptions, ChangeFeedPage, ChangeFeedStart, FeedRange,
    FeedScope,
};
pub use crate::client::{
    ChangeFeed, ContainerBatch, ContainerClient, ContainerResponse, DatabaseClient,
    DatabaseProperties, IfNotExists, ItemOptions, ItemResponse, ResourceFeed, ResourcePage,
    ThroughputResponse, UserClient,
};
pub use crate::driver::CosmosDriver;
pub use crate::error::{CosmosError, ErrorKind};
pub use crate::hedging::AvailabilityStrategy;
pub use crate::operation::Precondition;
pub use crate::options::{DriverOptions, OperationOptions, PatchStrategy};
pub use crate::patch::PatchInstructions;
pub use crate::protocol::{
    ConsistencyLevel, PartitionKey, PartitionKeyDefinition, PriorityLevel, Region, SessionToken,
};
pub use crate::query::{Query, QueryItems, QueryOptions, QueryPage, QueryScope};
pub use crate::read_many::{ReadManyOptions, ReadManyResponse};
pub use crate::resources::{
    ConflictProperties, ContainerProperties, IndexingPolicy, PermissionMode, PermissionProperties,
    ThroughputProperties, UserProperties,
};
pub use futures::{StreamExt, TryStreamExt};
