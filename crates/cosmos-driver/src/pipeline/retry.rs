//! The retry decision: one pure function from (operation facts, attempt outcome, retry counters) to
//! (action, location effects). The operation loop applies both; nothing here does I/O.
//!
//! | outcome | reads | writes |
//! |---|---|---|
//! | < 400 | complete | complete |
//! | 429 | wait `x-ms-retry-after-ms` and retry in place (bounded count and total wait) | same (a throttled write was not executed) |
//! | 429/3092 | next region (as a 503) | next write region on multi-write, else as any 429 |
//! | 408, 500, 503, 410 (other sub-statuses) | next region; the partition's failure counts in its circuit breaker (the endpoint is not marked: one partition's fault) | only writes that cannot land twice retry (idempotent ones and Create, see `write_outcome`; next write region on multi-write, in place otherwise) |
//! | lost connection, attempt timeout | next region, mark the endpoint, count the partition's failure | only writes that cannot land twice retry, as above |
//! | connection refused (never sent) | next region, mark the endpoint | retry (safe: nothing reached the server) |
//! | 410/1002, 410/1007, 410/1008 (split, merge, migration) | forget the container's learnt ranges, retry in place; a request pinned to the range (its id in the request) stops at once for the caller's split handling | same (not executed) |
//! | 410/1000 (name cache stale) | forget the container's metadata, retry in place | same (not executed) |
//! | 404/1002 | in place once, then the hub region with the hub-region header (single-write) or the next region (multi-write) | same |
//! | 403/3 | mark the endpoint for writes, refresh account metadata, reroute; again about once a second until the write region moves (budget or deadline) | same; multi-write: the next write region |
//! | 403/1008 | refresh, mark the endpoint, next region | same |
//! | 403/3 of a read (it carried the hub-region header outside the hub) | refresh and follow the hub; a leg that cannot reach the hub (pinned elsewhere) stops with no effect | - |
//! | anything else | abort with the service's error | same |
//!
//! Excluded regions never appear as a "next region": the caller computes [`RoutingView`] after
//! exclusions, and a leg pinned to one region (`local_only`) never has a next region at all.

use std::time::Duration;

use super::attempt_outcome::AttemptOutcome;
use super::write_outcome::may_resend_after_unknown_outcome;
use crate::options::RetryOptions;
use crate::protocol::{OperationType, ResourceType, StatusClass};
use crate::routing::AccessScope;

/// What the retry decision needs to know about the operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OperationFacts {
    pub operation_type: OperationType,
    pub resource_type: ResourceType,
    /// The account takes writes in several regions.
    pub multi_write: bool,
    /// The leg is pinned to one region: retries stay there.
    pub local_only: bool,
    /// The request names a partition key range (`x-ms-documentdb-partitionkeyrangeid`): when that
    /// range is gone every region and every retry answers the same, so the answer goes straight
    /// back to the caller's split handling.
    pub range_pinned: bool,
}

impl OperationFacts {
    fn is_read(&self) -> bool {
        self.operation_type.is_read_only()
    }

    /// Which health scope the operation's failures mark.
    pub(crate) fn scope(&self) -> AccessScope {
        if self.is_read() {
            AccessScope::Read
        } else {
            AccessScope::Write
        }
    }
}

/// What routing can still offer, computed after excluded regions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RoutingView {
    /// Another candidate region follows the current one.
    pub has_next_region: bool,
    /// The hub (write) region may be used by this leg.
    pub hub_reachable: bool,
}

/// Counters of one leg's retries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RetryCounters {
    pub attempts: u16,
    pub throttle_retries: u8,
    pub throttle_wait: Duration,
    pub failovers: u8,
    pub local_retries: u8,
    pub session_retries: u8,
    pub hub_escalations: u8,
    pub refreshes: u8,
    pub partition_moved_retries: u8,
    pub write_forbidden_retries: u16,
}

/// Where a session retry goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)]
pub(crate) enum SessionRetryTarget {
    /// The same region again.
    SameRegion,
    /// The hub (write) region, with `x-ms-cosmos-hub-region-processing-only: True`.
    HubRegion,
    /// The next candidate region (multi-write accounts).
    NextRegion,
}

/// Why a leg stops with its last outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AbortReason {
    /// The outcome is not one the driver retries.
    NotRetryable,
    /// Retrying could apply a non-idempotent write twice.
    UnsafeToRetry,
    /// The retry budget (or the candidate regions) ran out.
    RetriesExhausted,
}

/// What to do after an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RetryAction {
    /// The outcome is the answer.
    Complete,
    /// Retry in the same region after `delay`.
    RetryLocal { delay: Duration },
    /// Retry in the next candidate region.
    Failover,
    /// Retry after 404/1002.
    SessionRetry { target: SessionRetryTarget },
    /// After `delay`, refresh the account metadata (an effect), then start over in the order it
    /// gives.
    RefreshAndReroute { delay: Duration },
    /// Stop; the outcome is returned as the leg's result.
    Abort(AbortReason),
}

impl RetryAction {
    /// Whether another attempt follows.
    pub(crate) fn retries(self) -> bool {
        !matches!(self, RetryAction::Complete | RetryAction::Abort(_))
    }
}

/// Changes to shared routing state an outcome calls for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocationEffects {
    /// Mark the attempt's endpoint unavailable for this scope.
    pub mark_endpoint_unavailable: Option<AccessScope>,
    /// Re-read the account metadata.
    pub refresh_account: bool,
    /// Count a failure of the partition in the attempt's region (circuit breaker).
    pub partition_failure: bool,
    /// Count a success of the partition in the attempt's region.
    pub partition_success: bool,
    /// Forget the partition key ranges learnt for the container (it split, merged or moved).
    pub refresh_partition_ranges: bool,
    /// Forget the container's cached metadata (the service's name cache was stale).
    pub refresh_container: bool,
}

/// The retry budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RetryLimits {
    pub max_throttle_retries: u8,
    pub max_throttle_wait: Duration,
    pub max_failovers: u8,
    pub max_local_retries: u8,
    pub max_refreshes: u8,
    pub max_partition_moved_retries: u8,
    pub max_write_forbidden_retries: u16,
    pub write_forbidden_delay: Duration,
    pub max_attempts: u16,
    pub local_retry_delay: Duration,
}

impl RetryLimits {
    /// The limits `options` set.
    pub(crate) fn from_options(options: &RetryOptions) -> Self {
        Self {
            max_throttle_retries: options.max_throttle_retries,
            max_throttle_wait: options.max_throttle_wait,
            max_failovers: options.max_failovers,
            max_local_retries: options.max_local_retries,
            max_refreshes: 2,
            max_partition_moved_retries: options.max_partition_moved_retries,
            max_write_forbidden_retries: options.max_write_forbidden_retries,
            write_forbidden_delay: options.write_forbidden_delay,
            max_attempts: options.max_attempts,
            local_retry_delay: Duration::from_millis(20),
        }
    }
}

impl Default for RetryLimits {
    fn default() -> Self {
        Self::from_options(&RetryOptions::default())
    }
}

/// The decision after one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RetryDecision {
    pub action: RetryAction,
    pub effects: LocationEffects,
    /// The counters after this attempt.
    pub counters: RetryCounters,
    /// Turn the hub-region latch on (first hub escalation of a data-plane operation on a
    /// single-write account).
    pub latch_hub_region: bool,
}

/// The location effects of an attempt's outcome, without deciding anything else. Non-consuming and
/// pure: a hedge race can ask it about either leg's result.
pub(crate) fn location_effects(
    facts: &OperationFacts,
    outcome: &AttemptOutcome,
) -> LocationEffects {
    let mut e = LocationEffects::default();
    match *outcome {
        AttemptOutcome::Response { status: s, .. } => match StatusClass::of(s) {
            StatusClass::Success => e.partition_success = true,
            // One partition's fault: its circuit breaker counts it; the endpoint serves the
            // account's other partitions and stays available.
            StatusClass::Transient => e.partition_failure = true,
            StatusClass::PartitionMoved => e.refresh_partition_ranges = true,
            StatusClass::NameCacheStale => e.refresh_container = true,
            StatusClass::WriteForbidden => {
                e.refresh_account = true;
                e.mark_endpoint_unavailable = Some(AccessScope::Write);
            }
            StatusClass::AccountNotInRegion => {
                e.refresh_account = true;
                e.mark_endpoint_unavailable = Some(facts.scope());
            }
            StatusClass::ThrottledRegionally
            | StatusClass::ThrottledEverywhere
            | StatusClass::Throttled
            | StatusClass::SessionNotAvailable
            | StatusClass::Definitive
            | StatusClass::Unrecognized => {}
        },
        AttemptOutcome::ConnectFailed
        | AttemptOutcome::ConnectionLost
        | AttemptOutcome::TimedOut => {
            e.mark_endpoint_unavailable = Some(facts.scope());
            e.partition_failure = true;
        }
        AttemptOutcome::TooLarge => {}
    }
    e
}

fn throttle_backoff(retries: u8) -> Duration {
    Duration::from_millis(50u64 << retries.min(7)).min(Duration::from_secs(5))
}

fn transient(
    facts: &OperationFacts,
    routing: RoutingView,
    c: &mut RetryCounters,
    reached_server: bool,
    limits: &RetryLimits,
) -> RetryAction {
    if reached_server && !may_resend_after_unknown_outcome(facts.operation_type) {
        return RetryAction::Abort(AbortReason::UnsafeToRetry);
    }
    let may_change_region = !facts.local_only && (facts.is_read() || facts.multi_write);
    if may_change_region && routing.has_next_region && c.failovers < limits.max_failovers {
        c.failovers += 1;
        return RetryAction::Failover;
    }
    if c.local_retries < limits.max_local_retries {
        c.local_retries += 1;
        return RetryAction::RetryLocal {
            delay: limits.local_retry_delay * u32::from(c.local_retries),
        };
    }
    RetryAction::Abort(AbortReason::RetriesExhausted)
}

/// After 403/3: the write region is moving. A multi-write account's write goes to the next write
/// region at once; otherwise the account is re-read and the write retried, at once the first time
/// and `write_forbidden_delay` apart after that, until the region moves or the budget ends. A read
/// refused with 403/3 (it carried the hub-region header to a region that is no longer the hub)
/// re-reads the account and follows the hub, at most `max_refreshes` times.
fn write_forbidden(
    facts: &OperationFacts,
    routing: RoutingView,
    c: &mut RetryCounters,
    limits: &RetryLimits,
) -> RetryAction {
    if facts.is_read() {
        if c.refreshes < limits.max_refreshes {
            c.refreshes += 1;
            return RetryAction::RefreshAndReroute {
                delay: Duration::ZERO,
            };
        }
        return RetryAction::Abort(AbortReason::RetriesExhausted);
    }
    if c.write_forbidden_retries >= limits.max_write_forbidden_retries {
        return RetryAction::Abort(AbortReason::RetriesExhausted);
    }
    c.write_forbidden_retries += 1;
    if facts.multi_write
        && !facts.local_only
        && routing.has_next_region
        && c.failovers < limits.max_failovers
    {
        c.failovers += 1;
        return RetryAction::Failover;
    }
    let delay = if c.write_forbidden_retries == 1 {
        Duration::ZERO
    } else {
        limits.write_forbidden_delay
    };
    RetryAction::RefreshAndReroute { delay }
}

/// Decides what follows an attempt. `hub_latched` is whether the leg's hub-region latch is already
/// on (its own or a shared one).
pub(crate) fn decide(
    facts: &OperationFacts,
    routing: RoutingView,
    outcome: &AttemptOutcome,
    counters: RetryCounters,
    hub_latched: bool,
    limits: &RetryLimits,
) -> RetryDecision {
    let mut c = counters;
    c.attempts = c.attempts.saturating_add(1);
    let mut effects = location_effects(facts, outcome);
    let mut latch_hub_region = false;
    let mut refused_outside_hub = false;
    let action = match *outcome {
        AttemptOutcome::ConnectFailed => transient(facts, routing, &mut c, false, limits),
        AttemptOutcome::ConnectionLost | AttemptOutcome::TimedOut => {
            transient(facts, routing, &mut c, true, limits)
        }
        AttemptOutcome::TooLarge => RetryAction::Abort(AbortReason::NotRetryable),
        AttemptOutcome::Response {
            status: s,
            retry_after,
        } => match StatusClass::of(s) {
            StatusClass::Success => RetryAction::Complete,
            class @ (StatusClass::ThrottledRegionally
            | StatusClass::ThrottledEverywhere
            | StatusClass::Throttled) => {
                // 429/3092 is capacity pressure in this region: as a 503, another region takes
                // the read (or, on a multi-write account, the write: it was not executed).
                if class == StatusClass::ThrottledRegionally
                    && (facts.is_read() || facts.multi_write)
                    && !facts.local_only
                    && routing.has_next_region
                    && c.failovers < limits.max_failovers
                {
                    c.failovers += 1;
                    RetryAction::Failover
                } else {
                    let delay = retry_after.unwrap_or_else(|| throttle_backoff(c.throttle_retries));
                    if c.throttle_retries < limits.max_throttle_retries
                        && c.throttle_wait + delay <= limits.max_throttle_wait
                    {
                        c.throttle_retries += 1;
                        c.throttle_wait += delay;
                        RetryAction::RetryLocal { delay }
                    } else {
                        RetryAction::Abort(AbortReason::RetriesExhausted)
                    }
                }
            }
            StatusClass::SessionNotAvailable => {
                if c.session_retries == 0 {
                    c.session_retries = 1;
                    RetryAction::SessionRetry {
                        target: SessionRetryTarget::SameRegion,
                    }
                } else if !facts.multi_write {
                    if c.hub_escalations == 0 && routing.hub_reachable {
                        latch_hub_region = crate::hedging::hub_latch_triggers(
                            facts.resource_type.is_data_plane(),
                            facts.multi_write,
                            u32::from(c.hub_escalations),
                            hub_latched,
                        );
                        c.hub_escalations = 1;
                        c.session_retries += 1;
                        RetryAction::SessionRetry {
                            target: SessionRetryTarget::HubRegion,
                        }
                    } else {
                        RetryAction::Abort(AbortReason::RetriesExhausted)
                    }
                } else if !facts.local_only
                    && routing.has_next_region
                    && c.failovers < limits.max_failovers
                {
                    c.failovers += 1;
                    c.session_retries += 1;
                    RetryAction::SessionRetry {
                        target: SessionRetryTarget::NextRegion,
                    }
                } else {
                    RetryAction::Abort(AbortReason::RetriesExhausted)
                }
            }
            StatusClass::WriteForbidden if facts.is_read() && !routing.hub_reachable => {
                // A read refused with 403/3 carried the hub-region header to a region that is not
                // the hub, and this leg cannot go to the hub (a race's alternate pinned elsewhere):
                // nothing to refresh or retry; the race waits for the other leg.
                refused_outside_hub = true;
                RetryAction::Abort(AbortReason::RetriesExhausted)
            }
            StatusClass::WriteForbidden => write_forbidden(facts, routing, &mut c, limits),
            StatusClass::PartitionMoved if facts.range_pinned => {
                // The range the request names is gone: the same in every region, whatever the
                // wait. Only the caller's split handling (read the ranges, go to the children)
                // makes progress.
                RetryAction::Abort(AbortReason::NotRetryable)
            }
            StatusClass::PartitionMoved | StatusClass::NameCacheStale => {
                if c.partition_moved_retries < limits.max_partition_moved_retries {
                    c.partition_moved_retries += 1;
                    RetryAction::RetryLocal {
                        delay: limits.local_retry_delay * u32::from(c.partition_moved_retries - 1),
                    }
                } else {
                    RetryAction::Abort(AbortReason::RetriesExhausted)
                }
            }
            StatusClass::AccountNotInRegion => {
                if !facts.local_only
                    && routing.has_next_region
                    && c.refreshes < limits.max_refreshes
                {
                    c.refreshes += 1;
                    c.failovers += 1;
                    RetryAction::Failover
                } else {
                    RetryAction::Abort(AbortReason::RetriesExhausted)
                }
            }
            StatusClass::Transient => transient(facts, routing, &mut c, true, limits),
            StatusClass::Definitive | StatusClass::Unrecognized => {
                RetryAction::Abort(AbortReason::NotRetryable)
            }
        },
    };
    if refused_outside_hub {
        effects = LocationEffects::default();
    }
    // Waiting out a write-region failover is bounded by its own budget and the deadline.
    let counted = c.attempts.saturating_sub(c.write_forbidden_retries);
    let action = if action.retries() && counted >= limits.max_attempts {
        RetryAction::Abort(AbortReason::RetriesExhausted)
    } else {
        action
    };
    RetryDecision {
        action,
        effects,
        counters: c,
        latch_hub_region,
    }
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
