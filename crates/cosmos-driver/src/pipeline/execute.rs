//! Carrying out one operation: resolve its options, then run it.

use tokio::time::Instant;
use tracing::Instrument;

use super::context::OperationContext;
use super::driver_core::DriverCore;
use super::hedge_plan;
use super::hedged;
use super::leg::{run_leg, LegParams};
use super::leg_result::{LegEnd, LegResult};
use super::recreated_container::{ended_session_unavailable, observe_reread, reread_request};
use crate::diagnostics::{into_recorder, sink, ActivityId, DiagnosticsSink};
use crate::error::CosmosError;
use crate::hedging::HedgeDiagnostics;
use crate::operation::CosmosOperation;
use crate::options::{EffectiveOptions, OperationOptions};
use crate::response::CosmosResponse;

/// Runs `operation` with `options` (validated by the caller).
pub(crate) async fn execute(
    core: &DriverCore,
    operation: &CosmosOperation,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    // The client layer as it stands now: this operation keeps it (its regions) to the end.
    let client = core.client_layer.snapshot();
    let effective = EffectiveOptions::resolve(options, &client, core.options.request_timeout());
    let started = Instant::now();
    #[cfg(feature = "otel")]
    let wall_started = std::time::SystemTime::now();
    let ctx = OperationContext::new(core, operation, effective, started)?;
    let activity_id = ActivityId::new();
    let diagnostics = sink(activity_id, started);
    let span = tracing::debug_span!("cosmos.operation", operation = %operation, activity_id = %activity_id);
    // Instrumenting wraps (and so copies) the whole in-flight future: only when someone listens.
    let run = || async {
        let (mut end, mut hedge) = dispatch(&ctx, &diagnostics).await;
        // Boxed (rare path): keeps every operation's future small.
        if ended_session_unavailable(&end) && Box::pin(container_was_recreated(&ctx)).await {
            (end, hedge) = dispatch(&ctx, &diagnostics).await;
        }
        (end, hedge)
    };
    let (end, hedge) = if span.is_disabled() {
        run().await
    } else {
        run().instrument(span).await
    };
    let result = after_operation(
        &ctx,
        LegResult::finish(end, into_recorder(diagnostics), hedge),
    );
    #[cfg(feature = "otel")]
    super::telemetry::record(core, operation, &result, wall_started);
    result
}

/// Reads the operation's container again (through this same path) and tells whether it is another
/// container than the one the driver's session token belongs to. Any failure of the read leaves
/// things as they are (false).
async fn container_was_recreated(ctx: &OperationContext<'_>) -> bool {
    let Some((read, options)) = reread_request(ctx) else {
        return false;
    };
    // Boxed: the read re-enters the operation path this recovery is part of.
    match Box::pin(execute(ctx.core, &read, &options)).await {
        Ok(response) => observe_reread(ctx, response.body()),
        Err(_) => false,
    }
}

/// ── HEDGING DISPATCH POINT ──────────────────────────────────────────────────────────────────────
/// The single place where a read may enter a hedge race instead of the plain path (one leg, free to
/// fail over within the caller's excluded regions).
async fn dispatch(
    ctx: &OperationContext<'_>,
    diagnostics: &DiagnosticsSink,
) -> (LegEnd, Option<HedgeDiagnostics>) {
    match hedge_plan::plan(ctx) {
        Some(plan) => hedged::run_hedged(ctx, plan, diagnostics).await,
        None => (
            run_leg(ctx, LegParams::plain(ctx, diagnostics)).await.end,
            None,
        ),
    }
}

/// Bookkeeping after an operation: forget the session of a deleted container; drop the body of a
/// write response the caller asked not to receive (servers that ignore `Prefer: return=minimal`
/// still send it).
pub(crate) fn after_operation(
    ctx: &OperationContext<'_>,
    result: Result<CosmosResponse, CosmosError>,
) -> Result<CosmosResponse, CosmosError> {
    use crate::operation::OperationTarget;
    use crate::protocol::{OperationType, ResourceType};
    let op = ctx.operation;
    if let (Ok(_), OperationType::Delete, OperationTarget::Container(c)) =
        (&result, op.operation_type(), op.target())
    {
        ctx.core.sessions.forget(c.link_arc());
        ctx.core.containers.forget(c.link());
    }
    match result {
        Ok(response)
            if !ctx.options.content_response_on_write
                && op.resource_type() == ResourceType::Document
                && op.operation_type().is_write()
                && !response.body().is_empty() =>
        {
            let (status, headers, _, diagnostics) = response.into_parts();
            Ok(CosmosResponse::new(
                status,
                headers,
                bytes::Bytes::new(),
                diagnostics,
            ))
        }
        other => other,
    }
}
