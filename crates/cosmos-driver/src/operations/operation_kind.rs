//! Which kind of operation the dispatcher is carrying out.

use crate::operation::CosmosOperation;
use crate::protocol::OperationType;

/// The ways an operation is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OperationKind {
    /// One request: point reads and writes, metadata.
    SingleRequest,
    /// Read, change locally, write back conditionally (PATCH).
    ReadModifyWrite,
    /// One page of a feed per request, continued by the service's continuation token (read feed,
    /// a query page).
    PagedFeed,
    /// Many item operations in one request (a transactional batch, or one batch of a bulk run):
    /// one request through the pipeline, never hedged (it writes), retried only where a write may
    /// be (429, or when nothing reached the service).
    Batch,
}

impl OperationKind {
    /// The kind of `operation`.
    pub(crate) fn of(operation: &CosmosOperation) -> Self {
        match operation.operation_type() {
            OperationType::Patch => OperationKind::ReadModifyWrite,
            OperationType::ReadFeed | OperationType::Query => OperationKind::PagedFeed,
            OperationType::Batch => OperationKind::Batch,
            OperationType::Read
            | OperationType::Create
            | OperationType::Upsert
            | OperationType::Replace
            | OperationType::Delete
            | OperationType::DeletePartitionKey => OperationKind::SingleRequest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ContainerReference, DatabaseReference, ItemReference};

    fn container() -> ContainerReference {
        DatabaseReference::new("d").unwrap().container("c").unwrap()
    }
    fn item() -> ItemReference {
        container().item("i").unwrap()
    }

    #[test]
    fn kinds_by_operation() {
        let table = [
            (
                CosmosOperation::read_item(item()),
                OperationKind::SingleRequest,
            ),
            (
                CosmosOperation::create_item(container()),
                OperationKind::SingleRequest,
            ),
            (
                CosmosOperation::upsert_item(container()),
                OperationKind::SingleRequest,
            ),
            (
                CosmosOperation::replace_item(item()),
                OperationKind::SingleRequest,
            ),
            (
                CosmosOperation::delete_item(item()),
                OperationKind::SingleRequest,
            ),
            (
                CosmosOperation::read_account(),
                OperationKind::SingleRequest,
            ),
            (
                CosmosOperation::read_container(container()),
                OperationKind::SingleRequest,
            ),
            (
                CosmosOperation::patch_item(item()),
                OperationKind::ReadModifyWrite,
            ),
            (CosmosOperation::batch(container()), OperationKind::Batch),
            (
                CosmosOperation::read_all_items(container()),
                OperationKind::PagedFeed,
            ),
            (CosmosOperation::list_databases(), OperationKind::PagedFeed),
            (
                CosmosOperation::list_containers(DatabaseReference::new("d").unwrap()),
                OperationKind::PagedFeed,
            ),
            (
                CosmosOperation::read_partition_key_ranges(container()),
                OperationKind::PagedFeed,
            ),
        ];
        for (operation, kind) in table {
            assert_eq!(OperationKind::of(&operation), kind, "{operation}");
        }
    }
}
