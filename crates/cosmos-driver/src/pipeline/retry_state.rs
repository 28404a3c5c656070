//! The retry state a leg carries from attempt to attempt (shared by the leg, its attempts, the
//! location effects and the leg's result).

use http::HeaderValue;

use super::retry::RetryCounters;

/// The retry state a leg carries: counters, the sticky hub-region latch, the partition key range id.
#[derive(Clone, Debug, Default)]
pub(crate) struct RetryState {
    pub counters: RetryCounters,
    /// Set after the 404/1002 that escalates to the hub region; later attempts to the hub carry
    /// `x-ms-cosmos-hub-region-processing-only: True`.
    pub hub_region_processing_only: bool,
    /// The partition key range that served the operation, from the response headers.
    pub partition_key_range_id: Option<HeaderValue>,
}
