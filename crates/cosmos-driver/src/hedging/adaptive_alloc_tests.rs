//! Recording a latency, reading an adaptive threshold and using the hedge budget allocate nothing:
//! they run on every hedged read (counted by the crate's test allocator, `alloc_counter`).

use std::time::Duration;

use tokio::time::Instant;

use super::{HedgeBudget, HedgeBudgetConfig, HedgeThreshold, ReadKind, RegionLatencies};
use crate::alloc_counter::allocations_of;
use crate::protocol::Region;

#[test]
fn recording_and_reading_latencies_allocates_nothing() {
    let latencies = RegionLatencies::default();
    let (east, west) = (Region::new("East US"), Region::new("West US"));
    let adaptive = HedgeThreshold::adaptive(0.95, Duration::from_millis(5), Duration::from_secs(1))
        .expect("valid adaptive threshold");
    let fallback = HedgeThreshold::new(Duration::from_millis(1000)).expect("non-zero");
    // The table is allocated the first time it is used, once per driver.
    latencies.record(
        &east,
        ReadKind::PointRead,
        Duration::from_millis(3),
        Instant::now(),
    );
    let start = Instant::now();
    let (allocations, threshold) = allocations_of(|| {
        let mut last = fallback;
        for i in 0..10_000u64 {
            // Time moves on across several rotations of the windows.
            let now = start + Duration::from_millis(i);
            latencies.record(
                &east,
                ReadKind::PointRead,
                Duration::from_micros(2_000 + i % 1_000),
                now,
            );
            latencies.record(&west, ReadKind::PointRead, Duration::from_millis(20), now);
            last = latencies.threshold_for(&east, ReadKind::PointRead, adaptive, fallback, now);
        }
        last
    });
    assert_eq!(allocations, 0, "recording and thresholds allocated");
    // The measurement measured something: East's p95 of 2–3 ms, clamped up to 5 ms.
    assert_eq!(threshold.get(), Duration::from_millis(5));
    assert!(!threshold.is_adaptive());
}

#[test]
fn the_hedge_budget_allocates_nothing() {
    let budget = HedgeBudget::new(HedgeBudgetConfig::default());
    let start = Instant::now();
    let (allocations, granted) = allocations_of(|| {
        let mut granted = 0u32;
        for i in 0..10_000u64 {
            budget.record_read();
            granted += u32::from(budget.try_acquire(start + Duration::from_millis(i)));
        }
        granted
    });
    assert_eq!(allocations, 0, "the budget allocated");
    // 20 saved + 10% of 10,000 reads + 2/s over the (just under) 10 s after the bucket was made.
    assert!(
        (20 + 1_000 + 19..=20 + 1_000 + 20).contains(&granted),
        "{granted}"
    );
}
