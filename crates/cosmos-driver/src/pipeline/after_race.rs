//! What follows a hedge race whose two legs both ended transient: a pure decision over what the
//! legs did, table-tested.
//!
//! A hedged read spends one retry budget, never one per round. The race already did what the
//! read without hedging would have done in its first two regions: the primary leg in its region
//! (it ends when it would move on), the alternate in the region the move would have gone to. So:
//!
//! | the primary leg ended | a region neither leg used | budget left | next |
//! |---|---|---|---|
//! | by its own retry decision (budget spent, not retryable) | any | any | end with the last result |
//! | to move to another region | none | any | end with the last result |
//! | to move to another region | yes | yes | one plain leg over the regions the race did not use, with the legs' counters |
//! | to move to another region | yes | no | end with the last result |
//!
//! No second race is ever planned: a race's alternate is the one extra leg hedging may add, so a
//! hedged read sends at most the requests of the same read without hedging plus one leg of its
//! own budget.

use super::retry::{RetryCounters, RetryLimits};

/// What the two legs of a finished race did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RaceLegs {
    /// The primary leg ended because its retry decision called for another region.
    pub primary_moved_on: bool,
    /// The primary leg's counters.
    pub primary: RetryCounters,
    /// The alternate leg's counters (default when it never ran).
    pub alternate: RetryCounters,
    /// A candidate region remains that neither leg used.
    pub untried_region: bool,
}

/// What the operation does after a race with no final result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AfterRace {
    /// Return the last leg's result.
    End,
    /// One plain leg over the regions the race did not use, starting from these counters.
    Continue(RetryCounters),
}

/// The counters a continuation starts from: one budget for the whole read. Attempts add up (the
/// attempt ceiling bounds both legs together); every other count is the larger of the two, since
/// each leg spent its own share of the same kind of retry.
pub(crate) fn merged_counters(primary: RetryCounters, alternate: RetryCounters) -> RetryCounters {
    RetryCounters {
        attempts: primary.attempts.saturating_add(alternate.attempts),
        throttle_retries: primary.throttle_retries.max(alternate.throttle_retries),
        throttle_wait: primary.throttle_wait.max(alternate.throttle_wait),
        failovers: primary.failovers.max(alternate.failovers),
        local_retries: primary.local_retries.max(alternate.local_retries),
        session_retries: primary.session_retries.max(alternate.session_retries),
        hub_escalations: primary.hub_escalations.max(alternate.hub_escalations),
        refreshes: primary.refreshes.max(alternate.refreshes),
        partition_moved_retries: primary
            .partition_moved_retries
            .max(alternate.partition_moved_retries),
        write_forbidden_retries: primary
            .write_forbidden_retries
            .max(alternate.write_forbidden_retries),
    }
}

/// The decision of the module's table.
pub(crate) fn after_both_transient(legs: RaceLegs, limits: &RetryLimits) -> AfterRace {
    if !legs.primary_moved_on || !legs.untried_region {
        return AfterRace::End;
    }
    let counters = merged_counters(legs.primary, legs.alternate);
    if counters.attempts >= limits.max_attempts || counters.failovers > limits.max_failovers {
        return AfterRace::End;
    }
    AfterRace::Continue(counters)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn counters(f: impl FnOnce(&mut RetryCounters)) -> RetryCounters {
        let mut c = RetryCounters::default();
        f(&mut c);
        c
    }

    #[test]
    fn the_table() {
        let limits = RetryLimits::default();
        let moved = counters(|c| {
            c.attempts = 1;
            c.failovers = 1
        });
        let spent = counters(|c| {
            c.attempts = 3;
            c.local_retries = 2
        });
        let throttled = counters(|c| {
            c.attempts = 10;
            c.throttle_retries = 9;
            c.throttle_wait = Duration::from_millis(1800)
        });
        let rows = [
            // (name, moved on, untried region, primary, alternate, continues)
            (
                "primary spent its budget",
                false,
                true,
                throttled,
                throttled,
                false,
            ),
            (
                "primary spent its budget, no region left",
                false,
                false,
                throttled,
                spent,
                false,
            ),
            (
                "primary moved on, no region left",
                true,
                false,
                moved,
                spent,
                false,
            ),
            (
                "primary moved on, a region left",
                true,
                true,
                moved,
                spent,
                true,
            ),
            (
                "primary moved on, attempts spent",
                true,
                true,
                counters(|c| {
                    c.attempts = 20;
                    c.failovers = 1
                }),
                counters(|c| c.attempts = 12),
                false,
            ),
            (
                "primary moved on past the failover budget",
                true,
                true,
                counters(|c| {
                    c.attempts = 9;
                    c.failovers = 9
                }),
                spent,
                false,
            ),
        ];
        for (name, moved_on, untried, primary, alternate, continues) in rows {
            let legs = RaceLegs {
                primary_moved_on: moved_on,
                primary,
                alternate,
                untried_region: untried,
            };
            let got = after_both_transient(legs, &limits);
            assert_eq!(
                matches!(got, AfterRace::Continue(_)),
                continues,
                "{name}: {got:?}"
            );
        }
    }

    #[test]
    fn a_continuation_spends_what_both_legs_left() {
        let primary = counters(|c| {
            c.attempts = 1;
            c.failovers = 1;
            c.session_retries = 1
        });
        let alternate = counters(|c| {
            c.attempts = 3;
            c.local_retries = 2;
            c.throttle_retries = 4;
            c.throttle_wait = Duration::from_millis(800)
        });
        let m = merged_counters(primary, alternate);
        assert_eq!(m.attempts, 4, "attempts add up");
        assert_eq!(
            (
                m.failovers,
                m.local_retries,
                m.session_retries,
                m.throttle_retries
            ),
            (1, 2, 1, 4)
        );
        assert_eq!(m.throttle_wait, Duration::from_millis(800));
        assert_eq!(merged_counters(alternate, primary), m, "symmetric");
    }
}
