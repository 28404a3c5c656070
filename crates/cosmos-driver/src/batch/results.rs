//! A batch response read into one result per operation, and the error that names the failing
//! operation when an atomic batch was rolled back (207 with 424 for the operations not applied).

use std::time::Duration;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Deserialize;
use serde_json::Value;

use super::wire::{BatchOperationKind, WireOperation};
use crate::error::{CosmosError, ErrorKind};
use crate::protocol::CosmosStatus;

/// The status of an operation that was not applied because another one failed.
pub const FAILED_DEPENDENCY: u16 = 424;

/// One entry of the response array as the service sends it; `B` is how its resource body is
/// read (a JSON value, or skipped without being built).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResult<B> {
    status_code: u16,
    #[serde(default)]
    sub_status_code: u32,
    #[serde(default)]
    request_charge: f64,
    #[serde(default, rename = "eTag")]
    etag: Option<String>,
    #[serde(default = "no_body")]
    resource_body: Option<B>,
    #[serde(default)]
    retry_after_milliseconds: Option<u64>,
    #[serde(default)]
    message: Option<String>,
}

fn no_body<B>() -> Option<B> {
    None
}

/// Whether the written documents a response carries back are read or skipped unbuilt (a bulk
/// run that keeps no bodies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bodies {
    /// Each result carries its resource body.
    Keep,
    /// No result carries one; the bodies are skipped as they are parsed.
    Skip,
}

/// What one operation of a batch answered.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchOperationResult {
    /// The operation's position in the batch.
    pub index: usize,
    /// What the operation did.
    pub kind: BatchOperationKind,
    /// The item id the operation named, when it named one.
    pub id: Option<String>,
    /// The operation's status and sub-status.
    pub status: CosmosStatus,
    /// The item's ETag after the operation, when there is an item.
    pub etag: Option<String>,
    /// The item after the operation (create, upsert, replace, patch) or as read.
    pub resource_body: Option<Value>,
    /// Request units the operation consumed.
    pub request_charge: f64,
    /// How long the service asked to wait before retrying a throttled operation.
    pub retry_after: Option<Duration>,
    /// The service's explanation of a failure.
    pub message: Option<String>,
}

impl BatchOperationResult {
    /// Whether the operation succeeded (2xx, or 304 for a read whose ETag matched).
    pub fn is_success(&self) -> bool {
        self.status.is_success() || self.status.status == 304
    }

    /// The item deserialized as `T`, when the result carries one.
    pub fn item<T: DeserializeOwned>(&self) -> Result<Option<T>, CosmosError> {
        self.resource_body
            .as_ref()
            .map(|v| T::deserialize(v))
            .transpose()
            .map_err(|e| {
                CosmosError::new(
                    ErrorKind::Deserialization,
                    format!(
                        "the item of batch operation {} is not the type asked for: {e}",
                        self.index
                    ),
                )
            })
    }
}

/// Reads a batch response `body` into one result per operation in `operations`.
pub(crate) fn parse_results(
    body: &[u8],
    operations: &[WireOperation],
) -> Result<Vec<BatchOperationResult>, CosmosError> {
    parse_results_of(
        body,
        operations
            .iter()
            .map(|op| (op.operation_type, op.id.as_deref())),
        Bodies::Keep,
    )
}

/// Reads a batch response `body` into one result per operation, each named by its kind and id;
/// with `Bodies::Skip` the resource bodies are not built.
pub(crate) fn parse_results_of<'a>(
    body: &[u8],
    operations: impl ExactSizeIterator<Item = (BatchOperationKind, Option<&'a str>)>,
    bodies: Bodies,
) -> Result<Vec<BatchOperationResult>, CosmosError> {
    match bodies {
        Bodies::Keep => results_from::<Value>(body, operations, |b| b),
        Bodies::Skip => results_from::<IgnoredAny>(body, operations, |_| None),
    }
}

fn results_from<'a, B: DeserializeOwned>(
    body: &[u8],
    operations: impl ExactSizeIterator<Item = (BatchOperationKind, Option<&'a str>)>,
    keep: impl Fn(Option<B>) -> Option<Value>,
) -> Result<Vec<BatchOperationResult>, CosmosError> {
    let entries: Vec<WireResult<B>> = serde_json::from_slice(body).map_err(|e| {
        CosmosError::new(
            ErrorKind::Deserialization,
            format!("a batch response is a JSON array of operation results: {e}"),
        )
    })?;
    if entries.len() != operations.len() {
        return Err(CosmosError::new(
            ErrorKind::Deserialization,
            format!(
                "the batch response has {} results for {} operations",
                entries.len(),
                operations.len()
            ),
        ));
    }
    Ok(entries
        .into_iter()
        .zip(operations)
        .enumerate()
        .map(|(index, (e, (kind, id)))| BatchOperationResult {
            index,
            kind,
            id: id.map(str::to_owned),
            status: CosmosStatus::new(e.status_code, e.sub_status_code),
            etag: e.etag,
            resource_body: keep(e.resource_body),
            request_charge: e.request_charge,
            retry_after: e.retry_after_milliseconds.map(Duration::from_millis),
            message: e.message,
        })
        .collect())
}

/// `Ok` when every operation of an atomic batch succeeded; otherwise the error that names the
/// operation whose failure rolled the batch back, with its status.
pub(crate) fn committed(results: &[BatchOperationResult]) -> Result<(), CosmosError> {
    let Some(failed) = results
        .iter()
        .find(|r| !r.is_success() && r.status.status != FAILED_DEPENDENCY)
        .or_else(|| results.iter().find(|r| !r.is_success()))
    else {
        return Ok(());
    };
    let what = match &failed.id {
        Some(id) => format!(
            "operation {} ({} {id:?})",
            failed.index,
            failed.kind.as_str()
        ),
        None => format!("operation {} ({})", failed.index, failed.kind.as_str()),
    };
    let because = failed
        .message
        .as_deref()
        .map(|m| format!(": {m}"))
        .unwrap_or_default();
    Err(CosmosError::new(
        ErrorKind::Service,
        format!(
            "the transactional batch was rolled back: {what} failed with status {}/{}{because}; no operation was applied",
            failed.status.status, failed.status.sub_status
        ),
    )
    .with_status(failed.status))
}

#[cfg(test)]
#[path = "results_alloc_tests.rs"]
mod alloc_tests;
