//! Recent read latencies per primary region and kind of read, for adaptive hedge thresholds.
//!
//! One driver keeps one [`RegionLatencies`]: a fixed table of slots, each the
//! [`RotatingLatencies`] of one (region, [`ReadKind`]) pair. Point reads, query pages, feed pages,
//! change-feed pages and metadata reads take different times in the same region (a change-feed
//! poll answered 304 is far quicker than a query page), so each kind hedges on its own quantile.
//! Every page of every query in a region shares the query-page slot. A pair claims a free slot
//! with one compare-and-swap the first time it is recorded; after that, recording and reading a quantile take no lock and allocate nothing. The
//! table itself is allocated once, the first time an adaptive threshold is used, so a driver that
//! never uses one pays nothing.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Duration;

use tokio::time::Instant;

use super::adaptive::AdaptiveThreshold;
use super::latency_window::RotatingLatencies;
use super::strategy::HedgeThreshold;
use crate::protocol::Region;

/// (region, kind) pairs tracked per driver; latencies of further pairs are not kept (their reads
/// use the fallback threshold).
pub(crate) const MAX_TRACKED_REGIONS: usize = 64;

/// The kind of a hedged read, for keeping its latencies apart from other kinds'.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ReadKind {
    /// A point read of an item.
    PointRead,
    /// A page of a query (single- or cross-partition, read many's queries).
    QueryPage,
    /// A page of a read feed of items.
    FeedPage,
    /// A page of a change feed (often a quick 304).
    ChangeFeedPage,
    /// A read of a database, container, offer, partition key ranges or the account.
    Metadata,
}
/// How often each region's latency windows rotate: a quantile covers the last 2 to 4 seconds.
pub(crate) const ROTATION_PERIOD: Duration = Duration::from_secs(2);

struct Slot {
    /// FNV-1a hash of the region's comparison key; 0 while the slot is free.
    key: AtomicU64,
    latencies: RotatingLatencies,
}

/// Recent latencies of each primary region. See the module documentation.
pub(crate) struct RegionLatencies {
    slots: OnceLock<Box<[Slot]>>,
    period: Duration,
}

impl std::fmt::Debug for RegionLatencies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tracked = self.slots.get().map_or(0, |slots| {
            slots.iter().filter(|s| s.key.load(Relaxed) != 0).count()
        });
        f.debug_struct("RegionLatencies")
            .field("tracked_regions", &tracked)
            .field("period", &self.period)
            .finish()
    }
}

impl Default for RegionLatencies {
    fn default() -> Self {
        Self::new(ROTATION_PERIOD)
    }
}

/// The slot key of a (region, kind) pair: never 0 (the free mark).
fn key_of(region: &Region, kind: ReadKind) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let hash = region
        .key()
        .bytes()
        .chain(std::iter::once(kind as u8))
        .fold(OFFSET, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME));
    hash.max(1)
}

impl RegionLatencies {
    /// Empty, with windows rotating every `period`.
    pub(crate) fn new(period: Duration) -> Self {
        Self {
            slots: OnceLock::new(),
            period,
        }
    }

    fn slots(&self) -> &[Slot] {
        self.slots.get_or_init(|| {
            let origin = Instant::now();
            (0..MAX_TRACKED_REGIONS)
                .map(|_| Slot {
                    key: AtomicU64::new(0),
                    latencies: RotatingLatencies::new(origin, self.period),
                })
                .collect()
        })
    }

    /// The region's slot; with `claim`, a free one is taken when the region has none.
    fn slot(&self, region: &Region, kind: ReadKind, claim: bool) -> Option<&RotatingLatencies> {
        let key = key_of(region, kind);
        for slot in self.slots() {
            match slot.key.load(Relaxed) {
                k if k == key => return Some(&slot.latencies),
                0 if claim => match slot.key.compare_exchange(0, key, Relaxed, Relaxed) {
                    Ok(_) => return Some(&slot.latencies),
                    Err(k) if k == key => return Some(&slot.latencies),
                    Err(_) => continue,
                },
                0 => return None,
                _ => continue,
            }
        }
        None
    }

    /// Records that a read of `kind` whose primary was `region` took `latency` there, observed at
    /// `now`.
    pub(crate) fn record(&self, region: &Region, kind: ReadKind, latency: Duration, now: Instant) {
        if let Some(latencies) = self.slot(region, kind, true) {
            latencies.record(latency, now);
        }
    }

    /// The quantile of `region`'s recent latencies of `kind` that `adaptive` asks for, when it has
    /// enough.
    pub(crate) fn estimate(
        &self,
        region: &Region,
        kind: ReadKind,
        adaptive: AdaptiveThreshold,
        now: Instant,
    ) -> Option<Duration> {
        self.slot(region, kind, false)?
            .quantile(adaptive.quantile(), adaptive.min_samples(), now)
    }

    /// The fixed threshold a read of `kind` whose primary is `region` races with: `threshold`
    /// itself when it is fixed; for an adaptive one, the quantile of the region's recent latencies
    /// of that kind clamped to its bounds, or `fallback` clamped to them while there are too few.
    pub(crate) fn threshold_for(
        &self,
        region: &Region,
        kind: ReadKind,
        threshold: HedgeThreshold,
        fallback: HedgeThreshold,
        now: Instant,
    ) -> HedgeThreshold {
        let Some(adaptive) = threshold.adaptive_settings() else {
            return threshold;
        };
        let estimate = self.estimate(region, kind, adaptive, now);
        let delay = adaptive.threshold(estimate, fallback.get());
        // `min` is never zero, so the clamped delay never is.
        HedgeThreshold::new(delay).unwrap_or(fallback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: ReadKind = ReadKind::PointRead;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn fixed(n: u64) -> HedgeThreshold {
        HedgeThreshold::new(ms(n)).unwrap()
    }

    fn p95() -> HedgeThreshold {
        HedgeThreshold::adaptive(0.95, ms(5), ms(300)).unwrap()
    }

    #[test]
    fn fixed_thresholds_pass_through() {
        let l = RegionLatencies::default();
        let now = Instant::now();
        assert_eq!(
            l.threshold_for(&Region::new("East US"), K, fixed(50), fixed(1000), now),
            fixed(50)
        );
    }

    #[test]
    fn adaptive_thresholds_follow_each_region() {
        let l = RegionLatencies::default();
        let now = Instant::now();
        let (east, west) = (Region::new("East US"), Region::new("West US"));
        // Too few latencies: the fallback, clamped.
        assert_eq!(
            l.threshold_for(&east, K, p95(), fixed(1000), now),
            fixed(300)
        );
        assert_eq!(
            l.threshold_for(&east, K, p95(), fixed(100), now),
            fixed(100)
        );
        for i in 0..100u64 {
            l.record(&east, K, ms(10 + i % 10), now);
            l.record(&west, K, ms(150), now);
        }
        // East's p95 is 19 ms (bucket edge 20.48 ms); West's 150 ms (edge 163.84 ms).
        assert_eq!(
            l.threshold_for(&east, K, p95(), fixed(1000), now).get(),
            Duration::from_micros(20_480)
        );
        assert_eq!(
            l.threshold_for(&Region::new("westus"), K, p95(), fixed(1000), now)
                .get(),
            Duration::from_micros(163_840),
            "region names compare by their key"
        );
        // A region never recorded still falls back.
        assert_eq!(
            l.threshold_for(&Region::new("North Europe"), K, p95(), fixed(1000), now),
            fixed(300)
        );
        // Clamped to the bounds.
        let tight = HedgeThreshold::adaptive(0.95, ms(30), ms(100)).unwrap();
        assert_eq!(
            l.threshold_for(&east, K, tight, fixed(1000), now),
            fixed(30)
        );
        assert_eq!(
            l.threshold_for(&west, K, tight, fixed(1000), now),
            fixed(100)
        );
    }

    #[test]
    fn each_kind_of_read_keeps_its_own_quantile() {
        let l = RegionLatencies::default();
        let now = Instant::now();
        let east = Region::new("East US");
        for _ in 0..100 {
            l.record(&east, ReadKind::PointRead, ms(4), now);
            l.record(&east, ReadKind::QueryPage, ms(60), now);
            l.record(&east, ReadKind::ChangeFeedPage, ms(1), now);
        }
        let t = |kind| l.threshold_for(&east, kind, p95(), fixed(1000), now).get();
        assert!(
            t(ReadKind::PointRead) < ms(6),
            "{:?}",
            t(ReadKind::PointRead)
        );
        assert!(
            t(ReadKind::QueryPage) >= ms(60),
            "{:?}",
            t(ReadKind::QueryPage)
        );
        assert_eq!(t(ReadKind::ChangeFeedPage), ms(5), "clamped to the minimum");
        assert_eq!(
            t(ReadKind::Metadata),
            ms(300),
            "never recorded: the fallback"
        );
        assert_eq!(
            t(ReadKind::FeedPage),
            ms(300),
            "never recorded: the fallback"
        );
    }

    #[test]
    fn regions_beyond_the_table_use_the_fallback() {
        let l = RegionLatencies::default();
        let now = Instant::now();
        let regions: Vec<Region> = (0..MAX_TRACKED_REGIONS + 2)
            .map(|i| Region::new(format!("Region {i}")))
            .collect();
        for r in &regions {
            for _ in 0..100 {
                l.record(r, K, ms(7), now);
            }
        }
        let first = l
            .threshold_for(&regions[0], K, p95(), fixed(1000), now)
            .get();
        assert_eq!(first, Duration::from_micros(7_168));
        let last = l.threshold_for(&regions[MAX_TRACKED_REGIONS], K, p95(), fixed(1000), now);
        assert_eq!(last, fixed(300));
    }

    #[tokio::test(start_paused = true)]
    async fn a_slowed_region_is_learned_within_two_periods() {
        let l = RegionLatencies::default();
        let east = Region::new("East US");
        for _ in 0..200 {
            l.record(&east, K, ms(3), Instant::now());
        }
        assert_eq!(
            l.threshold_for(&east, K, p95(), fixed(1000), Instant::now()),
            fixed(5)
        );
        tokio::time::advance(ROTATION_PERIOD).await;
        for _ in 0..200 {
            l.record(&east, K, ms(120), Instant::now());
        }
        // Half the window is slow now: p95 is slow.
        let t = l
            .threshold_for(&east, K, p95(), fixed(1000), Instant::now())
            .get();
        assert!(t >= ms(120) && t < ms(135), "{t:?}");
        tokio::time::advance(ROTATION_PERIOD * 2).await;
        assert_eq!(
            l.threshold_for(&east, K, p95(), fixed(1000), Instant::now()),
            fixed(300),
            "after two quiet periods the region has no recent latencies"
        );
    }
}
