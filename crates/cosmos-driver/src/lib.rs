//! An Azure Cosmos DB (NoSQL API) driver over HTTP whose reads stay fast when a region is slow.
//!
//! Layers, top to bottom (a lower layer never reaches up): the API (`CosmosDriver`,
//! `CosmosOperation`, options, response, error), the operation pipeline (retry decisions, routing,
//! hedging, PATCH), the transport (one HTTP attempt), the protocol vocabulary, and diagnostics.

pub mod auth;
mod client;
pub mod diagnostics;
mod driver;
mod error;
#[cfg(test)]
mod event_capture;
mod fast_hash;
pub mod hedging;
mod operation;
pub mod options;
pub mod patch;
pub mod pipeline;
pub mod protocol;
pub mod query;
mod response;
pub mod routing;
pub mod session;
pub mod transport;

pub use auth::{AccessToken, Credential, TokenCredential};
pub use client::{ContainerClient, ItemResponse};
pub use diagnostics::{AttemptReason, DiagnosticsContext, RequestDiagnostics};
pub use driver::CosmosDriver;
pub use error::{CosmosError, ErrorKind};
pub use operation::{CosmosOperation, OperationTarget, Precondition};
pub use options::{ConnectionPoolOptions, DriverOptions, OperationOptions};
pub use protocol::{
    ConsistencyLevel, ContainerReference, CosmosStatus, DatabaseReference, ItemReference,
    OperationType, PartitionKey, PartitionKeyDefinition, PartitionKeyValue, Region, ResourceType,
    SessionToken,
};
pub use response::{CosmosResponse, ResponseHeaders};
