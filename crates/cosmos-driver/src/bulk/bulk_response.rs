//! What a bulk run answers: every operation's result in the caller's order, and what the run
//! took (request units, batches, throttles, re-routings, time).

use std::time::Duration;

use crate::batch::BatchOperationResult;
use crate::error::CosmosError;

/// One operation's outcome: the service's answer to it (any status: check
/// [`BatchOperationResult::is_success`]), or the error that kept its batch from being answered.
pub type BulkItemResult = Result<BatchOperationResult, CosmosError>;

/// What a bulk run did, in numbers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BulkStats {
    /// Request units of every batch answered.
    pub request_charge: f64,
    /// Batch requests that were answered (each may have taken several attempts).
    pub batches: usize,
    /// Throttled (429) answers seen: attempts the pipeline retried, batches and operations.
    pub throttled: usize,
    /// Times the container's partition key ranges were read again because a range split.
    pub range_refreshes: usize,
    /// Operations sent again to another route after a split.
    pub rerouted: usize,
    /// Wall-clock time of the run.
    pub duration: Duration,
}

/// Every operation's result, in the order the operations were given.
#[derive(Debug)]
pub struct BulkResponse {
    pub(crate) results: Vec<BulkItemResult>,
    pub(crate) stats: BulkStats,
}

impl BulkResponse {
    /// One result per operation, in the caller's order; each result's `index` is its position.
    pub fn results(&self) -> &[BulkItemResult] {
        &self.results
    }

    /// The results, owned.
    pub fn into_results(self) -> Vec<BulkItemResult> {
        self.results
    }

    /// How many operations succeeded.
    pub fn succeeded(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.as_ref().is_ok_and(BatchOperationResult::is_success))
            .count()
    }

    /// Request units, batches, throttles, re-routings and time of the run.
    pub fn stats(&self) -> &BulkStats {
        &self.stats
    }

    /// Request units of the whole run.
    pub fn request_charge(&self) -> f64 {
        self.stats.request_charge
    }
}
