//! The transactional batch builder: operations on one partition key, refused as they are added
//! when they would take the batch past the service's limits (100 operations, 2 MB), and the
//! request body and headers they make.

use bytes::Bytes;
use http::{HeaderName, HeaderValue};
use serde::Serialize;
use serde_json::Value;

use super::batch_response::BatchResponse;
use super::results::{committed, parse_results, BatchOperationResult};
use super::wire::{
    array_len, BatchOperationKind, WireOperation, IS_BATCH_ATOMIC, IS_BATCH_REQUEST,
    MAX_BODY_BYTES, MAX_OPERATIONS,
};
use crate::error::CosmosError;
use crate::operation::{CosmosOperation, Precondition};
use crate::patch::PatchInstructions;
use crate::protocol::ContainerReference;
use crate::protocol::PartitionKey;
use crate::response::CosmosResponse;

/// Up to 100 operations on the items of one partition key, applied by the service all or none.
///
/// ```
/// # use cosmos_driver::batch::TransactionalBatch;
/// # fn main() -> Result<(), cosmos_driver::CosmosError> {
/// let batch = TransactionalBatch::new("tenant-1")
///     .create(&serde_json::json!({"id": "a", "pk": "tenant-1"}))?
///     .delete("b")?
///     .read("c")?;
/// assert_eq!(batch.len(), 3);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct TransactionalBatch {
    partition_key: PartitionKey,
    operations: Vec<WireOperation>,
    /// Sum of the operations' encoded lengths.
    element_bytes: usize,
}

impl TransactionalBatch {
    /// An empty batch on the items whose partition key is `partition_key`.
    pub fn new(partition_key: impl Into<PartitionKey>) -> Self {
        Self {
            partition_key: partition_key.into(),
            operations: Vec::new(),
            element_bytes: 0,
        }
    }

    /// Creates `item` (a JSON object with a string `id`); fails when the id exists.
    pub fn create<T: Serialize + ?Sized>(self, item: &T) -> Result<Self, CosmosError> {
        let (id, body) = document(BatchOperationKind::Create, item, None)?;
        self.push(BatchOperationKind::Create, Some(id), Some(body))
    }

    /// Creates `item` or replaces the item with its id.
    pub fn upsert<T: Serialize + ?Sized>(self, item: &T) -> Result<Self, CosmosError> {
        let (id, body) = document(BatchOperationKind::Upsert, item, None)?;
        self.push(BatchOperationKind::Upsert, Some(id), Some(body))
    }

    /// Replaces the item `id` with `item`, whose `id` must be the same.
    pub fn replace<T: Serialize + ?Sized>(self, id: &str, item: &T) -> Result<Self, CosmosError> {
        let (id, body) = document(BatchOperationKind::Replace, item, Some(id))?;
        self.push(BatchOperationKind::Replace, Some(id), Some(body))
    }

    /// Deletes the item `id`.
    pub fn delete(self, id: &str) -> Result<Self, CosmosError> {
        self.push(BatchOperationKind::Delete, Some(checked_id(id)?), None)
    }

    /// Reads the item `id`; its body is in the operation's result.
    pub fn read(self, id: &str) -> Result<Self, CosmosError> {
        self.push(BatchOperationKind::Read, Some(checked_id(id)?), None)
    }

    /// Applies `instructions` to the item `id`.
    pub fn patch(self, id: &str, instructions: &PatchInstructions) -> Result<Self, CosmosError> {
        if instructions.operations.is_empty() {
            return Err(CosmosError::invalid_input(format!(
                "the batch's Patch of {id:?} has no patch operations"
            )));
        }
        let body = serde_json::to_value(instructions).map_err(|e| {
            CosmosError::invalid_input(format!("the batch's Patch of {id:?} is not JSON: {e}"))
        })?;
        self.push(BatchOperationKind::Patch, Some(checked_id(id)?), Some(body))
    }

    /// Makes the operation added last conditional on `precondition` (`ifMatch` / `ifNoneMatch`).
    pub fn with_precondition(mut self, precondition: Precondition) -> Result<Self, CosmosError> {
        let index = self.operations.len().checked_sub(1).ok_or_else(|| {
            CosmosError::invalid_input(
                "a precondition applies to the operation added before it; the batch has none",
            )
        })?;
        precondition.header()?;
        let mut op = self.operations[index].clone();
        match precondition {
            Precondition::IfMatch(tag) => op.if_match = Some(tag),
            Precondition::IfNoneMatch(tag) => op.if_none_match = Some(tag),
        }
        let old = self.operations[index].encoded_len();
        let new = op.encoded_len();
        let total = self.element_bytes - old + new;
        let body_len = array_len(total, self.operations.len());
        if body_len > MAX_BODY_BYTES {
            return Err(too_large(&op.describe(index), body_len));
        }
        self.operations[index] = op;
        self.element_bytes = total;
        Ok(self)
    }

    /// The partition key every operation is on.
    pub fn partition_key(&self) -> &PartitionKey {
        &self.partition_key
    }

    /// How many operations the batch holds.
    pub fn len(&self) -> usize {
        self.operations.len()
    }

    /// Whether the batch holds no operation.
    pub fn is_empty(&self) -> bool {
        self.operations.is_empty()
    }

    /// The operations' kinds and ids, in order.
    pub fn operations(&self) -> impl Iterator<Item = (BatchOperationKind, Option<&str>)> {
        self.operations
            .iter()
            .map(|op| (op.operation_type, op.id.as_deref()))
    }

    /// The request body: the JSON array of operations. Refused when the batch is empty.
    pub fn body(&self) -> Result<Bytes, CosmosError> {
        if self.operations.is_empty() {
            return Err(CosmosError::invalid_input(
                "a transactional batch needs at least one operation",
            ));
        }
        serde_json::to_vec(&self.operations)
            .map(Bytes::from)
            .map_err(|e| CosmosError::invalid_input(format!("the batch is not JSON: {e}")))
    }

    /// The headers that make the request an atomic batch (the partition key header is the
    /// operation's own).
    pub fn headers() -> [(HeaderName, HeaderValue); 2] {
        [
            (IS_BATCH_REQUEST, HeaderValue::from_static("True")),
            (IS_BATCH_ATOMIC, HeaderValue::from_static("True")),
        ]
    }

    /// The request that sends this batch to `container`: one atomic batch on its partition key.
    /// Refused when the batch is empty.
    pub fn operation(
        &self,
        container: &ContainerReference,
    ) -> Result<CosmosOperation, CosmosError> {
        let mut op = CosmosOperation::batch(container.clone())
            .with_partition_key(self.partition_key.clone())
            .with_body(self.body()?);
        for (name, value) in Self::headers() {
            op = op.with_header(name, value);
        }
        Ok(op)
    }

    /// Reads the service's answer to this batch: the results when it committed, else the error
    /// naming the operation whose failure rolled it back (with the response's diagnostics).
    pub fn response(&self, response: CosmosResponse) -> Result<BatchResponse, CosmosError> {
        let (status, headers, body, diagnostics) = response.into_parts();
        match self.committed_results(&body) {
            Ok(results) => Ok(BatchResponse {
                results,
                status,
                headers,
                diagnostics,
            }),
            Err(e) => Err(e.with_diagnostics(diagnostics)),
        }
    }

    /// Reads the service's answer to this batch into one result per operation, in order,
    /// whether the batch committed or not.
    pub fn parse_response(&self, body: &[u8]) -> Result<Vec<BatchOperationResult>, CosmosError> {
        parse_results(body, &self.operations)
    }

    /// Reads the service's answer to this batch; when the batch was rolled back, the error names
    /// the operation whose failure did it and carries its status.
    pub fn committed_results(&self, body: &[u8]) -> Result<Vec<BatchOperationResult>, CosmosError> {
        let results = self.parse_response(body)?;
        committed(&results)?;
        Ok(results)
    }

    fn push(
        mut self,
        kind: BatchOperationKind,
        id: Option<String>,
        resource_body: Option<Value>,
    ) -> Result<Self, CosmosError> {
        let index = self.operations.len();
        let op = WireOperation {
            operation_type: kind,
            id,
            resource_body,
            partition_key: None,
            if_match: None,
            if_none_match: None,
        };
        if index >= MAX_OPERATIONS {
            return Err(CosmosError::invalid_input(format!(
                "a transactional batch holds at most {MAX_OPERATIONS} operations; {} would be operation {}",
                op.describe(index),
                index + 1
            )));
        }
        let element_bytes = self.element_bytes + op.encoded_len();
        let body_len = array_len(element_bytes, index + 1);
        if body_len > MAX_BODY_BYTES {
            return Err(too_large(&op.describe(index), body_len));
        }
        self.operations.push(op);
        self.element_bytes = element_bytes;
        Ok(self)
    }
}

fn too_large(what: &str, body_len: usize) -> CosmosError {
    CosmosError::invalid_input(format!(
        "a transactional batch body is at most {MAX_BODY_BYTES} bytes; with {what} it would be {body_len}"
    ))
}

pub(crate) fn checked_id(id: &str) -> Result<String, CosmosError> {
    if id.is_empty() {
        return Err(CosmosError::invalid_input(
            "a batch operation's item id is empty",
        ));
    }
    Ok(id.to_owned())
}

/// The item as a JSON object and its `id`, which must equal `expected_id` when one is given.
pub(crate) fn document<T: Serialize + ?Sized>(
    kind: BatchOperationKind,
    item: &T,
    expected_id: Option<&str>,
) -> Result<(String, Value), CosmosError> {
    let what = kind.as_str();
    let value = serde_json::to_value(item).map_err(|e| {
        CosmosError::invalid_input(format!("the batch's {what} item is not JSON: {e}"))
    })?;
    let id = match value.as_object().map(|m| m.get("id")) {
        None => {
            return Err(CosmosError::invalid_input(format!(
                "the batch's {what} item is not a JSON object"
            )))
        }
        Some(Some(Value::String(id))) => checked_id(id)?,
        Some(_) => {
            return Err(CosmosError::invalid_input(format!(
                "the batch's {what} item has no string \"id\" property"
            )))
        }
    };
    if let Some(expected) = expected_id {
        if expected != id {
            return Err(CosmosError::invalid_input(format!(
                "the batch's {what} of {expected:?} carries an item whose id is {id:?}"
            )));
        }
    }
    Ok((id, value))
}
