//! Waiting before a compound operation plans again after a range was found gone.
//!
//! A request pinned to a partition key range that answers 410/1002, 1007 or 1008 comes straight
//! back from the pipeline (every region and every retry would answer the same); the query pager,
//! the change feed, read many and bulk then read the ranges again and go to the range's children.
//! While a split or a migration is still completing, the listing shows the old range and the same
//! request is refused again: each further re-plan waits a little longer, so the caller's bounded
//! number of re-plans covers a few seconds of completion instead of spinning through them.

use std::time::Duration;

/// The wait before the first re-plan after one.
const FIRST_WAIT: Duration = Duration::from_millis(20);
/// The longest wait between two re-plans.
const MAX_WAIT: Duration = Duration::from_secs(1);

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
