//! The hedged read: the primary leg starts at once with plain routing; if it has no final result
//! when the threshold fires, one alternate leg pinned to the alternate region starts, and the two
//! race on this stack frame (`crate::hedging::race_hedged`: no spawn). Only the alternate leg is
//! boxed, when it is built. The first final result is the operation's; the other leg is dropped,
//! which cancels its request.
//!
//! The primary leg never fails over by itself inside a race (§6.5 #9, §7.2.1): when one of its
//! attempts calls for a retry in another region (408, 410, 500, 503, no response, 429/3092,
//! 403/1008) the leg ends with that outcome, and the race launches the alternate at once instead of
//! waiting out the threshold (or keeps waiting for the alternate already out); the outcome is
//! transient for the race, never an answer. Retries in place (a throttle with its retry-after, the
//! first 404/1002) stay in the primary leg. So does the hub step of a 404/1002 session retry (§9.6):
//! only the primary can reach the hub (the alternate is pinned to its own region), and the read
//! reaches the hub, with the hub-region header, whenever the same read without hedging would.
//!
//! What the operation keeps from a race:
//! - location effects: each leg applied its own as it went (`run_leg`), to the shared routing state,
//!   so a 503 on either leg marks that leg's endpoint;
//! - session tokens: each leg merges every response's token into the driver's (highest LSN per
//!   range wins, so a late answer never moves a token back);
//! - request charge: the caller is charged the returned response's; the diagnostics rows hold every
//!   attempt of both legs, so `DiagnosticsContext::total_request_charge` is the race's total;
//! - circuit-breaker feedback: an alternate win counts against (partition key range, primary
//!   region); a final answer from the primary region clears the count;
//! - `HedgeDiagnostics` on the response or the error, whatever the outcome.
//!
//! When both legs end transient, the read spends what is left of one retry budget, never a fresh
//! one: there is no second race. If the primary leg ended to move on and a region neither leg
//! used remains, one plain leg goes on over those regions with both legs' counters
//! (`after_race`); otherwise the last result is the read's. So a hedged read sends at most the
//! requests of the same read without hedging plus the alternate's one leg.
//!
//! Before the threshold nothing for the alternate exists: no pinned routing, no boxed leg. A read
//! that wins in time allocates exactly what the same read without hedging does.

use super::after_race::{after_both_transient, AfterRace, RaceLegs};
use super::context::OperationContext;
use super::hedge_plan::HedgePlan;
use super::hedge_tuning;
use super::leg::{run_leg, LegParams, LegRouting};
use super::leg_result::{LegEnd, LegResult};
use super::pace::{AlternatePace, PaceRole};
use super::retry_state::RetryState;
use crate::diagnostics::{AttemptReason, DiagnosticsSink};
use crate::error::{CosmosError, ErrorKind};
use crate::hedging::{
    apply_hedge_win_feedback, hedge_win_feedback, hub_latch_eligible,
    propagate_hedge_session_unavailable, race_hedged_within, AlternateRouting, HedgeDiagnostics,
    HedgeLegOutput, HedgeTerminalState, HedgeWinFeedback, HedgedRace, HubRegionLatch, Leg,
    RaceSetup,
};
use crate::protocol::CosmosStatus;

/// Runs a hedged read to its end: the final leg's end and the diagnostics of its race.
pub(crate) async fn run_hedged<'c>(
    ctx: &'c OperationContext<'_>,
    plan: HedgePlan<'c>,
    diagnostics: &DiagnosticsSink,
) -> (LegEnd, Option<HedgeDiagnostics>) {
    let op = ctx.operation;
    let multi_write = ctx.account.properties.multi_write;
    let latch = HubRegionLatch::new();
    let latch =
        hub_latch_eligible(op.resource_type(), op.operation_type(), multi_write).then_some(&latch);
    // The partition's range when it was seen before: failures that bring no header (no response at
    // all, or an error from a gateway) still count against the right partition.
    let mut parent = RetryState {
        partition_key_range_id: ctx.known_range(),
        ..RetryState::default()
    };
    let race_started = tokio::time::Instant::now();
    let race = race(ctx, &plan, &parent, latch, diagnostics).await;
    record_feedback(ctx, &plan, &race);
    hedge_tuning::record_race(ctx, &plan, &race, race_started.elapsed());
    let observed_session_unavailable = race.observed_session_unavailable();
    let HedgedRace {
        terminal_state,
        diagnostics: hedge,
        output,
        earlier,
    } = race;
    match terminal_state {
        HedgeTerminalState::PrimaryWonPreThreshold
        | HedgeTerminalState::PrimaryTransientPreThreshold
        | HedgeTerminalState::PrimaryWonAfterHedge
        | HedgeTerminalState::AlternateWon
        | HedgeTerminalState::BudgetDenied => {
            let Some((_, winner)) = output else {
                return (LegEnd::Error(no_result()), Some(hedge));
            };
            let hedge = hedge.served_by(winner.region.as_ref().map(|r| &r.region));
            (winner.end, Some(hedge))
        }
        HedgeTerminalState::DeadlineExceededPreThreshold
        | HedgeTerminalState::CancelledAwaitingPartner
        | HedgeTerminalState::BothTransient {
            deadline_elapsed: true,
        } => {
            let last = output.or(earlier).map(|(_, leg)| leg);
            (deadline_end(ctx, &plan, last, diagnostics), Some(hedge))
        }
        HedgeTerminalState::BothTransient {
            deadline_elapsed: false,
        } => {
            let Some((last_leg, last)) = output else {
                return (LegEnd::Error(no_result()), Some(hedge));
            };
            // What both legs learned becomes the operation's (§14.1).
            propagate_hedge_session_unavailable(
                &mut parent.hub_region_processing_only,
                latch,
                observed_session_unavailable,
            );
            let earlier = earlier.map(|(_, leg)| leg);
            if parent.partition_key_range_id.is_none() {
                parent.partition_key_range_id = earlier
                    .iter()
                    .chain(std::iter::once(&last))
                    .find_map(|leg| leg.state.partition_key_range_id.clone());
            }
            let (primary, alternate) = match last_leg {
                Leg::Primary => (Some(&last), earlier.as_ref()),
                Leg::Alternate => (earlier.as_ref(), Some(&last)),
            };
            let raced = [plan.primary.region.clone(), plan.alternate.region.clone()];
            let legs = RaceLegs {
                primary_moved_on: primary.is_some_and(|p| p.moved_on),
                alternate_moved_on: alternate.is_some_and(|a| a.moved_on),
                primary: primary.map(|p| p.state.counters).unwrap_or_default(),
                alternate: alternate.map(|a| a.state.counters).unwrap_or_default(),
                untried_region: untried_region(ctx, &plan),
            };
            let AfterRace::Continue(counters) = after_both_transient(legs, &ctx.core.limits) else {
                return (last.end, Some(hedge));
            };
            tracing::debug!(
                target: "cosmos.hedge",
                status = ?last.cosmos_status(),
                "both legs ended transient; the read goes on in the regions the race did not use"
            );
            // The read without hedging would have moved on from the primary's region, and then
            // from the alternate's: a plain leg takes it from there, with what is left of the
            // budget. The race's two regions go last in its route, as regions that failed this
            // operation; like the read without hedging, it may come back to them.
            for region in &raced {
                ctx.record_failed_region(region);
            }
            let params = LegParams {
                first_reason: AttemptReason::Failover,
                state: RetryState {
                    counters,
                    ..leg_state(&parent)
                },
                ..LegParams::plain(ctx, diagnostics)
            };
            let leg = run_leg(ctx, params).await;
            let hedge = if leg.is_final() {
                hedge.answered_after_race(leg.region.as_ref().map(|r| &r.region))
            } else {
                hedge
            };
            (leg.end, Some(hedge))
        }
    }
}

/// One race: the primary leg now, the pinned alternate after the threshold.
async fn race<'c>(
    ctx: &'c OperationContext<'_>,
    plan: &HedgePlan<'c>,
    parent: &RetryState,
    latch: Option<&HubRegionLatch>,
    diagnostics: &DiagnosticsSink,
) -> HedgedRace<LegResult> {
    let budget = ctx.core.hedge_budget.as_ref();
    if let Some(budget) = budget {
        budget.record_read();
    }
    let setup = RaceSetup {
        threshold: hedge_tuning::race_threshold(ctx, plan),
        deadline: ctx.deadline,
        primary_region: &plan.primary.region,
        alternate_region: &plan.alternate.region,
        applicable_regions: plan.applicable_regions,
        hub_latch: latch,
    };
    let plain = LegParams::plain(ctx, diagnostics);
    let pace = AlternatePace::default();
    let pace = &pace;
    let primary = run_leg(
        ctx,
        LegParams {
            // A move to another region is the alternate's job: the primary ends with the outcome
            // that called for it, and the race launches the alternate at once (§6.5 #9, §7.2.1).
            routing: LegRouting {
                region_change_ends_leg: true,
                ..plain.routing
            },
            hub_latch: latch,
            state: leg_state(parent),
            pace: Some((pace, PaceRole::Primary)),
            ..plain
        },
    );
    let primary = async move {
        let leg = primary.await;
        pace.primary_ended();
        leg
    };
    let alternate = plan.alternate;
    // Boxed inside the closure: the alternate's future is allocated only once the threshold fires
    // (or the primary asks for another region), and the operation's future stays near a plain
    // leg's size instead of carrying a second leg inline.
    race_hedged_within(setup, budget, primary, || {
        Box::pin(async move {
            // Built only now: excluding every other region keeps all of this leg's retries in its
            // region.
            let pinned = AlternateRouting::pinned(
                alternate,
                ctx.options.excluded_regions,
                ctx.account.properties.all_regions(),
            );
            let params = LegParams {
                pace: Some((pace, PaceRole::Alternate)),
                ..LegParams::hedge_alternate(
                    &pinned.excluded_regions,
                    untried_region(ctx, plan),
                    latch,
                    leg_state(parent),
                    diagnostics,
                )
            };
            run_leg(ctx, params).await
        })
    })
    .await
}

/// Whether a region the operation may read from is neither of the race's two.
fn untried_region(ctx: &OperationContext<'_>, plan: &HedgePlan<'_>) -> bool {
    ctx.applicable_regions(&ctx.start_candidates())
        .any(|r| r.region != plan.primary.region && r.region != plan.alternate.region)
}

/// A leg's starting state: its own retry budget, with what the operation already knows.
fn leg_state(parent: &RetryState) -> RetryState {
    RetryState {
        counters: Default::default(),
        hub_region_processing_only: parent.hub_region_processing_only,
        partition_key_range_id: parent.partition_key_range_id.clone(),
    }
}

/// The first partition key range id either leg learned, in the order they finished.
fn first_range(race: &HedgedRace<LegResult>) -> Option<http::HeaderValue> {
    race.earlier
        .iter()
        .chain(race.output.iter())
        .find_map(|(_, leg)| leg.state.partition_key_range_id.clone())
}

/// Tells the partition circuit breaker what the race showed about the primary region.
fn record_feedback(ctx: &OperationContext<'_>, plan: &HedgePlan<'_>, race: &HedgedRace<LegResult>) {
    let Some(container) = ctx.container else {
        return;
    };
    let mut feedback = hedge_win_feedback(race);
    // A primary leg that failed over answered from another region: nothing to say about its first.
    let answered_in_primary = matches!(
        &race.output,
        Some((_, leg)) if leg.region.as_ref().is_some_and(|r| r.region == plan.primary.region)
    );
    if feedback == HedgeWinFeedback::PrimaryFinal && !answered_in_primary {
        feedback = HedgeWinFeedback::Nothing;
    }
    let partition_key = ctx.operation.partition_key().map(|pk| pk.header_value());
    // Answers without the range header (a 404 for a missing item) count for the range the legs
    // already knew.
    let known;
    let range = match race.partition_key_range_id() {
        Some(range) => Some(range),
        None => {
            known = first_range(race);
            known.as_ref().and_then(|v| v.to_str().ok())
        }
    };
    apply_hedge_win_feedback(
        &ctx.core.breaker.for_container(container, partition_key),
        feedback,
        range,
        &plan.primary.region,
        ctx.options
            .hedging
            .consecutive_hedge_win_threshold(&ctx.core.hedging_env),
    );
}

/// The operation's end when the deadline passed during the race: the leg's own deadline error when
/// it produced one, else a deadline error naming the race, with the last leg's error as its source.
fn deadline_end(
    ctx: &OperationContext<'_>,
    plan: &HedgePlan<'_>,
    last: Option<LegResult>,
    diagnostics: &DiagnosticsSink,
) -> LegEnd {
    let mut last_status: Option<CosmosStatus> = None;
    let mut source: Option<CosmosError> = None;
    if let Some(leg) = last {
        match leg.end {
            LegEnd::Error(e) if e.kind() == ErrorKind::EndToEndTimeout => return LegEnd::Error(e),
            LegEnd::Error(e) => {
                last_status = e.cosmos_status();
                source = Some(e);
            }
            LegEnd::Response(r) => last_status = Some(r.status),
        }
    }
    let attempts = match diagnostics.lock() {
        Ok(recorder) => recorder.rows().len(),
        Err(poisoned) => poisoned.into_inner().rows().len(),
    };
    let timeout = ctx.options.end_to_end_timeout.unwrap_or_default();
    let mut error =
        CosmosError::end_to_end_timeout(timeout, attempts, last_status).with_context(format_args!(
            "hedged read between {} and {}",
            plan.primary.region, plan.alternate.region
        ));
    if let Some(source) = source {
        error = error.with_source(source);
    }
    LegEnd::Error(error)
}

fn no_result() -> CosmosError {
    CosmosError::new(
        ErrorKind::Transport,
        "the hedged read ended without a result from either region",
    )
}
