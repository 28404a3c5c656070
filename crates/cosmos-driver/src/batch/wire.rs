//! The batch wire format shared by transactional batches and bulk: one JSON object per operation
//! (`operationType`, `id`, `resourceBody`, `partitionKey`, `ifMatch`, `ifNoneMatch`) in a JSON
//! array, and the headers that mark a request as a batch.

use http::HeaderName;
use serde::Serialize;
use serde_json::Value;

/// Marks a POST to an item feed as a batch (`True`).
pub const IS_BATCH_REQUEST: HeaderName = HeaderName::from_static("x-ms-cosmos-is-batch-request");
/// `True`: all operations or none (transactional batch); `False`: each on its own (bulk).
pub const IS_BATCH_ATOMIC: HeaderName = HeaderName::from_static("x-ms-cosmos-batch-atomic");
/// For a non-atomic batch: whether operations after a failed one still run.
pub const BATCH_CONTINUE_ON_ERROR: HeaderName =
    HeaderName::from_static("x-ms-cosmos-batch-continue-on-error");

/// At most this many operations in one batch request.
pub const MAX_OPERATIONS: usize = 100;
/// At most this many bytes in one batch request body (2 MB).
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// What a batch operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum BatchOperationKind {
    /// Create an item; 409 when its id exists.
    Create,
    /// Create or replace an item.
    Upsert,
    /// Replace an existing item.
    Replace,
    /// Delete an existing item.
    Delete,
    /// Read an item.
    Read,
    /// Partially update an existing item.
    Patch,
}

impl BatchOperationKind {
    /// The service's name for the operation.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Create => "Create",
            Self::Upsert => "Upsert",
            Self::Replace => "Replace",
            Self::Delete => "Delete",
            Self::Read => "Read",
            Self::Patch => "Patch",
        }
    }
}

/// One operation as it is sent.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireOperation {
    pub operation_type: BatchOperationKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_body: Option<Value>,
    /// The operation's own partition key as header JSON (`["a"]`); bulk only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub if_match: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub if_none_match: Option<String>,
}

impl WireOperation {
    /// The operation's encoded length in bytes.
    pub(crate) fn encoded_len(&self) -> usize {
        serde_json::to_vec(self).map_or(0, |v| v.len())
    }

    /// `Create "a"`-style words naming the operation in errors.
    pub(crate) fn describe(&self, index: usize) -> String {
        match &self.id {
            Some(id) => format!(
                "operation {index} ({} {id:?})",
                self.operation_type.as_str()
            ),
            None => format!("operation {index} ({})", self.operation_type.as_str()),
        }
    }
}

/// The encoded length of a JSON array holding elements of `lens` bytes.
pub(crate) fn array_len(element_bytes: usize, count: usize) -> usize {
    2 + element_bytes + count.saturating_sub(1)
}
