//! What the benchmark engine drives: one operation at a time, and the facts each one reports.

use std::future::Future;

/// How one operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpOutcome {
    /// The operation succeeded.
    Ok,
    /// The operation failed; `status` is the HTTP status when the service answered one.
    Failed {
        /// HTTP status of the final answer, if there was one (none for transport errors).
        status: Option<u16>,
        /// The answer's sub-status (`x-ms-substatus`; 0 when absent or without an answer).
        sub_status: u32,
    },
}

impl OpOutcome {
    /// True when the operation succeeded.
    pub fn is_ok(self) -> bool {
        matches!(self, OpOutcome::Ok)
    }
}

/// What one hedge race did, as the benchmark counts it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HedgeFacts {
    /// The alternate attempt was sent (the operation was hedged).
    pub alternate_sent: bool,
    /// The alternate's response was the one returned.
    pub alternate_won: bool,
    /// The primary attempt did not produce a final result within the threshold.
    pub primary_over_threshold: bool,
}

/// Everything the engine records about one operation, besides its latency.
#[derive(Clone, Debug, PartialEq)]
pub struct OpReport {
    /// Success or failure.
    pub outcome: OpOutcome,
    /// Hedge race facts (all false when hedging was off or the operation was not eligible).
    pub hedge: HedgeFacts,
    /// Requests sent beyond one per operation (hedges, retries, PATCH re-reads).
    pub extra_requests: u32,
    /// Request charge the caller saw (the winner's charge).
    pub ru_caller_visible: f64,
    /// Request charge of every request sent, losers included.
    pub ru_total: f64,
    /// For PATCH workloads: how many Read-Modify-Write attempts the operation took.
    pub patch_attempts: Option<u32>,
}

impl OpReport {
    /// A successful operation with no extra facts.
    pub fn ok() -> Self {
        Self {
            outcome: OpOutcome::Ok,
            hedge: HedgeFacts::default(),
            extra_requests: 0,
            ru_caller_visible: 0.0,
            ru_total: 0.0,
            patch_attempts: None,
        }
    }

    /// A failed operation with no extra facts.
    pub fn failed(status: Option<u16>, sub_status: u32) -> Self {
        Self {
            outcome: OpOutcome::Failed { status, sub_status },
            ..Self::ok()
        }
    }
}

/// A benchmark workload: "do one operation". `seq` numbers operations from 0 in start order.
///
/// Implementations are shared by every in-flight operation, so they hold their state behind `&self`.
pub trait Workload: Send + Sync + 'static {
    /// Carries out one operation and reports what happened.
    fn run_op(&self, seq: u64) -> impl Future<Output = OpReport> + Send;
}
