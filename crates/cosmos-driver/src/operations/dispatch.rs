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

/// How the dispatcher carries out an operation of a plain kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PlainRoute {
    /// One request through the pipeline (a point operation, metadata, a batch).
    Send,
    /// The one page of a feed its continuation names.
    Page,
}

/// The route of an operation of `kind`; a PATCH is refused (it is read-modify-write, carried out
/// by the driver through `crate::patch`, never here).
fn plain_route(kind: OperationKind) -> Result<PlainRoute, CosmosError> {
    match kind {
        OperationKind::SingleRequest | OperationKind::Batch => Ok(PlainRoute::Send),
        OperationKind::PagedFeed => Ok(PlainRoute::Page),
        OperationKind::ReadModifyWrite => Err(CosmosError::new(
            ErrorKind::InvalidInput,
            "a PATCH is carried out as read-modify-write by the driver, not as one request",
        )),
    }
}

/// Checks `operation`'s inputs (before any request is sent), then carries it out by its kind. A
/// PATCH is refused: the driver carries it out as read-modify-write (`crate::patch`).
pub(crate) async fn run(
    core: &DriverCore,
    operation: CosmosOperation,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    operation.validate()?;
    match plain_route(OperationKind::of(&operation))? {
        PlainRoute::Send => core.send(&operation, options).await,
        PlainRoute::Page => pager::page(core, &operation, options).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_kind() {
        let table = [
            (OperationKind::SingleRequest, Some(PlainRoute::Send)),
            (OperationKind::Batch, Some(PlainRoute::Send)),
            (OperationKind::PagedFeed, Some(PlainRoute::Page)),
            (OperationKind::ReadModifyWrite, None),
        ];
        for (kind, route) in table {
            match (plain_route(kind), route) {
                (Ok(got), Some(want)) => assert_eq!(got, want, "{kind:?}"),
                (Err(e), None) => {
                    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{kind:?}");
                    assert!(e.message().contains("read-modify-write"), "{}", e.message());
                }
                (got, want) => panic!("{kind:?}: {got:?}, expected {want:?}"),
            }
        }
    }
}
