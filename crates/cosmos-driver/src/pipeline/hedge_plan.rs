//! Whether a read is hedged, and between which two regions: the plan the dispatch point acts on.

use super::context::OperationContext;
use crate::hedging::{
    disabled_for_operation, resolve_strategy, select_alternate, should_hedge, HedgeDecision,
    HedgeEligibility, HedgingStrategy, ResolvedStrategy, PHASE_ALLOWED_OPERATIONS,
};
use crate::routing::{Candidates, RegionEndpoint};

/// A read the dispatch point hedges: its strategy and the two regions it races.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HedgePlan<'c> {
    pub strategy: HedgingStrategy,
    /// Where plain routing sends the read first.
    pub primary: &'c RegionEndpoint,
    /// Where the alternate leg goes: distinct from the primary in region and endpoint.
    pub alternate: &'c RegionEndpoint,
    /// Applicable preferred read regions after the excluded regions.
    pub applicable_regions: usize,
}

/// Whether `ctx`'s operation is hedged, and between which regions. Allocates nothing.
///
/// The strategy is resolved from the operation and client layers and the environment read when the
/// driver was built; eligibility counts the applicable *preferred* read regions (the preferred
/// regions the account has, after the excluded regions: at least two, §5.1), never the account's
/// other regions. The primary is where plain routing goes first. The alternate is the next
/// applicable preferred region not currently marked unavailable (endpoint down, or the partition
/// unhealthy there): hedging to a region routing already avoids would buy nothing, so a read whose
/// primary partition the breaker moved away goes to its new primary without hedging.
pub(crate) fn plan<'c>(ctx: &'c OperationContext<'_>) -> Option<HedgePlan<'c>> {
    let (resource_type, operation_type) = (
        ctx.operation.resource_type(),
        ctx.operation.operation_type(),
    );
    // The account's kill switch as the account metadata stood when the operation started.
    let resolved = resolve_strategy(
        &ctx.core.hedging_env,
        &ctx.options.hedging,
        ctx.account.properties.disable_cross_regional_hedging,
    );
    let strategy = resolved.strategy();
    let hedgeable_kind = PHASE_ALLOWED_OPERATIONS.contains(&(resource_type, operation_type));
    if let (ResolvedStrategy::Off(off), true) = (resolved, hedgeable_kind) {
        disabled_for_operation(off.as_str());
    }
    let preferred_regions_configured = !ctx.options.preferred_regions.is_empty();
    // Regions are only worth ordering when the rows before the region count (a strategy, preferred
    // regions, an operation this phase hedges) have not already said no.
    let candidates = if strategy.is_some() && preferred_regions_configured && hedgeable_kind {
        ctx.start_candidates()
    } else {
        Candidates::EMPTY
    };
    let preferred = ctx.options.preferred_regions;
    let is_preferred = |r: &&RegionEndpoint| preferred.contains(&r.region);
    let applicable_preferred = ctx
        .applicable_regions(&candidates)
        .filter(is_preferred)
        .count();
    let decision = should_hedge(&HedgeEligibility {
        strategy,
        preferred_regions_configured,
        resource_type,
        operation_type,
        applicable_read_regions: applicable_preferred,
    });
    let HedgeDecision::Hedge(strategy) = decision else {
        return None;
    };
    let primary = ctx.applicable_regions(&candidates).next()?;
    // The primary heads the list `select_alternate` skips; the alternate comes from the available
    // preferred regions after it.
    let usable = std::iter::once(primary).chain(
        ctx.applicable_regions(&candidates)
            .take(candidates.available())
            .filter(is_preferred)
            .filter(|r| r.region != primary.region),
    );
    let alternate = select_alternate(&primary.region, &primary.endpoint, usable)?;
    Some(HedgePlan {
        strategy,
        primary,
        alternate,
        applicable_regions: applicable_preferred,
    })
}
