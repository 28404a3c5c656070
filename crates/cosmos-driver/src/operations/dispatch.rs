//! The dispatcher: one operation carried out by its kind.

use super::operation_kind::OperationKind;
use super::pager;
use super::pipeline_entry::PipelineEntry;
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::pipeline::DriverCore;
use crate::response::CosmosResponse;

/// Checks `operation`'s inputs (before any request is sent), then carries it out by its kind.
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
        // Boxed: the read-modify-write future holds two whole operations, and keeping it inline
        // would make every operation's future (and every move of it) that much larger.
        OperationKind::ReadModifyWrite => {
            Box::pin(crate::patch::execute_patch(core, operation, options)).await
        }
    }
}
