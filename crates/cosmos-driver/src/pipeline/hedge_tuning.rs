//! What a hedged read takes from the driver's adaptive state and gives back to it: the threshold
//! of its race (for an adaptive threshold, from the primary region's recent latencies) and, after
//! the race, how long the primary region took.
//!
//! Only reads with an adaptive threshold record latencies, so a driver that never uses one keeps
//! no latency table at all.

use std::time::Duration;

use tokio::time::Instant;

use super::context::OperationContext;
use super::hedge_plan::HedgePlan;
use super::leg_result::LegResult;
use crate::hedging::{
    default_threshold, HedgeLegOutput, HedgeTerminalState, HedgeThreshold, HedgedRace, Leg,
    ReadKind,
};
use crate::operation::CosmosOperation;
use crate::protocol::{OperationType, ResourceType};

/// The kind of read `op` is, for its latencies: a change-feed page is a read feed with `A-IM`.
pub(crate) fn read_kind(op: &CosmosOperation) -> ReadKind {
    match (op.resource_type(), op.operation_type()) {
        (ResourceType::Document, OperationType::Read) => ReadKind::PointRead,
        (ResourceType::Document, OperationType::Query) => ReadKind::QueryPage,
        (ResourceType::Document, _)
            if op.extra_headers().iter().any(|(n, _)| n.as_str() == "a-im") =>
        {
            ReadKind::ChangeFeedPage
        }
        (ResourceType::Document, _) => ReadKind::FeedPage,
        _ => ReadKind::Metadata,
    }
}

/// The fixed threshold the read's race uses.
pub(crate) fn race_threshold(ctx: &OperationContext<'_>, plan: &HedgePlan<'_>) -> HedgeThreshold {
    let threshold = plan.strategy.threshold();
    if !threshold.is_adaptive() {
        return threshold;
    }
    let fallback = default_threshold(ctx.options.hedging.request_timeout);
    ctx.core.latencies.threshold_for(
        &plan.primary.region,
        read_kind(ctx.operation),
        threshold,
        fallback,
        Instant::now(),
    )
}

/// What a finished race says about its primary region's latency, when anything.
pub(crate) fn observed_primary_latency(
    plan: &HedgePlan<'_>,
    race: &HedgedRace<LegResult>,
    elapsed: Duration,
) -> Option<Duration> {
    let primary_ended_first = matches!(race.earlier, Some((Leg::Primary, _)));
    let primary_answered_there = match &race.output {
        Some((Leg::Primary, leg)) => {
            leg.is_final()
                && leg
                    .region
                    .as_ref()
                    .is_some_and(|r| r.region == plan.primary.region)
        }
        _ => false,
    };
    primary_latency(
        race.terminal_state,
        primary_ended_first,
        primary_answered_there,
        elapsed,
    )
}

/// The rule of [`observed_primary_latency`], over plain facts of the race.
///
/// A final answer of the primary in its own region took `elapsed` there. When the alternate won
/// while the primary was still out, the primary had not answered within `elapsed`: recording that
/// lower bound keeps a region that turned slow from looking fast (its slow answers are never seen,
/// because the alternate wins first); it leaves a quantile below the threshold unchanged, because
/// every such latency lies above it. After an early hedge (the primary had already ended transient,
/// say a 503 in 3 ms) the race's time is the alternate's, not the primary region's. Anything else
/// (no final answer, a deadline) says nothing.
pub(crate) fn primary_latency(
    state: HedgeTerminalState,
    primary_ended_first: bool,
    primary_answered_there: bool,
    elapsed: Duration,
) -> Option<Duration> {
    match state {
        HedgeTerminalState::AlternateWon if !primary_ended_first => Some(elapsed),
        HedgeTerminalState::PrimaryWonPreThreshold
        | HedgeTerminalState::PrimaryWonAfterHedge
        | HedgeTerminalState::BudgetDenied
            if primary_answered_there =>
        {
            Some(elapsed)
        }
        _ => None,
    }
}

/// Records the primary region's latency a race observed, for adaptive thresholds.
pub(crate) fn record_race(
    ctx: &OperationContext<'_>,
    plan: &HedgePlan<'_>,
    race: &HedgedRace<LegResult>,
    elapsed: Duration,
) {
    if !plan.strategy.threshold().is_adaptive() {
        return;
    }
    if let Some(latency) = observed_primary_latency(plan, race, elapsed) {
        ctx.core.latencies.record(
            &plan.primary.region,
            read_kind(ctx.operation),
            latency,
            Instant::now(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use HedgeTerminalState::*;

    #[test]
    fn what_a_race_says_of_its_primary_region() {
        let t = Duration::from_millis(70);
        // (state, primary ended first, primary answered in its region, recorded)
        let rows = [
            (AlternateWon, false, false, Some(t)),
            (AlternateWon, true, false, None),
            (PrimaryWonPreThreshold, false, true, Some(t)),
            (PrimaryWonAfterHedge, false, true, Some(t)),
            (BudgetDenied, false, true, Some(t)),
            (PrimaryWonAfterHedge, false, false, None),
            (PrimaryTransientPreThreshold, false, false, None),
            (
                BothTransient {
                    deadline_elapsed: false,
                },
                true,
                false,
                None,
            ),
            (CancelledAwaitingPartner, false, false, None),
            (DeadlineExceededPreThreshold, false, false, None),
        ];
        for (state, first, there, want) in rows {
            assert_eq!(
                primary_latency(state, first, there, t),
                want,
                "{state:?} {first} {there}"
            );
        }
    }

    #[test]
    fn reads_are_kept_apart_by_kind() {
        use crate::protocol::{ContainerReference, DatabaseReference};
        let c: ContainerReference = DatabaseReference::new("d").unwrap().container("c").unwrap();
        let feed = CosmosOperation::read_all_items(c.clone());
        let change_feed = CosmosOperation::read_all_items(c.clone()).with_header(
            http::HeaderName::from_static("a-im"),
            http::HeaderValue::from_static("Incremental feed"),
        );
        let rows = [
            (
                CosmosOperation::read_item(c.item("a").unwrap()),
                ReadKind::PointRead,
            ),
            (
                CosmosOperation::new(
                    OperationType::Query,
                    crate::operation::OperationTarget::Items(c.clone()),
                ),
                ReadKind::QueryPage,
            ),
            (feed, ReadKind::FeedPage),
            (change_feed, ReadKind::ChangeFeedPage),
            (
                CosmosOperation::read_container(c.clone()),
                ReadKind::Metadata,
            ),
            (
                CosmosOperation::read_partition_key_ranges(c),
                ReadKind::Metadata,
            ),
            (CosmosOperation::list_databases(), ReadKind::Metadata),
        ];
        for (op, want) in rows {
            assert_eq!(read_kind(&op), want, "{op}");
        }
    }
}
