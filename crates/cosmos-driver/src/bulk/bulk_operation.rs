//! One bulk operation: what it does, on which item, with its own partition key, as the batch wire
//! format carries it; and the headers that make a batch request non-atomic.

use http::{HeaderName, HeaderValue};
use serde::Serialize;

use crate::batch::builder::{checked_id, document};
use crate::batch::wire::{
    WireOperation, BATCH_CONTINUE_ON_ERROR, IS_BATCH_ATOMIC, IS_BATCH_REQUEST,
};
use crate::batch::BatchOperationKind;
use crate::error::CosmosError;
use crate::patch::PatchInstructions;
use crate::protocol::PartitionKey;

/// An independent write (or read) for bulk execution, carrying its own partition key.
#[derive(Clone, Debug)]
pub struct BulkOperation {
    partition_key: PartitionKey,
    pub(crate) wire: WireOperation,
}

impl BulkOperation {
    /// Creates `item` (a JSON object with a string `id`) under `partition_key`.
    pub fn create<T: Serialize + ?Sized>(
        partition_key: impl Into<PartitionKey>,
        item: &T,
    ) -> Result<Self, CosmosError> {
        let (id, body) = document(BatchOperationKind::Create, item, None)?;
        Ok(Self::new(
            partition_key.into(),
            BatchOperationKind::Create,
            id,
            Some(body),
        ))
    }

    /// Creates or replaces `item` under `partition_key`.
    pub fn upsert<T: Serialize + ?Sized>(
        partition_key: impl Into<PartitionKey>,
        item: &T,
    ) -> Result<Self, CosmosError> {
        let (id, body) = document(BatchOperationKind::Upsert, item, None)?;
        Ok(Self::new(
            partition_key.into(),
            BatchOperationKind::Upsert,
            id,
            Some(body),
        ))
    }

    /// Replaces the item `id` with `item`, whose `id` must be the same.
    pub fn replace<T: Serialize + ?Sized>(
        partition_key: impl Into<PartitionKey>,
        id: &str,
        item: &T,
    ) -> Result<Self, CosmosError> {
        let (id, body) = document(BatchOperationKind::Replace, item, Some(id))?;
        Ok(Self::new(
            partition_key.into(),
            BatchOperationKind::Replace,
            id,
            Some(body),
        ))
    }

    /// Deletes the item `id`.
    pub fn delete(partition_key: impl Into<PartitionKey>, id: &str) -> Result<Self, CosmosError> {
        let id = checked_id(id)?;
        Ok(Self::new(
            partition_key.into(),
            BatchOperationKind::Delete,
            id,
            None,
        ))
    }

    /// Applies `instructions` to the item `id`.
    pub fn patch(
        partition_key: impl Into<PartitionKey>,
        id: &str,
        instructions: &PatchInstructions,
    ) -> Result<Self, CosmosError> {
        let id = checked_id(id)?;
        if instructions.operations.is_empty() {
            return Err(CosmosError::invalid_input(format!(
                "the bulk Patch of {id:?} has no patch operations"
            )));
        }
        let body = serde_json::to_value(instructions).map_err(|e| {
            CosmosError::invalid_input(format!("the bulk Patch of {id:?} is not JSON: {e}"))
        })?;
        Ok(Self::new(
            partition_key.into(),
            BatchOperationKind::Patch,
            id,
            Some(body),
        ))
    }

    fn new(
        partition_key: PartitionKey,
        kind: BatchOperationKind,
        id: String,
        resource_body: Option<serde_json::Value>,
    ) -> Self {
        let wire = WireOperation {
            operation_type: kind,
            id: Some(id),
            resource_body,
            partition_key: Some(partition_key.as_json().to_owned()),
            if_match: None,
            if_none_match: None,
        };
        Self {
            partition_key,
            wire,
        }
    }

    /// The partition key the operation is on (it decides the range).
    pub fn partition_key(&self) -> &PartitionKey {
        &self.partition_key
    }

    /// What the operation does.
    pub fn kind(&self) -> BatchOperationKind {
        self.wire.operation_type
    }

    /// The item id the operation names.
    pub fn id(&self) -> &str {
        self.wire.id.as_deref().unwrap_or_default()
    }

    /// The headers of a bulk request: a batch, not atomic, each operation attempted.
    pub fn headers() -> [(HeaderName, HeaderValue); 3] {
        [
            (IS_BATCH_REQUEST, HeaderValue::from_static("True")),
            (IS_BATCH_ATOMIC, HeaderValue::from_static("False")),
            (BATCH_CONTINUE_ON_ERROR, HeaderValue::from_static("True")),
        ]
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn bulk_operations_carry_their_own_partition_key() {
        let patch = PatchInstructions::new().remove("/x");
        let cases = vec![
            (
                BulkOperation::create("p1", &json!({"id": "a"})).unwrap(),
                json!({"operationType": "Create", "id": "a", "resourceBody": {"id": "a"}, "partitionKey": "[\"p1\"]"}),
            ),
            (
                BulkOperation::upsert("p2", &json!({"id": "b"})).unwrap(),
                json!({"operationType": "Upsert", "id": "b", "resourceBody": {"id": "b"}, "partitionKey": "[\"p2\"]"}),
            ),
            (
                BulkOperation::replace("p", "c", &json!({"id": "c"})).unwrap(),
                json!({"operationType": "Replace", "id": "c", "resourceBody": {"id": "c"}, "partitionKey": "[\"p\"]"}),
            ),
            (
                BulkOperation::delete("p", "d").unwrap(),
                json!({"operationType": "Delete", "id": "d", "partitionKey": "[\"p\"]"}),
            ),
            (
                BulkOperation::patch("p", "e", &patch).unwrap(),
                json!({"operationType": "Patch", "id": "e", "resourceBody": {"operations": [{"op": "remove", "path": "/x"}]}, "partitionKey": "[\"p\"]"}),
            ),
        ];
        for (op, expected) in cases {
            assert_eq!(serde_json::to_value(&op.wire).unwrap(), expected);
        }
        let bad = [
            BulkOperation::create("p", &json!({"no": "id"})).unwrap_err(),
            BulkOperation::replace("p", "a", &json!({"id": "b"})).unwrap_err(),
            BulkOperation::delete("p", "").unwrap_err(),
            BulkOperation::patch("p", "a", &PatchInstructions::new()).unwrap_err(),
        ];
        assert!(bad.iter().all(CosmosError::is_invalid_input));
        let h = BulkOperation::headers();
        let h: Vec<(&str, &str)> = h
            .iter()
            .map(|(n, v)| (n.as_str(), v.to_str().unwrap()))
            .collect();
        assert_eq!(
            h,
            vec![
                ("x-ms-cosmos-is-batch-request", "True"),
                ("x-ms-cosmos-batch-atomic", "False"),
                ("x-ms-cosmos-batch-continue-on-error", "True"),
            ]
        );
    }
}
