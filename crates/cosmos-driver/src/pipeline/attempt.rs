//! Building one attempt of an operation and reading what came back.

use std::time::Duration;

use tokio::time::Instant;

use super::attempt_outcome::AttemptOutcome;
use super::context::OperationContext;
use super::leg_result::ServiceResponse;
use super::retry_state::RetryState;
use crate::diagnostics::{record, AttemptReason, DiagnosticsSink, RequestDiagnostics};
use crate::error::{CosmosError, ErrorKind};
use crate::protocol::effective_partition_key_for;
use crate::protocol::Endpoint;
use crate::protocol::ResponseHeaders;
use crate::protocol::{header_names as h, OperationType, ResourceType, MAX_SESSION_TOKEN_BYTES};
use crate::routing::RegionEndpoint;
use crate::session::{ContainerSession, SessionTokenOverflow};
use crate::transport::failure_reason::explain;
use crate::transport::{AttemptHeaders, AttemptRequest, SendFailure};

/// The request of one attempt of `ctx`'s operation to `endpoint`; `hedge_attempt` marks an attempt
/// of a hedge race's alternate leg.
pub(crate) fn build_attempt<'a>(
    ctx: &'a OperationContext<'_>,
    endpoint: &'a Endpoint,
    hub_region_processing_only: bool,
    hedge_attempt: bool,
) -> AttemptRequest<'a> {
    let op = ctx.operation;
    let op_type = op.operation_type();
    let is_document = op.resource_type() == ResourceType::Document;
    let session_token = match (&ctx.caller_session_token, &ctx.session) {
        (Some(t), _) if is_document => Some(t.clone()),
        (None, Some(session)) if ctx.send_tracked_session_token => {
            tracked_session_token(ctx, session)
        }
        _ => None,
    };
    AttemptRequest {
        method: op_type.http_method(),
        endpoint,
        path: op.path(),
        resource_type: op.resource_type(),
        resource_link: op.target().signing_link(),
        body: op.body(),
        headers: AttemptHeaders {
            partition_key: op.partition_key().map(|pk| pk.header_value()),
            session_token,
            consistency: ctx.options.consistency_level,
            precondition: ctx.precondition.clone(),
            is_upsert: op_type == OperationType::Upsert,
            hub_region_processing_only,
            hedge_attempt,
            prefer_minimal: is_document
                && op_type.is_write()
                && !ctx.options.content_response_on_write,
            priority: ctx.options.priority_level,
            throughput_bucket: ctx.options.throughput_bucket,
            json_body: op.body().is_some(),
            extra: op.extra_headers(),
        },
    }
}

/// The tracked session token to send: the entry of the range that serves the request, when the
/// driver can tell which (the request names it; the partition key was last answered from it; or
/// the container's cached ranges place the key's hash in it); else the whole token.
fn tracked_session_token(
    ctx: &OperationContext<'_>,
    session: &ContainerSession,
) -> Option<http::HeaderValue> {
    let op = ctx.operation;
    let parents = |range: &str| {
        ctx.container
            .and_then(|c| ctx.core.containers.range_parents(c, range))
    };
    if let Some(range) = op.partition_key_range_id().and_then(|v| v.to_str().ok()) {
        return session.header_for_range(Some(range), parents);
    }
    let (Some(container), Some(pk)) = (ctx.container, op.partition_key()) else {
        return session.header_for_range(None, parents);
    };
    if let Some(learnt) = ctx.core.breaker.known_range(container, pk.header_value()) {
        if let Ok(range) = learnt.to_str() {
            return session.header_for_range(Some(range), parents);
        }
    }
    let by_hash = ctx
        .core
        .containers
        .partition_key_definition(container)
        .filter(|(paths, _)| pk.values().len() == paths.len())
        .and_then(|(paths, version)| {
            let epk = effective_partition_key_for(pk, paths.len(), version);
            ctx.core.containers.range_holding(container, &epk)
        });
    session.header_for_range(by_hash.as_deref(), parents)
}

/// The retry outcome and the error to report for an attempt that got no response.
pub(crate) fn classify(
    ctx: &OperationContext<'_>,
    region: &RegionEndpoint,
    failure: &SendFailure,
    request_timeout: Duration,
) -> (AttemptOutcome, CosmosError) {
    let op = ctx.operation;
    match failure {
        SendFailure::Connect(e) => (
            AttemptOutcome::ConnectFailed,
            CosmosError::new(
                ErrorKind::Transport,
                format!(
                    "{op}: could not connect to {} ({}): {}",
                    region.region,
                    region.endpoint,
                    explain(e.as_ref())
                ),
            ),
        ),
        SendFailure::Io(e) => (
            AttemptOutcome::ConnectionLost,
            CosmosError::new(
                ErrorKind::Transport,
                format!(
                    "{op}: the connection to {} ({}) failed: {}",
                    region.region,
                    region.endpoint,
                    explain(e.as_ref())
                ),
            ),
        ),
        SendFailure::BodyTooLarge(limit) => (
            AttemptOutcome::TooLarge,
            CosmosError::new(
                ErrorKind::Transport,
                format!(
                    "{op}: the response from {} is larger than the {limit} bytes the driver \
                     accepts (DriverOptions::with_max_response_bytes)",
                    region.region
                ),
            ),
        ),
        SendFailure::HeaderTooLarge { name, bytes, limit } => (
            AttemptOutcome::TooLarge,
            CosmosError::new(
                ErrorKind::Transport,
                format!(
                    "{op}: the response from {} carries a {name} header of {bytes} bytes, longer \
                     than the {limit} bytes the driver accepts",
                    region.region
                ),
            ),
        ),
        SendFailure::HeadTooLarge(limit) => (
            AttemptOutcome::TooLarge,
            CosmosError::new(
                ErrorKind::Transport,
                format!(
                    "{op}: the status line and headers of the response from {} are longer than \
                     the {limit} bytes the driver reads",
                    region.region
                ),
            ),
        ),
        SendFailure::TimedOut => (
            AttemptOutcome::TimedOut,
            CosmosError::new(
                ErrorKind::RequestTimeout,
                format!(
                    "{op}: no response from {} within the attempt timeout of {request_timeout:?}",
                    region.region
                ),
            ),
        ),
    }
}

/// Learns from a response: session token, partition key range id, range of the partition key.
/// Fails when the response's session token would take the container's past its size limit (the
/// token is then not kept, and the operation ends with that error).
pub(crate) fn record_response_facts(
    ctx: &OperationContext<'_>,
    response: &ServiceResponse,
    state: &mut RetryState,
) -> Result<(), CosmosError> {
    // A container recreated under the same name answers with a new resource id: what was known of
    // the old one goes before the new token is merged.
    if let Some(rid) = response.headers.get(&h::CONTENT_PATH) {
        super::recreated_container::observe_container_rid(ctx, rid);
    }
    if let (Some(session), Some(token)) = (&ctx.session, response.headers.get(&h::SESSION_TOKEN)) {
        let known = || {
            ctx.container
                .and_then(|c| ctx.core.containers.partition_key_ranges(c))
        };
        if let Err(overflow) = session.capture(token, known) {
            return Err(session_token_overflow(ctx, response, overflow));
        }
    }
    if let Some(container) = ctx.container {
        if let Some(range) = response.headers.get(&h::PARTITION_KEY_RANGE_ID) {
            if state.partition_key_range_id.as_ref() != Some(range) {
                state.partition_key_range_id = Some(range.clone());
            }
            // Learnt always (not only while the breaker tracks something): a later failure that
            // brings no range header still counts against the right partition.
            if let (Some(pk), Ok(range)) = (ctx.operation.partition_key(), range.to_str()) {
                ctx.core
                    .breaker
                    .learn_range(container, pk.header_value(), range);
            }
        }
    }
    Ok(())
}

/// The error of an operation whose response carried a session token the driver cannot keep.
fn session_token_overflow(
    ctx: &OperationContext<'_>,
    response: &ServiceResponse,
    overflow: SessionTokenOverflow,
) -> CosmosError {
    let container = ctx.container.map_or("?", |c| &**c);
    CosmosError::new(
        ErrorKind::Service,
        format!(
            "{}: the service answered {} with a session token that would make the one kept for \
             container {container} {} bytes over {} partition key ranges, past the limit of \
             {MAX_SESSION_TOKEN_BYTES} bytes per container; the token was not kept",
            ctx.operation, response.status, overflow.bytes, overflow.ranges
        ),
    )
    .with_status(response.status)
    .with_headers(ResponseHeaders::new(response.headers.clone()))
}

/// The row of an attempt in flight. Dropped before it is finished (the leg's future was dropped:
/// a hedge race's loser, or the caller gave up), it records the attempt as cancelled.
pub(crate) struct InFlightAttempt<'a> {
    sink: &'a DiagnosticsSink,
    row: Option<RequestDiagnostics>,
    started: Instant,
}

impl<'a> InFlightAttempt<'a> {
    /// An attempt to `region`, sent now for `reason`.
    pub(crate) fn start(
        sink: &'a DiagnosticsSink,
        region: &RegionEndpoint,
        reason: AttemptReason,
        operation_started: Instant,
    ) -> Self {
        let started = Instant::now();
        let row = RequestDiagnostics {
            region: Some(region.region.clone()),
            endpoint: region.endpoint.clone(),
            status: None,
            request_charge: 0.0,
            started_after: started.saturating_duration_since(operation_started),
            duration: Duration::ZERO,
            reason,
            activity_id: None,
            failure: None,
        };
        Self {
            sink,
            row: Some(row),
            started,
        }
    }

    /// When the attempt was sent.
    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    fn finish(mut self, f: impl FnOnce(&mut RequestDiagnostics)) {
        if let Some(mut row) = self.row.take() {
            row.duration = self.started.elapsed();
            f(&mut row);
            record(self.sink, row);
        }
    }

    /// The attempt got a response.
    pub(crate) fn answered(self, response: &ServiceResponse) {
        self.finish(|row| {
            row.status = Some(response.status);
            row.request_charge = response.request_charge;
            row.activity_id = response.headers.get(&h::ACTIVITY_ID).cloned();
        });
    }

    /// The attempt got none.
    pub(crate) fn failed(self, why: &'static str) {
        self.finish(|row| row.failure = Some(why));
    }
}

impl Drop for InFlightAttempt<'_> {
    fn drop(&mut self) {
        if let Some(mut row) = self.row.take() {
            row.duration = self.started.elapsed();
            row.failure = Some("cancelled");
            record(self.sink, row);
        }
    }
}
