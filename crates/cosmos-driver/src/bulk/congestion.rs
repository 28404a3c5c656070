//! Congestion control for bulk: per partition key range, a limit of batches in flight that grows
//! by one after a full window of successes and halves on a throttled (429) batch, always within
//! `[min, max]`. Pure state; the executor asks and reports.

use std::collections::HashMap;
use std::hash::Hash;

/// How a batch sent to a range ended, as congestion control sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BatchSignal {
    /// The batch was served without throttling.
    Success,
    /// The batch, or any of its operations, was throttled (429).
    Throttled,
}

/// The limit of batches in flight for one range (additive increase, multiplicative decrease).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CongestionLimit {
    limit: usize,
    min: usize,
    max: usize,
    successes: usize,
}

impl CongestionLimit {
    /// A limit starting at `min`, never below `min` (at least 1) nor above `max` (at least `min`).
    pub(crate) fn new(min: usize, max: usize) -> Self {
        let min = min.max(1);
        Self {
            limit: min,
            min,
            max: max.max(min),
            successes: 0,
        }
    }

    /// How many batches may be in flight now.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    #[cfg(test)]
    /// Whether one more batch may start with `in_flight` already running.
    pub(crate) fn may_send(&self, in_flight: usize) -> bool {
        in_flight < self.limit
    }

    /// Takes a finished batch into account: a full window of `limit` successes grows the limit by
    /// one; a throttled batch halves it and starts a new window.
    pub(crate) fn record(&mut self, signal: BatchSignal) {
        match signal {
            BatchSignal::Success => {
                self.successes += 1;
                if self.successes >= self.limit {
                    self.limit = (self.limit + 1).min(self.max);
                    self.successes = 0;
                }
            }
            BatchSignal::Throttled => {
                self.limit = (self.limit / 2).max(self.min);
                self.successes = 0;
            }
        }
    }
}

/// One [`CongestionLimit`] per partition key range, created on first use.
#[derive(Clone, Debug)]
pub(crate) struct RangeCongestion<K> {
    min: usize,
    max: usize,
    ranges: HashMap<K, CongestionLimit>,
}

impl<K: Eq + Hash + Clone> RangeCongestion<K> {
    /// Every range's limit starts at `min` and stays within `[min, max]`.
    pub(crate) fn new(min: usize, max: usize) -> Self {
        Self {
            min,
            max,
            ranges: HashMap::new(),
        }
    }

    /// The limit of `range`.
    pub(crate) fn limit(&self, range: &K) -> usize {
        self.ranges.get(range).map_or_else(
            || CongestionLimit::new(self.min, self.max).limit(),
            CongestionLimit::limit,
        )
    }

    /// Whether one more batch may start on `range` with `in_flight` already running there.
    pub(crate) fn may_send(&self, range: &K, in_flight: usize) -> bool {
        in_flight < self.limit(range)
    }

    /// Takes a finished batch on `range` into account.
    pub(crate) fn record(&mut self, range: &K, signal: BatchSignal) {
        let (min, max) = (self.min, self.max);
        self.ranges
            .entry(range.clone())
            .or_insert_with(|| CongestionLimit::new(min, max))
            .record(signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BatchSignal::{Success as S, Throttled as T};

    #[test]
    fn the_limit_grows_per_window_halves_on_429_and_stays_bounded() {
        // (min, max, signals, limit after each signal)
        let cases: Vec<(usize, usize, Vec<BatchSignal>, Vec<usize>)> = vec![
            (1, 8, vec![S, S, S, S, S, S], vec![2, 2, 3, 3, 3, 4]),
            (1, 8, vec![S, S, S, T], vec![2, 2, 3, 1]),
            (1, 2, vec![S, S, S, S, S], vec![2, 2, 2, 2, 2]),
            (2, 16, vec![T, T], vec![2, 2]),
            (0, 0, vec![S, T], vec![1, 1]),
            (4, 100, vec![S, S, S, S, T, S], vec![4, 4, 4, 5, 4, 4]),
        ];
        for (min, max, signals, expected) in cases {
            let mut c = CongestionLimit::new(min, max);
            let seen: Vec<usize> = signals
                .iter()
                .map(|s| {
                    c.record(*s);
                    c.limit()
                })
                .collect();
            assert_eq!(seen, expected, "min {min} max {max} {signals:?}");
        }
    }

    #[test]
    fn a_throttle_after_growth_halves_from_the_grown_limit() {
        let mut c = CongestionLimit::new(1, 64);
        while c.limit() < 32 {
            c.record(S);
        }
        c.record(T);
        assert_eq!(c.limit(), 16);
        assert!(c.may_send(15));
        assert!(!c.may_send(16));
    }

    #[test]
    fn ranges_are_independent() {
        let mut r = RangeCongestion::new(1, 10);
        for _ in 0..3 {
            r.record(&"0", S);
        }
        r.record(&"1", T);
        assert_eq!((r.limit(&"0"), r.limit(&"1"), r.limit(&"2")), (3, 1, 1));
        assert!(r.may_send(&"0", 2));
        assert!(!r.may_send(&"1", 1));
    }
}
