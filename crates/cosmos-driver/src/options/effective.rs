//! Layered resolution: operation > client > default, computed per operation without copying
//! (everything borrows from the layers). The hedging switches also have an environment layer; it is
//! read once per driver (`crate::hedging::HedgingEnv`) and applied by `crate::hedging::resolve_strategy`
//! over [`EffectiveOptions::hedging_layers`].

use std::num::NonZeroU8;
use std::time::Duration;

use super::operation_options::{OperationOptions, DEFAULT_PATCH_MAX_ATTEMPTS};
use crate::hedging::HedgingLayers;
use crate::protocol::{ConsistencyLevel, PriorityLevel, Region, SessionToken, ThroughputBucket};

/// The options in force for one operation.
#[derive(Clone, Copy, Debug)]
pub struct EffectiveOptions<'a> {
    /// The caller's session token, if any (wins over the driver's session tracking).
    pub session_token: Option<&'a SessionToken>,
    /// The consistency level to request, if any layer sets one.
    pub consistency_level: Option<ConsistencyLevel>,
    /// Regions the operation must never be sent to.
    pub excluded_regions: &'a [Region],
    /// Bound on the whole operation (the operation's, the client's, or
    /// [`super::DEFAULT_END_TO_END_TIMEOUT`]).
    pub end_to_end_timeout: Option<Duration>,
    /// Whether write responses carry the document.
    pub content_response_on_write: bool,
    /// Preferred regions, most preferred first (empty: the account's order).
    pub preferred_regions: &'a [Region],
    /// The programmatic hedging layers (operation and client, kept apart for the resolution rules).
    pub hedging: HedgingLayers,
    /// The PATCH attempt limit.
    pub patch_max_attempts: NonZeroU8,
    /// The priority every request carries, if any layer sets one.
    pub priority_level: Option<PriorityLevel>,
    /// The throughput bucket every request counts against, if any layer sets one.
    pub throughput_bucket: Option<ThroughputBucket>,
}

impl<'a> EffectiveOptions<'a> {
    /// Resolves `operation` over `client`; `request_timeout` is the client's (it lowers the default
    /// hedging threshold).
    pub fn resolve(
        operation: &'a OperationOptions,
        client: &'a OperationOptions,
        request_timeout: Option<Duration>,
    ) -> Self {
        fn pick<'b, T>(a: &'b Option<T>, b: &'b Option<T>) -> Option<&'b T> {
            a.as_ref().or(b.as_ref())
        }
        Self {
            session_token: pick(&operation.session_token, &client.session_token),
            consistency_level: operation.consistency_level.or(client.consistency_level),
            excluded_regions: pick(&operation.excluded_regions, &client.excluded_regions)
                .map(Vec::as_slice)
                .unwrap_or(&[]),
            end_to_end_timeout: Some(
                operation
                    .end_to_end_timeout
                    .or(client.end_to_end_timeout)
                    .unwrap_or(super::DEFAULT_END_TO_END_TIMEOUT),
            ),
            content_response_on_write: operation
                .content_response_on_write
                .or(client.content_response_on_write)
                .unwrap_or(true),
            preferred_regions: pick(
                &operation.application_preferred_regions,
                &client.application_preferred_regions,
            )
            .map(Vec::as_slice)
            .unwrap_or(&[]),
            hedging: HedgingLayers {
                operation_hedging_enabled: operation.hedging_enabled,
                client_hedging_enabled: client.hedging_enabled,
                operation_strategy: operation.availability_strategy,
                client_strategy: client.availability_strategy,
                request_timeout,
                operation_consecutive_hedge_win_threshold: operation
                    .consecutive_hedge_win_threshold,
                client_consecutive_hedge_win_threshold: client.consecutive_hedge_win_threshold,
            },
            patch_max_attempts: operation
                .patch_max_attempts
                .or(client.patch_max_attempts)
                .unwrap_or(DEFAULT_PATCH_MAX_ATTEMPTS),
            priority_level: operation.priority_level.or(client.priority_level),
            throughput_bucket: operation.throughput_bucket.or(client.throughput_bucket),
        }
    }

    /// Whether `region` is excluded for this operation.
    pub fn is_excluded(&self, region: &Region) -> bool {
        self.excluded_regions.contains(region)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hedging::AvailabilityStrategy;

    #[test]
    fn operation_wins_over_client_over_default() {
        let two = std::num::NonZeroU32::new(2).unwrap();
        let op = OperationOptions::new()
            .with_excluded_regions(["West US"])
            .with_hedging_enabled(true)
            .with_consecutive_hedge_win_threshold(two);
        let client = OperationOptions::new()
            .with_excluded_regions(["East US"])
            .with_application_preferred_regions(["East US", "West US"])
            .with_end_to_end_timeout(Duration::from_secs(3))
            .with_availability_strategy(AvailabilityStrategy::Disabled)
            .with_hedging_enabled(false)
            .with_consecutive_hedge_win_threshold(std::num::NonZeroU32::new(3).unwrap());
        let e = EffectiveOptions::resolve(&op, &client, Some(Duration::from_secs(4)));
        assert_eq!(e.excluded_regions, &[Region::new("West US")]);
        assert_eq!(e.preferred_regions.len(), 2);
        assert_eq!(e.end_to_end_timeout, Some(Duration::from_secs(3)));
        assert_eq!(e.hedging.operation_hedging_enabled, Some(true));
        assert_eq!(e.hedging.client_hedging_enabled, Some(false));
        assert_eq!(
            e.hedging.client_strategy,
            Some(AvailabilityStrategy::Disabled)
        );
        assert_eq!(e.hedging.request_timeout, Some(Duration::from_secs(4)));
        assert_eq!(
            e.hedging.operation_consecutive_hedge_win_threshold,
            Some(two)
        );
        assert_eq!(
            e.hedging
                .client_consecutive_hedge_win_threshold
                .map(|n| n.get()),
            Some(3)
        );
        assert!(e.content_response_on_write);
        assert_eq!(e.patch_max_attempts.get(), 5);
        assert!(e.is_excluded(&Region::new("westus")));
        assert!(e.consistency_level.is_none());
    }
}
