//! The `cosmos.hedge.*` tracing events (target `cosmos.hedge`).
//!
//! All are DEBUG except `both_transient` (WARN): with hedging on by default for every multi-region
//! read, anything louder per operation would flood production logs. Win rates come from
//! [`super::HedgeDiagnostics`], not from these events.

use std::time::Duration;

use super::strategy::HedgeThreshold;
use crate::protocol::{CosmosStatus, Region};

/// The tracing target of every hedging event.
pub(crate) const TARGET: &str = "cosmos.hedge";

/// Which attempt of a race.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Leg {
    /// The attempt sent at once, by normal routing.
    Primary,
    /// The attempt sent to the alternate region after the threshold.
    Alternate,
}

impl Leg {
    /// `primary` or `alternate`.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Leg::Primary => "primary",
            Leg::Alternate => "alternate",
        }
    }
}

/// Why an attempt was cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum CancelReason {
    /// The other attempt produced the final result.
    WinnerFound,
    /// The operation's deadline passed.
    Deadline,
    /// The caller dropped the operation.
    AppCanceled,
}

impl CancelReason {
    /// `winner_found`, `deadline` or `app_canceled`.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            CancelReason::WinnerFound => "winner_found",
            CancelReason::Deadline => "deadline",
            CancelReason::AppCanceled => "app_canceled",
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A hedged read starts.
pub(crate) fn enabled_for_operation(threshold: HedgeThreshold, region_count: usize) {
    tracing::debug!(
        name: "cosmos.hedge.enabled_for_operation",
        target: TARGET,
        threshold_ms = millis(threshold.get()),
        region_count,
    );
}

/// A read of a kind that hedges runs without hedging, for `reason` (one of
/// `HedgingOff::as_str`'s names, `account_kill_switch` when the account turned hedging off).
pub(crate) fn disabled_for_operation(reason: &'static str) {
    tracing::debug!(
        name: "cosmos.hedge.disabled_for_operation",
        target: TARGET,
        reason,
    );
}

/// The alternate attempt was sent.
pub(crate) fn alternate_spawned(target_region: &Region, elapsed: Duration) {
    tracing::debug!(
        name: "cosmos.hedge.alternate_spawned",
        target: TARGET,
        target_region = %target_region,
        elapsed_ms = millis(elapsed),
    );
}

/// An attempt still in flight was dropped.
pub(crate) fn canceled(which: Leg, target_region: &Region, reason: CancelReason) {
    tracing::debug!(
        name: "cosmos.hedge.canceled",
        target: TARGET,
        which = which.as_str(),
        target_region = %target_region,
        reason = reason.as_str(),
    );
}

/// A final result was selected.
pub(crate) fn winner_selected(winner_region: &Region, elapsed: Duration, was_hedge: bool) {
    tracing::debug!(
        name: "cosmos.hedge.winner_selected",
        target: TARGET,
        winner_region = %winner_region,
        elapsed_ms = millis(elapsed),
        was_hedge,
    );
}

/// The threshold fired but the hedge budget had no token: the primary runs alone.
pub(crate) fn budget_denied(primary_region: &Region, elapsed: Duration) {
    tracing::debug!(
        name: "cosmos.hedge.budget_denied",
        target: TARGET,
        primary_region = %primary_region,
        elapsed_ms = millis(elapsed),
    );
}

/// Both attempts ended transient.
pub(crate) fn both_transient(last_status: Option<CosmosStatus>) {
    tracing::warn!(
        name: "cosmos.hedge.both_transient",
        target: TARGET,
        last_status_code = last_status.map_or(0, |s| s.status),
        last_sub_status_code = last_status.map_or(0, |s| s.sub_status),
    );
}

/// An alternate win was recorded against the primary partition.
pub(crate) fn recorded_alternate_win(primary_region: &Region, partition: &str) {
    tracing::debug!(
        name: "cosmos.hedge.recorded_alternate_win",
        target: TARGET,
        primary_region = %primary_region,
        partition,
    );
}
