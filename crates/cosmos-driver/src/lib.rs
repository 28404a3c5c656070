//! An Azure Cosmos DB (NoSQL API) driver over HTTP whose reads stay fast when a region is slow.
//!
//! # Start here
//!
//! Build one [`CosmosDriver`] per account from [`DriverOptions`]: the account's endpoint and a
//! [`Credential`] (the account key with [`Credential::master_key`], or an Entra ID token credential
//! with [`Credential::token_credential`]). [`CosmosDriver::new`] reads the account (its regions and
//! write region) and answers a handle to share (`Clone`, `Send + Sync`). Then work through the
//! typed handles, with `use cosmos_driver::prelude::*`:
//!
//! ```no_run
//! use cosmos_driver::prelude::*;
//! # async fn run(key: &str) -> Result<(), CosmosError> {
//! let options = DriverOptions::new("https://myaccount.documents.azure.com:443/", Credential::master_key(key)?)
//!     .with_preferred_regions(["West US", "East US"]);   // the order to read from
//! let driver = CosmosDriver::new(options).await?;
//! let orders = driver.container("shop", "orders");
//! let order = orders.read_item::<serde_json::Value>("c-7", "o-1", None).await?;
//! println!("{} RU, etag {:?}", order.request_charge(), order.etag());
//! # Ok(())
//! # }
//! ```
//!
//! In tests, point it at the embedded emulator (crate `cosmos-emulator`, a dev-dependency): its
//! endpoint and key come from the running handle.
//!
//! ```no_run
//! # use cosmos_driver::prelude::*;
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let emulator = cosmos_emulator::EmulatorBuilder::new().start().await?;
//! let options = DriverOptions::new(emulator.endpoint(), Credential::master_key(emulator.key())?);
//! let driver = CosmosDriver::new(options).await?;
//! # let _ = driver;
//! # Ok(())
//! # }
//! ```
//!
//! # The handles
//!
//! - [`CosmosDriver::new`] or [`CosmosDriver::from_connection_string`]; credentials: an account
//!   key, resource tokens of permissions ([`Credential::resource_tokens`]) or Entra ID;
//! - [`CosmosDriver::create_database`], [`CosmosDriver::create_database_if_not_exists`],
//!   [`CosmosDriver::database`] → [`DatabaseClient`] (create, read, delete, `create_container`,
//!   `create_container_if_not_exists`, containers, throughput, users → [`UserClient`] and their
//!   permissions);
//! - [`CosmosDriver::container`] / [`DatabaseClient::container`] → [`ContainerClient`]: item
//!   operations generic over `T: Serialize / DeserializeOwned` (`read_item::<T>`, `create_item`,
//!   `upsert_item`, `replace_item`, `delete_item`, `patch_item`) with per-call [`ItemOptions`],
//!   answering [`ItemResponse<T>`] (charge, ETag, session token, diagnostics); queries
//!   ([`QueryItems`]), the change feed ([`ChangeFeed`]), read many, transactional batch, bulk,
//!   properties and throughput, the conflict feed;
//! - streams of one shape: items with a running charge, `into_pages()` for each page's RU,
//!   continuation and diagnostics.
//!
//! Reads are hedged across regions by default when two or more preferred regions apply (see
//! [`hedging`]); retries, failover, sessions and the per-partition circuit breaker need no setup.
//!
//! # Below the handles
//!
//! Below the handles, the operation layer stays public for what they do not cover: describe an
//! operation as a [`CosmosOperation`] and run it with [`CosmosDriver::execute`] (or
//! [`CosmosDriver::pages`] for every page of a feed), answering a [`CosmosResponse`].
//!
//! Also public, as part of that low-level layer: the driver's shared state for inspection
//! ([`PartitionBreaker`], [`EndpointHealth`], [`SessionContainer`], from
//! [`CosmosDriver::partition_breaker`], [`CosmosDriver::endpoint_health`] and
//! [`CosmosDriver::sessions`]) and the query pager over a page source ([`query::QueryPager`],
//! [`query::QueryPageSource`]). The query engine's pieces (plan checks, merge, aggregates, GROUP
//! BY, continuation tokens), bulk's planner and the change feed's state machine are internal; the
//! crate warns on any `pub` item outside the public surface (`unreachable_pub`).
//!
//! # Layers
//!
//! Top to bottom; a module imports its own layer and those below, never one above (the
//! `layers` test keeps it so):
//!
//! - [`processor`]: the change feed processor (leases, balancing), above the typed handles.
//! - client: the typed handles.
//! - api: `driver` ([`CosmosDriver`]).
//! - operation kinds, each in its own folder: [`patch`] (read-modify-write), [`query`],
//!   [`change_feed`], [`read_many`], [`batch`], [`bulk`].
//! - operations: the machinery every kind runs through, naming no kind (the dispatcher of plain
//!   operations, the paging loop with [`Pager`], the re-plan loop, the pipeline entry).
//! - pipeline: one request across attempts and regions (retry decisions, the hedged read).
//! - operation data: [`CosmosOperation`] and [`options`].
//! - [`hedging`]: strategy, eligibility, the race, win feedback.
//! - routing and sessions: account metadata, region candidates, endpoint health, the partition
//!   breaker, container metadata, session tokens.
//! - transport: one HTTP attempt. [`auth`]: credentials.
//! - errors and responses: [`CosmosError`], [`CosmosResponse`].
//! - [`diagnostics`]: what happened.
//! - [`protocol`]: the service's vocabulary, with no I/O and no import of any other module.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

/// The README's code examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

#[cfg(test)]
mod alloc_counter;
pub mod auth;
pub mod batch;
pub mod bulk;
pub mod change_feed;
mod client;
pub mod diagnostics;
mod driver;
mod error;
#[cfg(test)]
mod event_capture;
pub mod hedging;
mod operation;
mod operations;
pub mod options;
pub mod patch;
mod pipeline;
pub mod prelude;
pub mod processor;
pub mod protocol;
pub mod query;
pub mod read_many;
pub mod resources;
mod response;
mod routing;
mod session;
mod transport;

/// Unit tests count allocations on the measuring thread (see `alloc_counter`).
#[cfg(test)]
#[global_allocator]
static ALLOCATOR: alloc_counter::CountingAllocator = alloc_counter::CountingAllocator;

pub use auth::{AccessToken, Credential, ResourceToken, TokenCredential};
pub use client::{
    ChangeFeed, ContainerBatch, ContainerBulk, ContainerClient, ContainerResponse, DatabaseClient,
    DatabaseProperties, ExecuteOptions, IfNotExists, ItemOptions, ItemResponse, ResourceFeed,
    ResourcePage, ScriptsClient, StoredProcedureResponse, ThroughputResponse, UserClient,
};
pub use diagnostics::{AttemptReason, DiagnosticsContext, RequestDiagnostics};
pub use driver::CosmosDriver;
pub use error::{CosmosError, ErrorKind};
pub use operation::{CosmosOperation, OperationTarget, Precondition};
pub use operations::Pager;
pub use options::{
    ConnectionPoolOptions, DriverOptions, HttpVersion, OperationOptions, PatchStrategy,
    RetryOptions,
};
pub use protocol::{
    ConsistencyLevel, ContainerReference, CosmosStatus, DatabaseReference, ItemReference,
    OperationType, PartitionKey, PartitionKeyDefinition, PartitionKeyValue, PriorityLevel, Region,
    ResourceType, ResponseHeaders, ScriptKind, ScriptReference, SessionToken, ThroughputBucket,
};
pub use response::CosmosResponse;
pub use routing::{
    AccessScope, AccountProperties, ContainerBreaker, EndpointHealth, PartitionBreaker,
    RegionEndpoint,
};
pub use session::SessionContainer;
pub use transport::{API_VERSION, USER_AGENT_VALUE};

pub use batch::BatchResponse;
pub use bulk::{BulkOperation, BulkOptions, BulkResponse};
pub use change_feed::{
    ChangeFeedItem, ChangeFeedMode, ChangeFeedOptions, ChangeFeedPage, ChangeFeedStart, FeedRange,
    FeedScope,
};
pub use hedging::AvailabilityStrategy;
pub use patch::PatchInstructions;
pub use processor::{
    ChangeFeedEstimator, ChangeFeedProcessor, ProcessorContext, ProcessorEvent, ProcessorOptions,
    ProcessorStart,
};
pub use query::{KeySpan, Query, QueryItems, QueryOptions, QueryPage, QueryScope, VectorHit};
pub use read_many::{ReadManyOptions, ReadManyResponse};
pub use resources::{
    ConflictProperties, ContainerProperties, IndexingPolicy, PermissionMode, PermissionProperties,
    StoredProcedureProperties, ThroughputProperties, TriggerOperation, TriggerProperties,
    TriggerType, UserDefinedFunctionProperties, UserProperties,
};
