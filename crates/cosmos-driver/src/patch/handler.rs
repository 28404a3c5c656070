//! The PATCH read-modify-write loop: pre-flight, then Read, apply, Replace with `If-Match` on the
//! Read's ETag, and on 412 read again, up to the attempt limit.
//!
//! The Read and the Replace re-enter the ordinary pipeline (retries, routing, sessions) and are
//! never themselves PATCH. 412 stays non-retryable there; the only retry of a lost race is this
//! loop's own.

use std::num::NonZeroU8;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use serde_json::Value;
use tokio::time::Instant;

use super::instructions::PatchInstructions;
use super::ops::apply_patch_ops;
use super::partition_paths::partition_key_paths;
use super::preflight;
use super::session_thread::{replace_token, SessionThread};
use super::synthesis::patch_response;
use crate::diagnostics::DiagnosticsContext;
use crate::driver::CosmosDriver;
use crate::error::{CosmosError, ErrorKind};
use crate::operation::{CosmosOperation, Precondition};
use crate::options::{OperationOptions, DEFAULT_PATCH_MAX_ATTEMPTS};
use crate::pipeline;
use crate::protocol::{header_names as h, status, CosmosStatus, ItemReference, PartitionKey, SessionToken};
use crate::response::CosmosResponse;

/// Carries out a PATCH operation (already validated by the driver). Refusals are made before any
/// item request goes out; every sub-operation error is returned as the sub-operation produced it.
pub(crate) async fn execute_patch(
    driver: &CosmosDriver,
    operation: CosmosOperation,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    let core = driver.core();
    let request = PatchRequest::new(&operation, options, core.options.operation_defaults())?;
    let budget = Budget::start(request.end_to_end_timeout);
    let container = request.item.container();
    let paths = partition_key_paths(core, container, &budget.sub_options(options, None)?).await?;
    preflight::check(&request.instructions, false, &paths).map_err(refused)?;
    read_modify_write(driver, &request, options, &budget).await
}

/// A PATCH's inputs, checked.
struct PatchRequest {
    item: ItemReference,
    partition_key: PartitionKey,
    instructions: PatchInstructions,
    /// Caller headers passed on to both sub-operations (without session token or preconditions).
    headers: Vec<(HeaderName, HeaderValue)>,
    caller_session_token: Option<SessionToken>,
    max_attempts: NonZeroU8,
    end_to_end_timeout: Option<Duration>,
}

impl PatchRequest {
    /// Parses the body and runs the pre-flight checks that need nothing from the service.
    fn new(operation: &CosmosOperation, options: &OperationOptions, defaults: &OperationOptions) -> Result<Self, CosmosError> {
        let item = operation
            .item()
            .cloned()
            .ok_or_else(|| CosmosError::invalid_input(format!("{operation} does not name one item")))?;
        let partition_key = operation
            .partition_key()
            .cloned()
            .ok_or_else(|| CosmosError::invalid_input(format!("{operation} needs a partition key")))?;
        let body = operation.body().map(|b| b.as_ref()).unwrap_or_default();
        let instructions: PatchInstructions = serde_json::from_slice(body).map_err(|e| {
            CosmosError::invalid_input(format!("the body of {operation} is not a list of patch instructions: {e}"))
        })?;
        let mut caller_precondition = operation.precondition().is_some();
        let mut header_token = None;
        let mut headers = Vec::new();
        for (name, value) in operation.extra_headers() {
            if name == http::header::IF_MATCH || name == http::header::IF_NONE_MATCH {
                caller_precondition = true;
            } else if name == h::SESSION_TOKEN {
                header_token = Some(value);
            } else {
                headers.push((name.clone(), value.clone()));
            }
        }
        preflight::check(&instructions, caller_precondition, &[]).map_err(refused)?;
        let caller_session_token = match options.session_token.as_ref().or(defaults.session_token.as_ref()) {
            Some(token) => Some(token.clone()),
            None => header_token
                .map(|v| {
                    v.to_str()
                        .ok()
                        .and_then(|t| SessionToken::parse(t).ok())
                        .ok_or_else(|| CosmosError::invalid_input("the session token header of the PATCH is malformed"))
                })
                .transpose()?,
        };
        Ok(Self {
            item,
            partition_key,
            instructions,
            headers,
            caller_session_token,
            max_attempts: options
                .patch_max_attempts
                .or(defaults.patch_max_attempts)
                .unwrap_or(DEFAULT_PATCH_MAX_ATTEMPTS),
            end_to_end_timeout: options.end_to_end_timeout.or(defaults.end_to_end_timeout),
        })
    }

    fn with_headers(&self, mut op: CosmosOperation) -> CosmosOperation {
        for (name, value) in &self.headers {
            op = op.with_header(name.clone(), value.clone());
        }
        op
    }

    fn read(&self) -> CosmosOperation {
        self.with_headers(CosmosOperation::read_item(self.item.clone()).with_partition_key(self.partition_key.clone()))
    }

    fn replace(&self, body: Vec<u8>, etag: String) -> CosmosOperation {
        self.with_headers(
            CosmosOperation::replace_item(self.item.clone())
                .with_partition_key(self.partition_key.clone())
                .with_body(body)
                .with_precondition(Precondition::IfMatch(etag)),
        )
    }
}

/// The caller's end-to-end timeout bounds the whole PATCH: each sub-operation gets what is left.
struct Budget {
    timeout: Option<Duration>,
    deadline: Option<Instant>,
}

impl Budget {
    fn start(timeout: Option<Duration>) -> Self {
        Self { timeout, deadline: timeout.map(|t| Instant::now() + t) }
    }

    /// The caller's options for one sub-operation: its session token replaced by `session_token`
    /// and its end-to-end timeout by the time left.
    fn sub_options(&self, caller: &OperationOptions, session_token: Option<SessionToken>) -> Result<OperationOptions, CosmosError> {
        let mut options = caller.clone();
        options.session_token = session_token;
        if let (Some(timeout), Some(deadline)) = (self.timeout, self.deadline) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(CosmosError::end_to_end_timeout(timeout, 0, None)
                    .with_context("PATCH ran out of time between its read and its replace"));
            }
            options.end_to_end_timeout = Some(left);
        }
        Ok(options)
    }
}

/// Read, apply, Replace with If-Match; 412 goes round again.
async fn read_modify_write(
    driver: &CosmosDriver,
    request: &PatchRequest,
    caller: &OperationOptions,
    budget: &Budget,
) -> Result<CosmosResponse, CosmosError> {
    let core = driver.core();
    let read_op = request.read();
    let mut thread = SessionThread::seed(request.caller_session_token.clone());
    let mut spent: Vec<DiagnosticsContext> = Vec::new();
    let mut last_conflict: Option<CosmosError> = None;
    for _ in 0..request.max_attempts.get() {
        let read = pipeline::execute(core, &read_op, &budget.sub_options(caller, thread.current().cloned())?).await?;
        thread.advance(read.session_token());
        let etag = read.etag().map(str::to_owned).ok_or_else(|| {
            CosmosError::new(
                ErrorKind::Deserialization,
                "the read of the item answered without an ETag, so PATCH cannot make its replace conditional",
            )
            .with_diagnostics(read.diagnostics().clone())
        })?;
        let replace_session = replace_token(read.session_token(), &thread);
        let (_, _, read_body, read_diagnostics) = read.into_parts();
        let mut doc = parse_document(&read_body).map_err(|e| e.with_diagnostics(read_diagnostics.clone()))?;
        apply_patch_ops(&mut doc, &request.instructions.operations).map_err(|e| {
            CosmosError::invalid_input(format!("the patch does not apply to the item as read: {e}"))
                .with_status(CosmosStatus::new(status::BAD_REQUEST, 0))
                .with_diagnostics(read_diagnostics.clone())
                .with_source(e)
        })?;
        let merged = serde_json::to_vec(&doc).map_err(|e| {
            CosmosError::new(ErrorKind::Deserialization, format!("the patched item cannot be serialized: {e}"))
        })?;
        spent.push(read_diagnostics);
        let replace_op = request.replace(merged, etag);
        match pipeline::execute(core, &replace_op, &budget.sub_options(caller, replace_session)?).await {
            Ok(replace) => {
                thread.advance(replace.session_token());
                return patch_response(doc, replace, spent);
            }
            Err(conflict) if conflict.is_precondition_failed() => {
                thread.advance(conflict.headers().and_then(|h| h.session_token()));
                spent.push(conflict.diagnostics().clone());
                last_conflict = Some(conflict);
            }
            Err(other) => return Err(other),
        }
    }
    Err(exhausted(request.max_attempts, last_conflict))
}

/// The Read's body as a JSON object.
fn parse_document(body: &[u8]) -> Result<Value, CosmosError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(doc @ Value::Object(_)) => Ok(doc),
        Ok(_) => Err(CosmosError::new(ErrorKind::Deserialization, "the item as read is not a JSON object")),
        Err(e) => Err(CosmosError::new(
            ErrorKind::Deserialization,
            format!("the item as read ({} bytes) is not JSON: {e}", body.len()),
        )),
    }
}

/// 412 after every attempt lost its race, with the last 412 as the source and its diagnostics.
fn exhausted(attempts: NonZeroU8, last: Option<CosmosError>) -> CosmosError {
    let message = format!(
        "PATCH gave up after {attempts} read-modify-write attempt{}: each replace found the item changed since \
         its read (412 Precondition Failed)",
        if attempts.get() == 1 { "" } else { "s" }
    );
    let status = last
        .as_ref()
        .and_then(CosmosError::cosmos_status)
        .unwrap_or(CosmosStatus::new(status::PRECONDITION_FAILED, 0));
    let error = CosmosError::new(ErrorKind::Service, message).with_status(status);
    match last {
        Some(last) => error.with_diagnostics(last.diagnostics().clone()).with_source(last),
        None => error,
    }
}

fn refused(refusal: preflight::PatchRefusal) -> CosmosError {
    CosmosError::invalid_input(refusal.to_string()).with_source(refusal)
}
