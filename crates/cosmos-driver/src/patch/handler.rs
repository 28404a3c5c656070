//! PATCH: pre-flight, then the strategy (`PatchStrategy`, planned in `strategy_plan`): the
//! read-modify-write loop (Read, apply, Replace with `If-Match` on the Read's ETag, on 412 read
//! again, up to the attempt limit), the service's PATCH verb, or (the default) the verb where the
//! account serves it and the instructions fit it.
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
use super::native::native_body;
use super::ops::apply_patch_ops;
use super::preflight;
use super::session_thread::{replace_token, SessionThread};
use super::settle::{settle, Settlement, UnsettledWrite};
use super::strategy_plan::{plan, Needs, Plan};
use super::synthesis::patch_response;
use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};
use crate::operation::{CosmosOperation, Precondition};
use crate::operations::{partition_key_paths, PipelineEntry};
use crate::options::{OperationOptions, PatchStrategy, DEFAULT_PATCH_MAX_ATTEMPTS};
use crate::pipeline::{self, DriverCore, SiblingVerdict, WriteKey, WriterOutcome};
use crate::protocol::{
    header_names as h, status, CosmosStatus, ItemReference, PartitionKey, SessionToken,
};
use crate::response::CosmosResponse;

/// Carries out a PATCH operation (already validated by the driver). Refusals are made before any
/// item request goes out; every sub-operation error is returned as the sub-operation produced it.
pub(crate) async fn execute_patch(
    core: &DriverCore,
    operation: CosmosOperation,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    let request = PatchRequest::new(&operation, options, &core.client_layer.snapshot())?;
    let budget = Budget::start(request.end_to_end_timeout);
    let container = request.item.container();
    let paths = partition_key_paths(core, container, &budget.sub_options(options, None)?).await?;
    preflight::check(&request.instructions, false, &paths).map_err(refused)?;
    let needs = Needs {
        operations: request.instructions.operations.len(),
        condition: request.instructions.condition.is_some(),
    };
    match plan(request.strategy, core.native_patch.known(), needs) {
        Plan::Refuse(why) => Err(CosmosError::invalid_input(why.message())),
        Plan::Loop => read_modify_write(core, &request, options, &budget).await,
        Plan::Native => native_patch(core, &request, options, &budget).await,
        Plan::NativeLearning => {
            let result = native_patch(core, &request, options, &budget).await;
            let status = match &result {
                Ok(r) => Some(r.status()),
                Err(e) => e.status(),
            };
            match status {
                // Not served: nothing was carried out, so the loop may run the same PATCH.
                Some(s) if pipeline::says_not_served(s) => {
                    core.native_patch.learn(false);
                    tracing::debug!(
                        target: "cosmos.patch",
                        status = s,
                        "the account does not serve PATCH; read-modify-write from now on"
                    );
                    match plan(request.strategy, Some(false), needs) {
                        Plan::Loop => read_modify_write(core, &request, options, &budget).await,
                        Plan::Refuse(why) => Err(CosmosError::invalid_input(why.message())),
                        Plan::Native | Plan::NativeLearning => result,
                    }
                }
                Some(_) => {
                    core.native_patch.learn(true);
                    result
                }
                None => result,
            }
        }
    }
}

/// One native PATCH through the pipeline. A PATCH is never sent twice after its answer was lost:
/// the pipeline reports that as [`ErrorKind::OutcomeUnknown`].
async fn native_patch(
    core: &DriverCore,
    request: &PatchRequest,
    caller: &OperationOptions,
    budget: &Budget,
) -> Result<CosmosResponse, CosmosError> {
    let body = native_body(&request.instructions).map_err(|e| {
        CosmosError::new(
            ErrorKind::Deserialization,
            format!("the PATCH body cannot be serialized: {e}"),
        )
    })?;
    let op = request.with_headers(
        CosmosOperation::patch_item(request.item.clone())
            .with_partition_key(request.partition_key.clone())
            .with_body(body),
    );
    let options = budget.sub_options(caller, request.caller_session_token.clone())?;
    core.send(&op, &options).await
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
    strategy: PatchStrategy,
}

impl PatchRequest {
    /// Parses the body and runs the pre-flight checks that need nothing from the service.
    fn new(
        operation: &CosmosOperation,
        options: &OperationOptions,
        defaults: &OperationOptions,
    ) -> Result<Self, CosmosError> {
        let item = operation.item().cloned().ok_or_else(|| {
            CosmosError::invalid_input(format!("{operation} does not name one item"))
        })?;
        let partition_key = operation.partition_key().cloned().ok_or_else(|| {
            CosmosError::invalid_input(format!("{operation} needs a partition key"))
        })?;
        let body = operation.body().map(|b| b.as_ref()).unwrap_or_default();
        let instructions: PatchInstructions = serde_json::from_slice(body).map_err(|e| {
            CosmosError::invalid_input(format!(
                "the body of {operation} is not a list of patch instructions: {e}"
            ))
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
        let caller_session_token = match options
            .session_token
            .as_ref()
            .or(defaults.session_token.as_ref())
        {
            Some(token) => Some(token.clone()),
            None => header_token
                .map(|v| {
                    v.to_str()
                        .ok()
                        .and_then(|t| SessionToken::parse(t).ok())
                        .ok_or_else(|| {
                            CosmosError::invalid_input(
                                "the session token header of the PATCH is malformed",
                            )
                        })
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
            strategy: options
                .patch_strategy
                .or(defaults.patch_strategy)
                .unwrap_or_default(),
        })
    }

    fn with_headers(&self, mut op: CosmosOperation) -> CosmosOperation {
        for (name, value) in &self.headers {
            op = op.with_header(name.clone(), value.clone());
        }
        op
    }

    fn read(&self) -> CosmosOperation {
        self.with_headers(
            CosmosOperation::read_item(self.item.clone())
                .with_partition_key(self.partition_key.clone()),
        )
    }

    /// This item under the precondition `if_match`, as the driver's conditional-write registry
    /// knows it.
    fn write_key(&self, if_match: &str) -> WriteKey {
        WriteKey {
            item: self.item.link().to_owned(),
            partition_key: String::from_utf8_lossy(self.partition_key.header_value().as_bytes())
                .into_owned(),
            if_match: if_match.to_owned(),
        }
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

/// How long a PATCH with no deadline waits for a sibling Replace's answer before it reports its
/// own outcome unknown.
const SIBLING_PATIENCE: Duration = Duration::from_secs(30);

/// The caller's end-to-end timeout bounds the whole PATCH: each sub-operation gets what is left.
struct Budget {
    timeout: Option<Duration>,
    deadline: Option<Instant>,
}

impl Budget {
    fn start(timeout: Option<Duration>) -> Self {
        Self {
            timeout,
            deadline: timeout.map(|t| Instant::now() + t),
        }
    }

    /// How long to wait for a sibling's answer: the time left, or [`SIBLING_PATIENCE`] without a
    /// deadline.
    fn patience(&self) -> Duration {
        self.deadline.map_or(SIBLING_PATIENCE, |d| {
            d.saturating_duration_since(Instant::now())
        })
    }

    /// The caller's options for one sub-operation: its session token replaced by `session_token`
    /// and its end-to-end timeout by the time left.
    fn sub_options(
        &self,
        caller: &OperationOptions,
        session_token: Option<SessionToken>,
    ) -> Result<OperationOptions, CosmosError> {
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

/// Read, apply, Replace with If-Match; 412 goes round again. A Replace whose outcome is unknown
/// is settled by the next Read (`settle`): landed (success, once), not landed (the same
/// conditional Replace again), or unknown ([`ErrorKind::OutcomeUnknown`]). Once a Replace is
/// unsettled, the operations are never applied to an item that may already hold them.
async fn read_modify_write(
    core: &DriverCore,
    request: &PatchRequest,
    caller: &OperationOptions,
    budget: &Budget,
) -> Result<CosmosResponse, CosmosError> {
    let read_op = request.read();
    let mut thread = SessionThread::seed(request.caller_session_token.clone());
    let mut spent: Vec<DiagnosticsContext> = Vec::new();
    let mut last_conflict: Option<CosmosError> = None;
    let mut unsettled: Option<(UnsettledWrite, CosmosError)> = None;
    let mut writer = core.conditional_writes.writer();
    for _ in 0..request.max_attempts.get() {
        let read = match budget.sub_options(caller, thread.current().cloned()) {
            Ok(options) => core.send(&read_op, &options).await,
            Err(e) => Err(e),
        };
        let read = match (read, unsettled.take()) {
            (Ok(read), pending) => {
                unsettled = pending;
                read
            }
            (Err(e), None) => return Err(e),
            (Err(e), Some((_, lost))) => {
                return Err(unknown(
                    request,
                    lost,
                    "the read that would settle it failed",
                    e,
                ))
            }
        };
        thread.advance(read.session_token());
        let etag = read.etag().map(str::to_owned).ok_or_else(|| {
            CosmosError::new(
                ErrorKind::Deserialization,
                "the read of the item answered without an ETag, so PATCH cannot make its replace conditional",
            )
            .with_diagnostics(read.diagnostics().clone())
        })?;
        let replace_session = replace_token(read.session_token(), &thread);
        let (read_status, read_headers, read_body, read_diagnostics) = read.into_parts();
        let mut doc =
            parse_document(&read_body).map_err(|e| e.with_diagnostics(read_diagnostics.clone()))?;
        if let Some((write, lost)) = unsettled.take() {
            match settle(&write, &etag, &doc) {
                Settlement::Landed => {
                    let key = request.write_key(&write.if_match);
                    match writer.siblings(&key, budget.patience()).await {
                        SiblingVerdict::NoSibling => {
                            writer.record(&key, WriterOutcome::Landed);
                            let read = CosmosResponse::new(
                                read_status,
                                read_headers,
                                read_body,
                                read_diagnostics,
                            );
                            return patch_response(doc, read, spent);
                        }
                        // A sibling's Replace on the same ETag landed, so this one did not: the
                        // item as read is someone else's write, and the loop goes on from it.
                        SiblingVerdict::TheirsLanded => {
                            writer.record(&key, WriterOutcome::NotLanded);
                        }
                        SiblingVerdict::Wait | SiblingVerdict::CannotTell => {
                            let shared = CosmosError::new(
                                ErrorKind::OutcomeUnknown,
                                format!(
                                    "another PATCH of this driver sent a replace on the same version (ETag {}) and its outcome is unknown too",
                                    write.if_match
                                ),
                            );
                            return Err(unknown(
                                request,
                                lost,
                                "the item now holds the body both would write",
                                shared,
                            )
                            .with_diagnostics(read_diagnostics));
                        }
                    }
                }
                Settlement::Unknown => {
                    let changed = CosmosError::new(
                        ErrorKind::OutcomeUnknown,
                        format!("the item now has ETag {etag} and a body other than the one the replace wrote"),
                    );
                    return Err(unknown(request, lost, "the item changed since", changed)
                        .with_diagnostics(read_diagnostics));
                }
                Settlement::NotLanded => unsettled = Some((write, lost)),
            }
        }
        apply_patch_ops(&mut doc, &request.instructions.operations).map_err(|e| {
            CosmosError::invalid_input(format!("the patch does not apply to the item as read: {e}"))
                .with_status(CosmosStatus::new(status::BAD_REQUEST, 0))
                .with_diagnostics(read_diagnostics.clone())
                .with_source(e)
        })?;
        let merged = serde_json::to_vec(&doc).map_err(|e| {
            CosmosError::new(
                ErrorKind::Deserialization,
                format!("the patched item cannot be serialized: {e}"),
            )
        })?;
        spent.push(read_diagnostics);
        let replace_op = request.replace(merged, etag.clone());
        let key = request.write_key(&etag);
        writer.record(&key, WriterOutcome::Pending);
        let replaced = match budget.sub_options(caller, replace_session) {
            Ok(options) => core.send(&replace_op, &options).await,
            Err(e) => Err(e),
        };
        // A resend of a write whose first answer was lost stays unknown when refused: the first
        // one may be the write that consumed the precondition.
        let resent = unsettled.as_ref().is_some_and(|(w, _)| w.if_match == etag);
        writer.record(
            &key,
            match &replaced {
                Ok(_) => WriterOutcome::Landed,
                Err(e) if e.is_outcome_unknown() || resent => WriterOutcome::Unknown,
                Err(_) => WriterOutcome::NotLanded,
            },
        );
        match replaced {
            Ok(replace) => {
                thread.advance(replace.session_token());
                return patch_response(doc, replace, spent);
            }
            Err(conflict) if conflict.is_precondition_failed() => {
                thread.advance(conflict.headers().and_then(|h| h.session_token()));
                spent.push(conflict.diagnostics().clone());
                last_conflict = Some(conflict);
            }
            Err(lost) if lost.is_outcome_unknown() => {
                spent.push(lost.diagnostics().clone());
                let write = UnsettledWrite {
                    if_match: etag,
                    body: doc,
                };
                // A second unknown outcome of the same write (same ETag, same body) replaces the
                // first: both were conditioned on one ETag, so at most one of them lands.
                unsettled = Some((write, lost));
            }
            Err(other) => {
                return Err(match unsettled {
                    Some((_, lost)) => unknown(request, lost, "its next replace failed", other),
                    None => other,
                })
            }
        }
    }
    match unsettled {
        Some((_, lost)) => {
            let attempts = exhausted(request.max_attempts, last_conflict);
            Err(unknown(
                request,
                lost,
                "the attempts ran out before a read settled it",
                attempts,
            ))
        }
        None => Err(exhausted(request.max_attempts, last_conflict)),
    }
}

/// The PATCH's outcome is unknown: a replace of it (`lost`) may have landed, and `why` (with
/// `cause`) says why the loop cannot tell. The diagnostics are the cause's.
fn unknown(
    request: &PatchRequest,
    lost: CosmosError,
    why: &str,
    cause: CosmosError,
) -> CosmosError {
    let diagnostics = cause.diagnostics().clone();
    CosmosError::outcome_unknown(
        format!(
            "the outcome of PATCH on item '{}' is unknown: a replace was sent and its outcome lost ({}), and {why} ({}); \
             the item may or may not hold the patch, and the patch was not applied again",
            request.item.id(),
            lost.message(),
            cause.message()
        ),
        cause,
    )
    .with_diagnostics(diagnostics)
}

/// The Read's body as a JSON object.
fn parse_document(body: &[u8]) -> Result<Value, CosmosError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(doc @ Value::Object(_)) => Ok(doc),
        Ok(_) => Err(CosmosError::new(
            ErrorKind::Deserialization,
            "the item as read is not a JSON object",
        )),
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
        Some(last) => error
            .with_diagnostics(last.diagnostics().clone())
            .with_source(last),
        None => error,
    }
}

fn refused(refusal: preflight::PatchRefusal) -> CosmosError {
    CosmosError::invalid_input(refusal.to_string()).with_source(refusal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::DatabaseReference;

    fn op(body: &str) -> CosmosOperation {
        let item = DatabaseReference::new("d")
            .unwrap()
            .container("c")
            .unwrap()
            .item("i")
            .unwrap();
        CosmosOperation::patch_item(item)
            .with_partition_key("p")
            .with_body(body.to_owned())
    }

    const ONE: &str = r#"{"operations":[{"op":"incr","path":"/n","value":1}]}"#;

    fn message(result: Result<PatchRequest, CosmosError>) -> String {
        match result {
            Ok(_) => panic!("expected a refusal"),
            Err(e) => {
                assert!(e.is_invalid_input(), "{e}");
                e.message().to_owned()
            }
        }
    }

    #[test]
    fn reads_the_request_and_its_options() {
        let none = OperationOptions::new();
        let r = PatchRequest::new(&op(ONE), &none, &none).unwrap();
        assert_eq!(r.instructions.operations.len(), 1);
        assert_eq!(r.max_attempts, DEFAULT_PATCH_MAX_ATTEMPTS);
        assert_eq!(
            (r.caller_session_token.as_ref(), r.end_to_end_timeout),
            (None, None)
        );

        let three = NonZeroU8::new(3).unwrap();
        let client = OperationOptions::new()
            .with_patch_max_attempts(three)
            .with_end_to_end_timeout(Duration::from_secs(2))
            .with_session_token(SessionToken::parse("0:1#5").unwrap());
        let r = PatchRequest::new(&op(ONE), &none, &client).unwrap();
        assert_eq!(r.max_attempts, three, "the client's default applies");
        assert_eq!(r.end_to_end_timeout, Some(Duration::from_secs(2)));
        assert_eq!(
            r.caller_session_token,
            Some(SessionToken::parse("0:1#5").unwrap())
        );
        let mine = OperationOptions::new()
            .with_patch_max_attempts(NonZeroU8::MIN)
            .with_session_token(SessionToken::parse("0:1#9").unwrap());
        let r = PatchRequest::new(&op(ONE), &mine, &client).unwrap();
        assert_eq!(r.max_attempts, NonZeroU8::MIN, "the operation's value wins");
        assert_eq!(
            r.caller_session_token,
            Some(SessionToken::parse("0:1#9").unwrap())
        );
    }

    #[test]
    fn a_session_token_header_seeds_the_loop_and_other_headers_pass_on() {
        let none = OperationOptions::new();
        let custom = HeaderName::from_static("x-custom");
        let with_headers = op(ONE)
            .with_header(h::SESSION_TOKEN, HeaderValue::from_static("0:1#7"))
            .with_header(custom.clone(), HeaderValue::from_static("v"));
        let r = PatchRequest::new(&with_headers, &none, &none).unwrap();
        assert_eq!(
            r.caller_session_token,
            Some(SessionToken::parse("0:1#7").unwrap())
        );
        assert_eq!(
            r.headers,
            vec![(custom.clone(), HeaderValue::from_static("v"))]
        );
        let read = r.read();
        assert!(read
            .extra_headers()
            .iter()
            .all(|(n, _)| n != h::SESSION_TOKEN));
        assert!(read.extra_headers().iter().any(|(n, _)| n == custom));
        let replace = r.replace(b"{}".to_vec(), "\"e\"".to_owned());
        assert_eq!(
            replace.precondition(),
            Some(&Precondition::IfMatch("\"e\"".to_owned()))
        );
        assert!(replace.extra_headers().iter().any(|(n, _)| n == custom));

        let bad = op(ONE).with_header(h::SESSION_TOKEN, HeaderValue::from_static("nonsense"));
        assert!(message(PatchRequest::new(&bad, &none, &none)).contains("session token"));
    }

    #[test]
    fn refuses_before_anything_is_sent() {
        let none = OperationOptions::new();
        let cases = [
            (op("not json"), "not a list of patch instructions"),
            (op(r#"{"operations":[]}"#), "no operations"),
            (
                op(ONE).with_precondition(Precondition::IfNoneMatch("*".into())),
                "caller precondition",
            ),
            (
                op(ONE).with_header(http::header::IF_MATCH, HeaderValue::from_static("\"e\"")),
                "caller precondition",
            ),
            (
                op(r#"{"operations":[{"op":"set","path":"/_etag","value":1}]}"#),
                "\"_etag\"",
            ),
        ];
        for (operation, needle) in cases {
            let text = message(PatchRequest::new(&operation, &none, &none));
            assert!(text.contains(needle), "{text}");
        }
    }

    #[test]
    fn exhaustion_keeps_the_last_conflict() {
        let last = CosmosError::service(
            CosmosStatus::new(412, 0),
            Default::default(),
            bytes::Bytes::new(),
        );
        let e = exhausted(NonZeroU8::new(2).unwrap(), Some(last));
        assert!(e.is_precondition_failed());
        assert!(
            e.message().contains("after 2 read-modify-write attempts"),
            "{e}"
        );
        let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<CosmosError>());
        assert!(source.is_some_and(CosmosError::is_precondition_failed));
    }
}
