//! Per-partition replication progress: which LSN each region's replica has reached.
//!
//! Writes commit in order with increasing LSNs. Each write becomes visible in region `r` at
//! `commit time + lag(r)`, never before the previous write did (replicas apply the log in order),
//! so each region's replica is a prefix of the log. The writing region sees its write at once and,
//! having taken it, everything before it. Entries every region has applied are dropped.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

#[derive(Clone)]
struct Pending<K> {
    lsn: u64,
    visible_at: Box<[Instant]>,
    key: K,
}

/// Replication state of one physical partition; `K` identifies the written item.
#[derive(Clone)]
pub(crate) struct ReplicaLog<K> {
    committed: u64,
    /// Per region: an LSN the replica is known to hold regardless of `pending`.
    floor: Vec<u64>,
    pending: VecDeque<Pending<K>>,
}

impl<K> ReplicaLog<K> {
    /// A log for `regions` replicas, all empty.
    pub(crate) fn new(regions: usize) -> Self {
        Self {
            committed: 0,
            floor: vec![0; regions],
            pending: VecDeque::new(),
        }
    }

    /// The LSN of the last committed write.
    pub(crate) fn committed(&self) -> u64 {
        self.committed
    }

    /// The LSN region `region`'s replica holds at `now`.
    pub(crate) fn visible(&self, region: usize, now: Instant) -> u64 {
        let floor = self.floor.get(region).copied().unwrap_or(self.committed);
        let applied = self
            .pending
            .partition_point(|p| p.visible_at.get(region).is_none_or(|at| *at <= now));
        let from_log = if applied == 0 {
            0
        } else {
            self.pending[applied - 1].lsn
        };
        floor.max(from_log)
    }

    /// When the write at `lsn` reaches region `region`'s replica, while it is on its way (None
    /// once every region has it, or when there is no such write).
    pub(crate) fn visible_at(&self, lsn: u64, region: usize) -> Option<Instant> {
        let at = self.pending.partition_point(|p| p.lsn < lsn);
        let entry = self.pending.get(at).filter(|p| p.lsn == lsn)?;
        entry.visible_at.get(region).copied()
    }

    /// Every region's replica LSN at `now`.
    pub(crate) fn progress(&self, now: Instant) -> Vec<u64> {
        (0..self.floor.len())
            .map(|r| self.visible(r, now))
            .collect()
    }

    /// The lowest replica LSN across regions: versions at or below it are no longer needed by anyone.
    pub(crate) fn min_visible(&self, now: Instant) -> u64 {
        (0..self.floor.len())
            .map(|r| self.visible(r, now))
            .min()
            .unwrap_or(self.committed)
    }

    /// Commits a write of `key` taken by region `origin`; `lags[r]` is region r's sampled lag.
    /// Returns the new LSN.
    pub(crate) fn commit(&mut self, key: K, origin: usize, now: Instant, lags: &[Duration]) -> u64 {
        self.committed += 1;
        let lsn = self.committed;
        if let Some(f) = self.floor.get_mut(origin) {
            *f = lsn;
        }
        let previous = self.pending.back().map(|p| &p.visible_at);
        let mut all_now = true;
        let visible_at: Box<[Instant]> = (0..self.floor.len())
            .map(|r| {
                let own = if r == origin {
                    now
                } else {
                    now + lags.get(r).copied().unwrap_or_default()
                };
                // Kept non-decreasing per region so each replica is a prefix of the log; the origin's
                // own view comes from its floor.
                let at = previous
                    .and_then(|p| p.get(r))
                    .map_or(own, |prev| own.max(*prev));
                all_now &= at <= now;
                at
            })
            .collect();
        if all_now && self.pending.is_empty() {
            self.floor.iter_mut().for_each(|f| *f = lsn);
        } else {
            self.pending.push_back(Pending {
                lsn,
                visible_at,
                key,
            });
        }
        lsn
    }

    /// Drops entries every region has applied by `now`; returns their keys (their old versions can go).
    pub(crate) fn drain_applied(&mut self, now: Instant) -> Vec<K> {
        let mut done = Vec::new();
        while let Some(front) = self.pending.front() {
            if front.visible_at.iter().any(|at| *at > now) {
                break;
            }
            if let Some(p) = self.pending.pop_front() {
                self.floor.iter_mut().for_each(|f| *f = (*f).max(p.lsn));
                done.push(p.key);
            }
        }
        done
    }

    /// Brings `region`'s replica up to the committed LSN (the region took over writes).
    pub(crate) fn catch_up(&mut self, region: usize) {
        if let Some(f) = self.floor.get_mut(region) {
            *f = self.committed;
        }
    }

    /// Whether writes are still on their way to some region.
    pub(crate) fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[tokio::test(start_paused = true)]
    async fn writes_reach_each_region_after_its_lag() {
        let mut log = ReplicaLog::new(3);
        let t0 = Instant::now();
        let lags = [ms(0), ms(100), ms(300)];
        assert_eq!(log.commit("a", 0, t0, &lags), 1);
        assert_eq!(log.progress(t0), vec![1, 0, 0]);
        assert_eq!(log.progress(t0 + ms(100)), vec![1, 1, 0]);
        assert_eq!(log.progress(t0 + ms(300)), vec![1, 1, 1]);
        assert_eq!(log.min_visible(t0 + ms(299)), 0);
        assert_eq!(log.drain_applied(t0 + ms(300)), vec!["a"]);
        assert!(!log.has_pending());
    }

    #[tokio::test(start_paused = true)]
    async fn replicas_apply_in_order_even_when_a_later_lag_is_shorter() {
        let mut log = ReplicaLog::new(2);
        let t0 = Instant::now();
        log.commit("a", 0, t0, &[ms(0), ms(500)]);
        log.commit("b", 0, t0 + ms(10), &[ms(0), ms(10)]);
        // Write 2 alone would arrive at 20 ms, but write 1 arrives at 500 ms and must come first.
        assert_eq!(log.visible(1, t0 + ms(100)), 0);
        assert_eq!(log.visible(1, t0 + ms(500)), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn zero_lag_commits_keep_no_backlog() {
        let mut log = ReplicaLog::new(2);
        let t0 = Instant::now();
        log.commit("a", 0, t0, &[ms(0), ms(0)]);
        assert!(!log.has_pending());
        assert_eq!(log.progress(t0), vec![1, 1]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_writing_region_sees_everything_before_its_write_and_catch_up_jumps_ahead() {
        let mut log = ReplicaLog::new(2);
        let t0 = Instant::now();
        log.commit("a", 0, t0, &[ms(0), ms(1000)]);
        log.commit("b", 1, t0, &[ms(1000), ms(0)]);
        assert_eq!(log.progress(t0), vec![1, 2]);
        log.catch_up(0);
        assert_eq!(log.visible(0, t0), 2);
    }
}
