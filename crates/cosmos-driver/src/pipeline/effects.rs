//! Applying location effects: the one place an attempt's outcome changes shared routing state.

use std::sync::Arc;

use tokio::time::Instant;

use super::context::OperationContext;
use super::retry::LocationEffects;
use super::retry_state::RetryState;
use crate::routing::{AccountSnapshot, RegionEndpoint};

/// Applies `effects` of an attempt to `region`. Returns the refreshed account metadata when the
/// effects asked for a refresh.
pub(crate) async fn apply(
    ctx: &OperationContext<'_>,
    region: &RegionEndpoint,
    state: &RetryState,
    effects: &LocationEffects,
    account: &AccountSnapshot,
) -> Option<Arc<AccountSnapshot>> {
    let core = ctx.core;
    if let Some(scope) = effects.mark_endpoint_unavailable {
        core.health
            .mark_unavailable(&region.endpoint, scope, Instant::now());
    }
    if effects.partition_failure && effects.mark_endpoint_unavailable.is_none() {
        ctx.record_failed_region(&region.region);
    }
    let breaker_cares =
        effects.partition_failure || (effects.partition_success && core.breaker.is_active());
    if breaker_cares {
        let now = Instant::now();
        let range = state
            .partition_key_range_id
            .as_ref()
            .and_then(|v| v.to_str().ok());
        if let (Some(container), Some(range)) = (ctx.container, range) {
            if effects.partition_failure {
                core.breaker
                    .record_failure(container, range, &region.region, now);
            } else {
                core.breaker
                    .record_success(container, range, &region.region, now);
            }
        }
    }
    if let Some(container) = ctx.container {
        if effects.refresh_partition_ranges {
            core.breaker.forget_ranges(container);
            core.containers.forget_partition_key_ranges(container);
        }
        if effects.refresh_container {
            core.breaker.forget_ranges(container);
            core.containers.forget(container);
        }
    }
    if effects.refresh_account {
        // Boxed (rare path): keeps the leg's future, which every operation moves, small.
        let refresh = Box::pin(core.account.refresh(&core.transport, account.generation));
        let fresh = match ctx.deadline {
            Some(d) => tokio::time::timeout_at(d, refresh).await.ok()?,
            None => refresh.await,
        };
        return Some(fresh);
    }
    None
}
