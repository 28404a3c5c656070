//! How often, and after what wait, a compound operation plans again after a range was found gone.
//!
//! A request pinned to a partition key range that answers 410/1002, 1007 or 1008 comes straight
//! back from the pipeline (every region and every retry would answer the same); the query pager,
//! the change feed, read many and bulk then read the ranges again and go to the range's children.
//! While a split or a migration is still completing, the listing shows the old range and the same
//! request is refused again: each further re-plan waits a little longer, so the caller's bounded
//! number of re-plans covers a few seconds of completion instead of spinning through them.
//!
//! One budget for all of them ([`Replans`], at most [`MAX_REPLANS`]): the query pager, read many
//! and the change feed each take a re-plan from it before they read the ranges again. (Bulk
//! counts re-routes per operation, with the caller's `BulkOptions::with_max_reroutes`.)

use std::time::Duration;

/// The wait before the first re-plan after one.
const FIRST_WAIT: Duration = Duration::from_millis(20);
/// The longest wait between two re-plans.
const MAX_WAIT: Duration = Duration::from_secs(1);

/// The most re-plans one compound operation makes (a query over its whole run, one read many, one
/// change feed page) before it gives up with the range-gone error.
pub const MAX_REPLANS: u32 = 64;

/// The re-plans one compound operation has taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Replans {
    used: u32,
}

impl Replans {
    /// A budget of which `used` re-plans are already spent (a query resumed on its next page).
    pub(crate) fn spent(used: u32) -> Self {
        Self {
            used: used.min(MAX_REPLANS),
        }
    }

    /// Whether a re-plan is left.
    pub(crate) fn left(self) -> bool {
        self.used < MAX_REPLANS
    }

    /// Takes one re-plan: the wait before it ([`replan_delay`]), or `None` when none is left.
    pub(crate) fn take(&mut self) -> Option<Duration> {
        if !self.left() {
            return None;
        }
        let wait = replan_delay(self.used);
        self.used += 1;
        Some(wait)
    }
}

/// How long to wait before a re-plan, given how many re-plans came before it: none before the
/// first (a completed split is planned again at once), then 20 ms doubling up to 1 s.
pub(crate) fn replan_delay(replans_before: u32) -> Duration {
    match replans_before {
        0 => Duration::ZERO,
        n => FIRST_WAIT
            .saturating_mul(1u32 << (n - 1).min(16))
            .min(MAX_WAIT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_gives_the_waits_in_order_then_runs_out() {
        let mut replans = Replans::default();
        let mut waits = Vec::new();
        while let Some(wait) = replans.take() {
            waits.push(wait);
        }
        assert_eq!(waits.len(), MAX_REPLANS as usize);
        assert_eq!(&waits[..3], &[Duration::ZERO, Duration::from_millis(20), Duration::from_millis(40)]);
        assert!(!replans.left());
        let mut resumed = Replans::spent(MAX_REPLANS - 1);
        assert!(resumed.left());
        assert_eq!(resumed.take(), Some(Duration::from_secs(1)));
        assert_eq!(resumed.take(), None);
        assert_eq!(Replans::spent(u32::MAX), Replans::spent(MAX_REPLANS));
    }

    #[test]
    fn waits_grow_from_nothing_to_a_second() {
        let ms = |n| Duration::from_millis(n);
        let table = [
            (0, ms(0)),
            (1, ms(20)),
            (2, ms(40)),
            (3, ms(80)),
            (6, ms(640)),
            (7, ms(1000)),
            (60, ms(1000)),
            (u32::MAX, ms(1000)),
        ];
        for (n, want) in table {
            assert_eq!(replan_delay(n), want, "after {n} re-plans");
        }
        let eight: Duration = (0..8).map(replan_delay).sum();
        assert!(eight >= ms(2000), "eight re-plans cover {eight:?}");
    }
}
