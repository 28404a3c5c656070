//! A lock-free rotating latency histogram: the recent latencies of one region, and their quantiles.
//!
//! Latencies are counted in log-linear buckets (eight per power of two of microseconds, so a bucket
//! is at most 12.5% wide) held in `AtomicU64`s. Two windows take turns: recording goes to the
//! current one; when a rotation period has passed, the older window is cleared and becomes the
//! current one. A quantile reads both, so it always covers between one and two periods of recent
//! latencies, and a region whose latency changed is forgotten within two periods.
//!
//! Recording is a handful of relaxed atomic operations: no lock, no allocation. A rotation is
//! claimed by one compare-and-swap; a latency recorded into a window while another thread clears it
//! may be lost, which only makes the estimate a little less exact.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use tokio::time::Instant;

/// Sub-buckets per power of two.
const SUB_BITS: u32 = 3;
const SUBS: u64 = 1 << SUB_BITS;
/// Latencies are capped here (about 17.9 minutes), so the buckets are few and fixed.
const MAX_MICROS: u64 = (1 << 30) - 1;
/// Number of buckets: the exact values below `SUBS`, then `SUBS` per power of two up to the cap.
pub(crate) const BUCKETS: usize = (SUBS + (30 - SUB_BITS as u64) * SUBS) as usize;

/// The bucket a latency of `micros` falls in.
fn bucket_of(micros: u64) -> usize {
    let v = micros.min(MAX_MICROS);
    if v < SUBS {
        return v as usize;
    }
    let exp = 63 - u64::from(v.leading_zeros());
    let sub = (v >> (exp - u64::from(SUB_BITS))) & (SUBS - 1);
    (SUBS + (exp - u64::from(SUB_BITS)) * SUBS + sub) as usize
}

/// The exclusive upper edge of bucket `index`, in microseconds: every latency in the bucket is
/// below it, so a quantile read from it never understates.
fn upper_edge(index: usize) -> u64 {
    let i = index as u64;
    if i < SUBS {
        return i + 1;
    }
    let exp = (i - SUBS) / SUBS + u64::from(SUB_BITS);
    let sub = (i - SUBS) % SUBS;
    (SUBS + sub + 1) << (exp - u64::from(SUB_BITS))
}

/// One window's counts.
struct Window {
    buckets: [AtomicU64; BUCKETS],
    total: AtomicU64,
}

impl Window {
    fn new() -> Self {
        Self {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            total: AtomicU64::new(0),
        }
    }

    fn clear(&self) {
        for b in &self.buckets {
            b.store(0, Relaxed);
        }
        self.total.store(0, Relaxed);
    }
}

/// Recent latencies of one region in two rotating windows. See the module documentation.
pub(crate) struct RotatingLatencies {
    windows: [Window; 2],
    /// The number of whole periods between `origin` and the start of the current window.
    epoch: AtomicU64,
    origin: Instant,
    period: Duration,
}

impl std::fmt::Debug for RotatingLatencies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RotatingLatencies")
            .field("period", &self.period)
            .field("epoch", &self.epoch.load(Relaxed))
            .finish_non_exhaustive()
    }
}

impl RotatingLatencies {
    /// Empty windows rotated every `period` (at least a millisecond), counted from `origin`.
    pub(crate) fn new(origin: Instant, period: Duration) -> Self {
        Self {
            windows: [Window::new(), Window::new()],
            epoch: AtomicU64::new(0),
            origin,
            period: period.max(Duration::from_millis(1)),
        }
    }

    /// The period `now` falls in.
    fn period_of(&self, now: Instant) -> u64 {
        let since = now.saturating_duration_since(self.origin);
        u64::try_from(since.as_nanos() / self.period.as_nanos()).unwrap_or(u64::MAX)
    }

    /// Rotates to the period of `now` if it has moved on; returns the current epoch.
    fn rotate(&self, now: Instant) -> u64 {
        let target = self.period_of(now);
        let mut seen = self.epoch.load(Relaxed);
        while seen < target {
            match self
                .epoch
                .compare_exchange_weak(seen, target, Relaxed, Relaxed)
            {
                Ok(_) => {
                    // The window that becomes current held the period before `seen`'s: stale.
                    self.windows[(target % 2) as usize].clear();
                    if target - seen >= 2 {
                        // Nothing was recorded for a whole period: the other window is stale too.
                        self.windows[((target + 1) % 2) as usize].clear();
                    }
                    return target;
                }
                Err(now_seen) => seen = now_seen,
            }
        }
        seen
    }

    /// Records one latency observed at `now`.
    pub(crate) fn record(&self, latency: Duration, now: Instant) {
        let epoch = self.rotate(now);
        let window = &self.windows[(epoch % 2) as usize];
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        window.buckets[bucket_of(micros)].fetch_add(1, Relaxed);
        window.total.fetch_add(1, Relaxed);
    }

    /// Latencies recorded in the last one to two periods, as of `now`.
    pub(crate) fn count(&self, now: Instant) -> u64 {
        self.rotate(now);
        self.windows.iter().map(|w| w.total.load(Relaxed)).sum()
    }

    /// The `quantile` (in `0.0..=1.0`) of the recent latencies, as of `now`: the upper edge of the
    /// bucket holding it. `None` when fewer than `min_samples` (at least one) are recorded.
    pub(crate) fn quantile(
        &self,
        quantile: f64,
        min_samples: u64,
        now: Instant,
    ) -> Option<Duration> {
        let total = self.count(now);
        if total == 0 || total < min_samples {
            return None;
        }
        let q = if quantile.is_nan() {
            1.0
        } else {
            quantile.clamp(0.0, 1.0)
        };
        // The rank of the quantile among `total` latencies, 1-based (nearest rank).
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0u64;
        for i in 0..BUCKETS {
            seen +=
                self.windows[0].buckets[i].load(Relaxed) + self.windows[1].buckets[i].load(Relaxed);
            if seen >= rank {
                return Some(Duration::from_micros(upper_edge(i)));
            }
        }
        // Buckets and totals are read at slightly different moments under concurrent recording:
        // the highest bucket with anything in it is the answer then.
        (0..BUCKETS)
            .rev()
            .find(|&i| {
                self.windows[0].buckets[i].load(Relaxed) + self.windows[1].buckets[i].load(Relaxed)
                    > 0
            })
            .map(|i| Duration::from_micros(upper_edge(i)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (latency in µs, bucket, its upper edge): exact below 8 µs, then eight per power of two.
    const BUCKET_TABLE: &[(u64, usize, u64)] = &[
        (0, 0, 1),
        (1, 1, 2),
        (7, 7, 8),
        (8, 8, 9),
        (9, 9, 10),
        (15, 15, 16),
        (16, 16, 18),
        (17, 16, 18),
        (18, 17, 20),
        (31, 23, 32),
        (32, 24, 36),
        (1_000, 63, 1_024),
        (1_023, 63, 1_024),
        (1_024, 64, 1_152),
        (50_000, 108, 53_248),
        (MAX_MICROS, BUCKETS - 1, 1 << 30),
        (u64::MAX, BUCKETS - 1, 1 << 30),
    ];

    #[test]
    fn buckets_table() {
        for &(micros, bucket, edge) in BUCKET_TABLE {
            assert_eq!(bucket_of(micros), bucket, "bucket of {micros} µs");
            assert_eq!(upper_edge(bucket), edge, "upper edge of bucket {bucket}");
        }
    }

    #[test]
    fn every_latency_is_below_its_upper_edge_and_within_an_eighth() {
        for micros in
            (0..5_000u64).chain((1..40).map(|s| 1u64 << s >> 1).map(|v| v.min(MAX_MICROS)))
        {
            let edge = upper_edge(bucket_of(micros));
            assert!(micros < edge, "{micros} µs is below its edge {edge}");
            assert!(
                (edge - micros) * 8 <= micros.max(8),
                "{micros} µs: edge {edge} within 12.5%"
            );
        }
    }

    #[test]
    fn buckets_are_ordered() {
        for i in 1..BUCKETS {
            assert!(upper_edge(i) > upper_edge(i - 1), "bucket {i}");
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// (latencies in ms, quantile, min samples, expected quantile in ms; None = too few samples).
    #[test]
    fn quantile_table() {
        let hundred_fast_one_slow: Vec<u64> = std::iter::repeat_n(2, 99).chain([900]).collect();
        let ramp: Vec<u64> = (1..=100).collect();
        let cases: Vec<(&[u64], f64, u64, Option<f64>)> = vec![
            (&[], 0.5, 1, None),
            (&[10], 0.5, 2, None),
            (&[10], 0.5, 1, Some(10.24)),
            (&hundred_fast_one_slow, 0.5, 1, Some(2.048)),
            (&hundred_fast_one_slow, 0.99, 1, Some(2.048)),
            (&hundred_fast_one_slow, 0.999, 1, Some(917.504)),
            (&hundred_fast_one_slow, 1.0, 1, Some(917.504)),
            (&ramp, 0.5, 100, Some(53.248)),
            (&ramp, 0.9, 100, Some(90.112)),
            (&ramp, 0.95, 101, None),
            (&ramp, 0.0, 1, Some(1.024)),
        ];
        let start = Instant::now();
        for (latencies, q, min, want) in cases {
            let w = RotatingLatencies::new(start, Duration::from_secs(2));
            for &l in latencies {
                w.record(ms(l), start);
            }
            let got = w.quantile(q, min, start).map(|d| d.as_secs_f64() * 1e3);
            assert_eq!(got, want, "{} latencies, q {q}, min {min}", latencies.len());
        }
    }

    #[test]
    fn windows_rotate_and_forget() {
        let start = Instant::now();
        let period = Duration::from_secs(2);
        let w = RotatingLatencies::new(start, period);
        for _ in 0..10 {
            w.record(ms(5), start);
        }
        // Next period: the first window is still read.
        let t1 = start + Duration::from_millis(2_500);
        for _ in 0..10 {
            w.record(ms(100), t1);
        }
        assert_eq!(w.count(t1), 20);
        assert_eq!(w.quantile(0.25, 1, t1), Some(Duration::from_micros(5_120)));
        assert_eq!(
            w.quantile(0.75, 1, t1),
            Some(Duration::from_micros(106_496))
        );
        // The period after: the 5 ms window is cleared for new latencies, the 100 ms one stays.
        let t2 = start + Duration::from_millis(4_100);
        assert_eq!(w.count(t2), 10);
        assert_eq!(
            w.quantile(0.25, 1, t2),
            Some(Duration::from_micros(106_496))
        );
        w.record(ms(1), t2);
        assert_eq!(w.count(t2), 11);
        // Two silent periods later everything is forgotten.
        let t4 = start + Duration::from_millis(8_200);
        assert_eq!(w.count(t4), 0);
        assert_eq!(w.quantile(0.5, 1, t4), None);
    }

    #[test]
    fn a_clock_going_back_records_into_the_current_window() {
        let start = Instant::now();
        let w = RotatingLatencies::new(start, Duration::from_secs(1));
        w.record(ms(3), start + Duration::from_secs(5));
        w.record(ms(3), start);
        assert_eq!(w.count(start + Duration::from_secs(5)), 2);
    }

    #[test]
    fn concurrent_recording_counts_every_latency_within_a_period() {
        let start = Instant::now();
        let w = std::sync::Arc::new(RotatingLatencies::new(start, Duration::from_secs(3600)));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let w = w.clone();
                std::thread::spawn(move || {
                    for i in 0..1_000u64 {
                        w.record(Duration::from_micros(100 + t * 10 + i % 7), start);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(w.count(start), 4_000);
    }
}
