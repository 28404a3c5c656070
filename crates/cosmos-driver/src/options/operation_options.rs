//! Per-operation options. The same type is the client-level default layer inside `DriverOptions`.

use std::num::{NonZeroU32, NonZeroU8};
use std::time::Duration;

use super::PatchStrategy;
use crate::hedging::AvailabilityStrategy;
use crate::protocol::{ConsistencyLevel, PriorityLevel, Region, SessionToken, ThroughputBucket};

/// The default number of read-modify-write rounds of a PATCH.
pub const DEFAULT_PATCH_MAX_ATTEMPTS: NonZeroU8 = match NonZeroU8::new(5) {
    Some(n) => n,
    None => unreachable!(),
};

/// Options of one operation. Every field is optional; an unset field falls back to the client's
/// value (`DriverOptions::with_operation_defaults`), then to the environment, then to the default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OperationOptions {
    /// The session token to send; wins over the driver's own session tracking for this operation.
    pub session_token: Option<SessionToken>,
    /// A consistency level for this operation (may only weaken the account's level).
    pub consistency_level: Option<ConsistencyLevel>,
    /// Regions this operation must never be sent to, whatever the retry trigger.
    pub excluded_regions: Option<Vec<Region>>,
    /// Bound on the whole operation, retries included.
    pub end_to_end_timeout: Option<Duration>,
    /// Whether write responses carry the document (default true). `false` sends `Prefer: return=minimal`.
    pub content_response_on_write: Option<bool>,
    /// Preferred regions, most preferred first.
    pub application_preferred_regions: Option<Vec<Region>>,
    /// Cross-region hedging strategy (or `Disabled`).
    pub availability_strategy: Option<AvailabilityStrategy>,
    /// Master switch for hedging (see the hedging resolution rules).
    pub hedging_enabled: Option<bool>,
    /// Consecutive alternate-region wins before the partition is marked unhealthy in its primary
    /// region (operation > client > `AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD` > 5). Applied
    /// when this operation's race records an alternate win.
    pub consecutive_hedge_win_threshold: Option<NonZeroU32>,
    /// How many read-modify-write rounds a PATCH may take before giving up with 412.
    pub patch_max_attempts: Option<NonZeroU8>,
    /// How a PATCH is carried out (default [`PatchStrategy::Auto`]).
    pub patch_strategy: Option<PatchStrategy>,
    /// The priority of every request of the operation (`x-ms-cosmos-priority-level`); without
    /// one the service treats requests as high priority.
    pub priority_level: Option<PriorityLevel>,
    /// The throughput bucket every request of the operation counts against
    /// (`x-ms-cosmos-throughput-bucket`); without one, requests are not limited by buckets.
    pub throughput_bucket: Option<ThroughputBucket>,
}

impl OperationOptions {
    /// Empty options (everything inherited).
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the session token.
    pub fn with_session_token(mut self, token: SessionToken) -> Self {
        self.session_token = Some(token);
        self
    }
    /// Sets the consistency level.
    pub fn with_consistency_level(mut self, level: ConsistencyLevel) -> Self {
        self.consistency_level = Some(level);
        self
    }
    /// Sets the excluded regions.
    pub fn with_excluded_regions<I, R>(mut self, regions: I) -> Self
    where
        I: IntoIterator<Item = R>,
        R: Into<Region>,
    {
        self.excluded_regions = Some(regions.into_iter().map(Into::into).collect());
        self
    }
    /// Sets the end-to-end timeout (bound on the whole operation, every retry included; without
    /// one at either level, [`super::DEFAULT_END_TO_END_TIMEOUT`]).
    pub fn with_end_to_end_timeout(mut self, timeout: Duration) -> Self {
        self.end_to_end_timeout = Some(timeout);
        self
    }
    /// Sets whether write responses carry the document.
    pub fn with_content_response_on_write(mut self, on: bool) -> Self {
        self.content_response_on_write = Some(on);
        self
    }
    /// Sets the preferred regions.
    pub fn with_application_preferred_regions<I, R>(mut self, regions: I) -> Self
    where
        I: IntoIterator<Item = R>,
        R: Into<Region>,
    {
        self.application_preferred_regions = Some(regions.into_iter().map(Into::into).collect());
        self
    }
    /// Sets the availability strategy.
    pub fn with_availability_strategy(mut self, strategy: AvailabilityStrategy) -> Self {
        self.availability_strategy = Some(strategy);
        self
    }
    /// Sets the hedging master switch.
    pub fn with_hedging_enabled(mut self, enabled: bool) -> Self {
        self.hedging_enabled = Some(enabled);
        self
    }
    /// Sets the consecutive alternate-win threshold for this operation's races.
    pub fn with_consecutive_hedge_win_threshold(mut self, threshold: NonZeroU32) -> Self {
        self.consecutive_hedge_win_threshold = Some(threshold);
        self
    }
    /// Sets the priority of every request of the operation.
    pub fn with_priority_level(mut self, level: PriorityLevel) -> Self {
        self.priority_level = Some(level);
        self
    }
    /// Sets the throughput bucket every request of the operation counts against.
    pub fn with_throughput_bucket(mut self, bucket: ThroughputBucket) -> Self {
        self.throughput_bucket = Some(bucket);
        self
    }
    /// Sets how a PATCH is carried out.
    pub fn with_patch_strategy(mut self, strategy: PatchStrategy) -> Self {
        self.patch_strategy = Some(strategy);
        self
    }
    /// The options of a metadata read made on behalf of this operation (the partition key range
    /// listing behind a query, a change feed, read many or bulk): the same routing (excluded and
    /// preferred regions), availability strategy, deadline and consistency; nothing that belongs
    /// to the operation's own request (session token, write and PATCH settings).
    pub fn for_metadata(&self) -> Self {
        Self {
            consistency_level: self.consistency_level,
            excluded_regions: self.excluded_regions.clone(),
            end_to_end_timeout: self.end_to_end_timeout,
            application_preferred_regions: self.application_preferred_regions.clone(),
            availability_strategy: self.availability_strategy,
            hedging_enabled: self.hedging_enabled,
            consecutive_hedge_win_threshold: self.consecutive_hedge_win_threshold,
            priority_level: self.priority_level,
            throughput_bucket: self.throughput_bucket,
            ..Self::default()
        }
    }
    /// Sets the PATCH attempt limit.
    pub fn with_patch_max_attempts(mut self, attempts: NonZeroU8) -> Self {
        self.patch_max_attempts = Some(attempts);
        self
    }

    /// These options put over `base` (a handle's options): every field set here wins, every
    /// unset one is `base`'s. The one merge of per-call options over a handle's: item operations,
    /// queries, the change feed and read many all go through it.
    pub fn over(&self, base: &Self) -> Self {
        fn pick<T: Clone>(a: &Option<T>, b: &Option<T>) -> Option<T> {
            a.as_ref().or(b.as_ref()).cloned()
        }
        Self {
            session_token: pick(&self.session_token, &base.session_token),
            consistency_level: pick(&self.consistency_level, &base.consistency_level),
            excluded_regions: pick(&self.excluded_regions, &base.excluded_regions),
            end_to_end_timeout: pick(&self.end_to_end_timeout, &base.end_to_end_timeout),
            content_response_on_write: pick(
                &self.content_response_on_write,
                &base.content_response_on_write,
            ),
            application_preferred_regions: pick(
                &self.application_preferred_regions,
                &base.application_preferred_regions,
            ),
            availability_strategy: pick(&self.availability_strategy, &base.availability_strategy),
            hedging_enabled: pick(&self.hedging_enabled, &base.hedging_enabled),
            consecutive_hedge_win_threshold: pick(
                &self.consecutive_hedge_win_threshold,
                &base.consecutive_hedge_win_threshold,
            ),
            patch_max_attempts: pick(&self.patch_max_attempts, &base.patch_max_attempts),
            patch_strategy: pick(&self.patch_strategy, &base.patch_strategy),
            priority_level: pick(&self.priority_level, &base.priority_level),
            throughput_bucket: pick(&self.throughput_bucket, &base.throughput_bucket),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_fields_win_over_the_base_and_unset_ones_inherit_it() {
        let base = OperationOptions::new()
            .with_consistency_level(ConsistencyLevel::Eventual)
            .with_excluded_regions(["East US"])
            .with_end_to_end_timeout(Duration::from_secs(5))
            .with_hedging_enabled(false);
        let call = OperationOptions::new()
            .with_excluded_regions(["West US"])
            .with_session_token(SessionToken::parse("0:1#5").unwrap())
            .with_content_response_on_write(false);
        let merged = call.over(&base);
        assert_eq!(merged.excluded_regions, Some(vec![Region::from("West US")]));
        assert_eq!(merged.session_token, call.session_token);
        assert_eq!(merged.content_response_on_write, Some(false));
        assert_eq!(merged.consistency_level, Some(ConsistencyLevel::Eventual));
        assert_eq!(merged.end_to_end_timeout, Some(Duration::from_secs(5)));
        assert_eq!(merged.hedging_enabled, Some(false));
        assert_eq!(merged.patch_strategy, None);
        // Nothing set: the base; nothing under: the call.
        assert_eq!(OperationOptions::new().over(&base), base);
        assert_eq!(call.over(&OperationOptions::new()), call);
    }
}
