//! The dispatcher of the plain kinds: one operation carried out as one request or as one page of
//! a feed. Read-modify-write (PATCH) is a compound kind with a folder of its own above this layer;
//! the driver dispatches it there, and it is refused here.

use super::operation_kind::OperationKind;
use super::pager;
use super::pipeline_entry::PipelineEntry;
use crate::error::{CosmosError, ErrorKind};
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::pipeline::DriverCore;
use crate::response::CosmosResponse;

/// Checks `operation`'s inputs (before any request is sent), then carries it out by its kind. A
/// PATCH is refused: the driver carries it out as read-modify-write (`crate::patch`).
pub(crate) async fn run(
    core: &DriverCore,
    operation: CosmosOperation,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    operation.validate()?;
    execute(core, operation, options).await
}

/// Carries out `operation` (validated by the caller) by its kind.
async fn execute(
    core: &DriverCore,
    operation: CosmosOperation,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    match OperationKind::of(&operation) {
        OperationKind::SingleRequest | OperationKind::Batch => core.send(&operation, options).await,
        OperationKind::PagedFeed => pager::page(core, &operation, options).await,
        OperationKind::ReadModifyWrite => Err(CosmosError::new(
            ErrorKind::InvalidInput,
            "a PATCH is carried out as read-modify-write by the driver, not as one request",
        )),
    }
}
