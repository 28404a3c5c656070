//! What one driver operation did, read from its diagnostics: hedge race facts, extra requests,
//! request charges and PATCH attempts.

use std::num::NonZeroU8;
use std::time::Duration;

use cosmos_driver::hedging::HedgeTerminalState;
use cosmos_driver::{AttemptReason, CosmosError, CosmosResponse, DiagnosticsContext};

use crate::bench::workload::{HedgeFacts, OpReport};

/// Hedge facts of one operation. With a race: from its terminal state. Without one (hedging off, or
/// not eligible): the primary counts as over the threshold when its first attempt took longer than
/// `slow_after`, which tells how often hedging at that threshold would have fired.
pub fn hedge_facts(d: &DiagnosticsContext, slow_after: Duration) -> HedgeFacts {
    match d.hedge() {
        Some(h) => HedgeFacts {
            alternate_sent: h.alternate_region().is_some(),
            alternate_won: h.was_hedge(),
            primary_over_threshold: !matches!(
                h.terminal_state(),
                HedgeTerminalState::PrimaryWonPreThreshold
                    | HedgeTerminalState::PrimaryTransientPreThreshold
                    | HedgeTerminalState::DeadlineExceededPreThreshold
            ),
        },
        None => HedgeFacts {
            alternate_sent: false,
            alternate_won: false,
            primary_over_threshold: d
                .requests()
                .iter()
                .find(|r| r.reason() == AttemptReason::FirstAttempt)
                .is_some_and(|r| r.duration() > slow_after),
        },
    }
}

/// Requests sent beyond one per operation: hedges, retries, failovers, session retries.
pub fn extra_requests(d: &DiagnosticsContext) -> u32 {
    u32::try_from(d.requests().len().saturating_sub(1)).unwrap_or(u32::MAX)
}

/// Read-Modify-Write attempts of a PATCH: each attempt is a Read and a Replace, and each of those
/// sub-operations opens with one first-attempt row (retries and hedges add rows of other kinds).
pub fn patch_attempts(d: &DiagnosticsContext) -> u32 {
    let firsts = d
        .requests()
        .iter()
        .filter(|r| r.reason() == AttemptReason::FirstAttempt)
        .count();
    u32::try_from(firsts.div_ceil(2)).unwrap_or(u32::MAX).max(1)
}

/// Whether an operation is a PATCH, and then its attempt limit.
pub type PatchLimit = Option<NonZeroU8>;

/// The report of a successful operation. PATCH operations carry their attempts.
pub fn report_ok(response: &CosmosResponse, slow_after: Duration, patch: PatchLimit) -> OpReport {
    let d = response.diagnostics();
    OpReport {
        hedge: hedge_facts(d, slow_after),
        extra_requests: extra_requests(d),
        ru_caller_visible: response.request_charge(),
        ru_total: d.total_request_charge(),
        patch_attempts: patch.map(|_| patch_attempts(d)),
        ..OpReport::ok()
    }
}

/// The report of a failed operation. A PATCH that failed with 412 used up its attempt limit (its
/// error carries only the last attempt's diagnostics); other failures count the attempts seen.
pub fn report_err(error: &CosmosError, slow_after: Duration, patch: PatchLimit) -> OpReport {
    let d = error.diagnostics();
    let attempts = patch.map(|limit| {
        if error.is_precondition_failed() {
            u32::from(limit.get())
        } else {
            patch_attempts(d)
        }
    });
    OpReport {
        hedge: hedge_facts(d, slow_after),
        extra_requests: extra_requests(d),
        ru_caller_visible: 0.0,
        ru_total: d.total_request_charge(),
        patch_attempts: attempts,
        ..OpReport::failed(
            error.status(),
            error.cosmos_status().map_or(0, |s| s.sub_status),
        )
    }
}
