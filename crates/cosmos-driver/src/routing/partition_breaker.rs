//! Per-(partition key range, region) circuit breaker.
//!
//! Counts consecutive failures and consecutive alternate-region hedge wins of a partition in a
//! region. Reaching a threshold marks the partition Unhealthy there for a while: reads of that
//! partition then try that region last. When the mark expires the partition is probed: the next
//! read goes there again; a success clears the entry, a failure marks it Unhealthy again at once.
//!
//! Partitions are identified by container and partition key range id. The driver learns range ids
//! from the `x-ms-documentdb-partitionkeyrangeid` response header and remembers which range a
//! partition key value landed in (a bounded map, filled only while the breaker tracks something),
//! rather than computing effective partition keys itself.
//!
//! Every check starts with one atomic load; while nothing is tracked nothing else happens, so the
//! common path neither locks nor allocates.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::HeaderValue;
use tokio::time::Instant;

use crate::protocol::Region;

/// Thresholds of the breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BreakerConfig {
    /// Consecutive failures (503, 500, 408, 410, connection errors) that mark a partition unhealthy
    /// in a region.
    pub failure_threshold: u32,
    /// How long an unhealthy mark lasts before the partition is probed.
    pub unhealthy_for: Duration,
    /// How long a mark made by consecutive alternate-region hedge wins lasts (the region was slow,
    /// not failing, and a probe of it is hedged, so it can be probed sooner); `None`: as long as
    /// `unhealthy_for`.
    pub hedge_win_unhealthy_for: Option<Duration>,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self {
            failure_threshold: 5,
            unhealthy_for: Duration::from_secs(60),
            hedge_win_unhealthy_for: None,
        }
    }
}

#[derive(Debug)]
struct Entry {
    container: Arc<str>,
    range: Box<str>,
    region: Region,
    failures: u32,
    hedge_wins: u32,
    /// Some: marked unhealthy until then; past it, the partition is being probed.
    unhealthy_until: Option<Instant>,
}

impl Entry {
    fn is(&self, container: &str, range: &str, region: &Region) -> bool {
        &*self.container == container && &*self.range == range && &self.region == region
    }
    fn is_idle(&self) -> bool {
        self.failures == 0 && self.hedge_wins == 0 && self.unhealthy_until.is_none()
    }
}

/// Most partition entries kept; most learned partition key to range mappings kept.
const MAX_ENTRIES: usize = 1024;
const MAX_LEARNED: usize = 4096;

/// (container link, partition key header) -> partition key range id.
/// The range is kept both as text and as the header value a leg carries (cloned without allocating).
type LearnedRanges = HashMap<(Arc<str>, HeaderValue), (Arc<str>, HeaderValue)>;

/// The breaker of one driver.
#[derive(Debug, Default)]
pub struct PartitionBreaker {
    config: BreakerConfig,
    entries: Mutex<Vec<Entry>>,
    tracked: AtomicUsize,
    learned: Mutex<LearnedRanges>,
}

impl PartitionBreaker {
    /// A breaker with `config`.
    pub fn new(config: BreakerConfig) -> Self {
        Self {
            config,
            ..Default::default()
        }
    }

    /// Whether any partition is tracked (a failure count, a hedge-win count or a mark).
    pub fn is_active(&self) -> bool {
        self.tracked.load(Ordering::Acquire) > 0
    }

    fn update<R>(
        &self,
        container: &Arc<str>,
        range: &str,
        region: &Region,
        create: bool,
        f: impl FnOnce(&mut Entry) -> R,
    ) -> Option<R> {
        let mut entries = self.entries.lock().ok()?;
        let pos = match entries.iter().position(|e| e.is(container, range, region)) {
            Some(p) => p,
            None if create => {
                if entries.len() >= MAX_ENTRIES {
                    entries.retain(|e| e.unhealthy_until.is_some());
                    if entries.len() >= MAX_ENTRIES {
                        return None;
                    }
                }
                entries.push(Entry {
                    container: container.clone(),
                    range: range.into(),
                    region: region.clone(),
                    failures: 0,
                    hedge_wins: 0,
                    unhealthy_until: None,
                });
                entries.len() - 1
            }
            None => return None,
        };
        let out = f(&mut entries[pos]);
        if entries[pos].is_idle() {
            entries.swap_remove(pos);
        }
        self.tracked.store(entries.len(), Ordering::Release);
        Some(out)
    }

    fn trip(&self, e: &mut Entry, now: Instant, period: Duration) {
        e.unhealthy_until = Some(now + period);
        e.failures = 0;
        e.hedge_wins = 0;
        tracing::info!(container = %e.container, range = %e.range, region = %e.region, "partition marked unhealthy in region");
    }

    /// One more failure of the partition in `region`. Returns true when it marked the partition
    /// unhealthy (threshold reached, or a failed probe).
    pub fn record_failure(
        &self,
        container: &Arc<str>,
        range: &str,
        region: &Region,
        now: Instant,
    ) -> bool {
        let threshold = self.config.failure_threshold.max(1);
        self.update(container, range, region, true, |e| {
            let probing = e.unhealthy_until.is_some_and(|u| u <= now);
            e.failures += 1;
            if probing || (e.unhealthy_until.is_none() && e.failures >= threshold) {
                self.trip(e, now, self.config.unhealthy_for);
                true
            } else {
                false
            }
        })
        .unwrap_or(false)
    }

    /// A success of the partition in `region`: failure counts start over, a probe succeeds.
    pub fn record_success(&self, container: &Arc<str>, range: &str, region: &Region, now: Instant) {
        if !self.is_active() {
            return;
        }
        self.update(container, range, region, false, |e| {
            e.failures = 0;
            if e.unhealthy_until.is_some_and(|u| u <= now) {
                e.unhealthy_until = None;
            }
        });
    }

    /// One more consecutive alternate-region win for the partition whose primary is `region`.
    /// Returns true when this win reached `threshold`, or beat a probe of the region, and marked the
    /// partition unhealthy there.
    pub fn record_consecutive_hedge_win(
        &self,
        container: &Arc<str>,
        range: &str,
        region: &Region,
        threshold: NonZeroU32,
        now: Instant,
    ) -> bool {
        self.update(container, range, region, true, |e| {
            // A probe the alternate beat again: the region is still slow for this partition.
            let probing = e.unhealthy_until.is_some_and(|u| u <= now);
            e.hedge_wins += 1;
            if probing || e.hedge_wins >= threshold.get() {
                self.trip(
                    e,
                    now,
                    self.config
                        .hedge_win_unhealthy_for
                        .unwrap_or(self.config.unhealthy_for),
                );
                true
            } else {
                false
            }
        })
        .unwrap_or(false)
    }

    /// The primary produced a final result in time: the consecutive-win count starts over.
    pub fn reset_consecutive_hedge_wins(&self, container: &Arc<str>, range: &str, region: &Region) {
        if !self.is_active() {
            return;
        }
        self.update(container, range, region, false, |e| e.hedge_wins = 0);
    }

    /// The consecutive alternate wins counted for the partition in `region`.
    pub fn consecutive_hedge_wins(&self, container: &str, range: &str, region: &Region) -> u32 {
        self.entries
            .lock()
            .ok()
            .and_then(|es| {
                es.iter()
                    .find(|e| e.is(container, range, region))
                    .map(|e| e.hedge_wins)
            })
            .unwrap_or(0)
    }

    /// Whether the partition is marked unhealthy in `region` at `now` (an expired mark is a probe:
    /// not unhealthy).
    pub fn is_unhealthy(
        &self,
        container: &str,
        range: &str,
        region: &Region,
        now: Instant,
    ) -> bool {
        if !self.is_active() {
            return false;
        }
        self.entries
            .lock()
            .map(|es| {
                es.iter().any(|e| {
                    e.is(container, range, region) && e.unhealthy_until.is_some_and(|u| u > now)
                })
            })
            .unwrap_or(false)
    }

    /// Whether any partition of `container` is marked unhealthy in `region` at `now`: what a read
    /// whose partition key range is not known yet assumes of its own partition. Without it, every
    /// partition key not read since the mark would go to the region first and pay a hedge (or a
    /// timeout) to learn its range; with it, such a read goes elsewhere first, learns its range from
    /// the answer, and returns to the region at once when its range is not the marked one.
    pub fn any_unhealthy(&self, container: &str, region: &Region, now: Instant) -> bool {
        if !self.is_active() {
            return false;
        }
        self.entries
            .lock()
            .map(|es| {
                es.iter().any(|e| {
                    &*e.container == container
                        && &e.region == region
                        && e.unhealthy_until.is_some_and(|u| u > now)
                })
            })
            .unwrap_or(false)
    }

    /// Remembers that partition key `pk` of `container` lives in `range`.
    pub fn learn_range(&self, container: &Arc<str>, pk: &HeaderValue, range: &str) {
        if let Ok(mut map) = self.learned.lock() {
            let key = (container.clone(), pk.clone());
            if map.get(&key).is_some_and(|(r, _)| &**r == range) {
                return;
            }
            let Ok(value) = HeaderValue::from_str(range) else {
                return;
            };
            if map.len() >= MAX_LEARNED {
                map.clear();
            }
            map.insert(key, (Arc::from(range), value));
        }
    }

    /// The range partition key `pk` of `container` was last seen in, while the breaker is active.
    pub fn range_of(&self, container: &Arc<str>, pk: &HeaderValue) -> Option<Arc<str>> {
        if !self.is_active() {
            return None;
        }
        let map = self.learned.lock().ok()?;
        map.get(&(container.clone(), pk.clone()))
            .map(|(r, _)| r.clone())
    }

    /// The range partition key `pk` of `container` was last seen in (as the range header's value),
    /// whether or not the breaker is active.
    pub fn known_range(&self, container: &Arc<str>, pk: &HeaderValue) -> Option<HeaderValue> {
        let map = self.learned.lock().ok()?;
        map.get(&(container.clone(), pk.clone()))
            .map(|(_, v)| v.clone())
    }

    /// The consecutive failures counted for `range` of `container` in `region` (0 when none).
    pub fn consecutive_failures(&self, container: &str, range: &str, region: &Region) -> u32 {
        self.entries
            .lock()
            .ok()
            .and_then(|entries| {
                entries
                    .iter()
                    .find(|e| e.is(container, range, region))
                    .map(|e| e.failures)
            })
            .unwrap_or(0)
    }

    /// Forgets every range learnt for `container` (it split, merged, moved or was recreated).
    pub fn forget_ranges(&self, container: &str) {
        if let Ok(mut map) = self.learned.lock() {
            map.retain(|(c, _), _| &**c != container);
        }
    }

    /// A view of the breaker scoped to one container (and partition key, so that a recorded win
    /// also teaches which range the key lives in), for the hedging feedback.
    pub fn for_container<'a>(
        &'a self,
        container: &'a Arc<str>,
        partition_key: Option<&'a HeaderValue>,
    ) -> ContainerBreaker<'a> {
        ContainerBreaker {
            breaker: self,
            container,
            partition_key,
        }
    }
}

/// The per-(partition, primary region) counter of consecutive alternate wins, kept by the partition
/// circuit breaker: the feedback hedging gives it after each race.
pub(crate) trait HedgeWinRecorder {
    /// One more consecutive alternate win. Returns true when this win reached `threshold` and the
    /// partition is now unhealthy in `primary_region`.
    fn record_consecutive_hedge_win(
        &self,
        partition_key_range_id: &str,
        primary_region: &Region,
        threshold: NonZeroU32,
    ) -> bool;

    /// The primary produced a final result in time: the count starts over.
    fn reset_consecutive_hedge_wins(&self, partition_key_range_id: &str, primary_region: &Region);
}

/// The breaker seen from one container: implements the hedging feedback's recorder.
#[derive(Clone, Copy, Debug)]
pub struct ContainerBreaker<'a> {
    breaker: &'a PartitionBreaker,
    container: &'a Arc<str>,
    partition_key: Option<&'a HeaderValue>,
}

impl HedgeWinRecorder for ContainerBreaker<'_> {
    fn record_consecutive_hedge_win(
        &self,
        range: &str,
        primary_region: &Region,
        threshold: NonZeroU32,
    ) -> bool {
        if let Some(pk) = self.partition_key {
            self.breaker.learn_range(self.container, pk, range);
        }
        self.breaker.record_consecutive_hedge_win(
            self.container,
            range,
            primary_region,
            threshold,
            Instant::now(),
        )
    }

    fn reset_consecutive_hedge_wins(&self, range: &str, primary_region: &Region) {
        self.breaker
            .reset_consecutive_hedge_wins(self.container, range, primary_region);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c() -> Arc<str> {
        Arc::from("dbs/db/colls/c")
    }
    fn east() -> Region {
        Region::new("East US")
    }
    fn five() -> NonZeroU32 {
        NonZeroU32::new(5).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn failures_trip_then_probe_back() {
        let b = PartitionBreaker::new(BreakerConfig {
            failure_threshold: 3,
            unhealthy_for: Duration::from_secs(10),
            hedge_win_unhealthy_for: None,
        });
        let now = Instant::now();
        assert!(!b.is_active());
        assert!(!b.record_failure(&c(), "0", &east(), now));
        assert!(!b.record_failure(&c(), "0", &east(), now));
        assert!(b.is_active());
        assert!(
            b.record_failure(&c(), "0", &east(), now),
            "third failure trips"
        );
        assert!(b.is_unhealthy("dbs/db/colls/c", "0", &east(), now));
        assert!(
            !b.is_unhealthy("dbs/db/colls/c", "1", &east(), now),
            "other ranges unaffected"
        );
        assert!(
            !b.is_unhealthy("dbs/db/colls/c", "0", &Region::new("West US"), now),
            "other regions unaffected"
        );
        tokio::time::advance(Duration::from_secs(11)).await;
        let later = Instant::now();
        assert!(
            !b.is_unhealthy("dbs/db/colls/c", "0", &east(), later),
            "expired: probing"
        );
        assert!(
            b.record_failure(&c(), "0", &east(), later),
            "a failed probe re-trips at once"
        );
        tokio::time::advance(Duration::from_secs(11)).await;
        b.record_success(&c(), "0", &east(), Instant::now());
        assert!(!b.is_active(), "a successful probe clears the entry");
    }

    #[tokio::test(start_paused = true)]
    async fn success_resets_failure_counts() {
        let b = PartitionBreaker::new(BreakerConfig {
            failure_threshold: 2,
            unhealthy_for: Duration::from_secs(10),
            hedge_win_unhealthy_for: None,
        });
        let now = Instant::now();
        b.record_failure(&c(), "0", &east(), now);
        b.record_success(&c(), "0", &east(), now);
        assert!(!b.record_failure(&c(), "0", &east(), now));
    }

    #[tokio::test(start_paused = true)]
    async fn consecutive_hedge_wins_trip_and_reset() {
        let b = PartitionBreaker::default();
        let now = Instant::now();
        for _ in 0..4 {
            assert!(!b.record_consecutive_hedge_win(&c(), "0", &east(), five(), now));
        }
        b.reset_consecutive_hedge_wins(&c(), "0", &east());
        assert_eq!(b.consecutive_hedge_wins("dbs/db/colls/c", "0", &east()), 0);
        assert!(!b.is_active(), "a reset entry is dropped");
        for i in 1..=5 {
            assert_eq!(
                b.record_consecutive_hedge_win(&c(), "0", &east(), five(), now),
                i == 5
            );
        }
        assert!(b.is_unhealthy("dbs/db/colls/c", "0", &east(), now));
    }

    #[tokio::test(start_paused = true)]
    async fn an_alternate_win_over_a_probe_re_trips_at_once() {
        let b = PartitionBreaker::new(BreakerConfig {
            failure_threshold: 5,
            unhealthy_for: Duration::from_secs(10),
            hedge_win_unhealthy_for: None,
        });
        let one = NonZeroU32::new(1).unwrap();
        assert!(b.record_consecutive_hedge_win(&c(), "0", &east(), one, Instant::now()));
        tokio::time::advance(Duration::from_secs(11)).await;
        assert!(
            !b.is_unhealthy("dbs/db/colls/c", "0", &east(), Instant::now()),
            "expired: probing"
        );
        assert!(
            b.record_consecutive_hedge_win(&c(), "0", &east(), five(), Instant::now()),
            "the probe lost to the alternate"
        );
        assert!(b.is_unhealthy("dbs/db/colls/c", "0", &east(), Instant::now()));
        tokio::time::advance(Duration::from_secs(11)).await;
        b.record_success(&c(), "0", &east(), Instant::now());
        assert!(
            !b.is_active(),
            "a probe the primary answers clears the partition"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn learned_ranges_are_kept_only_while_active() {
        let b = PartitionBreaker::default();
        let pk = HeaderValue::from_static("[\"a\"]");
        let container = c();
        let view = b.for_container(&container, Some(&pk));
        assert_eq!(b.range_of(&c(), &pk), None);
        view.record_consecutive_hedge_win("3", &east(), five());
        assert_eq!(b.range_of(&c(), &pk).as_deref(), Some("3"));
        view.reset_consecutive_hedge_wins("3", &east());
        assert_eq!(
            b.range_of(&c(), &pk),
            None,
            "inactive breaker answers nothing"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn any_unhealthy_covers_every_range_of_the_container_in_the_region() {
        let b = PartitionBreaker::new(BreakerConfig {
            failure_threshold: 1,
            unhealthy_for: Duration::from_secs(10),
            hedge_win_unhealthy_for: None,
        });
        let now = Instant::now();
        let west = Region::new("West US");
        assert!(!b.any_unhealthy("dbs/db/colls/c", &east(), now), "inactive");
        b.record_failure(&c(), "7", &east(), now);
        // (container, region, marked?)
        let cases = [
            ("dbs/db/colls/c", east(), true),
            ("dbs/db/colls/c", west.clone(), false),
            ("dbs/db/colls/other", east(), false),
        ];
        for (container, region, want) in cases {
            assert_eq!(
                b.any_unhealthy(container, &region, now),
                want,
                "{container} {region:?}"
            );
        }
        tokio::time::advance(Duration::from_secs(11)).await;
        assert!(
            !b.any_unhealthy("dbs/db/colls/c", &east(), Instant::now()),
            "an expired mark is a probe, not unhealthy"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn hedge_win_marks_can_be_shorter_than_failure_marks() {
        let b = PartitionBreaker::new(BreakerConfig {
            failure_threshold: 1,
            unhealthy_for: Duration::from_secs(60),
            hedge_win_unhealthy_for: Some(Duration::from_secs(3)),
        });
        let one = NonZeroU32::new(1).unwrap();
        let west = Region::new("West US");
        assert!(b.record_consecutive_hedge_win(&c(), "0", &east(), one, Instant::now()));
        assert!(b.record_failure(&c(), "0", &west, Instant::now()));
        tokio::time::advance(Duration::from_secs(4)).await;
        let now = Instant::now();
        assert!(
            !b.is_unhealthy("dbs/db/colls/c", "0", &east(), now),
            "the slow region is probed after 3 s"
        );
        assert!(
            b.is_unhealthy("dbs/db/colls/c", "0", &west, now),
            "the failing region stays marked"
        );
    }
}
