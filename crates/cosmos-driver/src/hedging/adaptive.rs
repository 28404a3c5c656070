//! The adaptive threshold's settings, and the pure rule that turns recent latencies into a delay.
//!
//! An adaptive threshold hedges a read when its primary region has taken longer than a quantile of
//! that region's recent latencies (as tower's hedge middleware does), clamped to `[min, max]`.
//! Until the region has enough recent latencies for the quantile to mean something, the fixed
//! fallback applies: the driver default threshold, clamped to the same bounds.

use std::time::Duration;

/// Settings of an adaptive threshold. Built by [`super::HedgeThreshold::adaptive`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AdaptiveThreshold {
    /// The quantile in parts per million (`950_000` is p95), strictly between 0 and 1.
    quantile_ppm: u32,
    min: Duration,
    max: Duration,
}

/// Fewest recent latencies an estimate needs, whatever the quantile.
const MIN_SAMPLES_FLOOR: u64 = 20;
/// Latencies an estimate needs above its quantile: with fewer, one outlier moves it too far.
const SAMPLES_ABOVE_QUANTILE: u64 = 5;

impl AdaptiveThreshold {
    /// `None` unless `0 < quantile < 1`, `min` is not zero and `min <= max`.
    pub fn new(quantile: f64, min: Duration, max: Duration) -> Option<Self> {
        if !(quantile > 0.0 && quantile < 1.0) || min.is_zero() || min > max {
            return None;
        }
        let quantile_ppm = (quantile * 1e6).round() as u32;
        if quantile_ppm == 0 || quantile_ppm >= 1_000_000 {
            return None;
        }
        Some(Self {
            quantile_ppm,
            min,
            max,
        })
    }

    /// The quantile, e.g. `0.95`.
    pub fn quantile(self) -> f64 {
        f64::from(self.quantile_ppm) / 1e6
    }

    /// The lowest threshold it yields.
    pub const fn min(self) -> Duration {
        self.min
    }

    /// The highest threshold it yields.
    pub const fn max(self) -> Duration {
        self.max
    }

    /// `value` clamped to `[min, max]`.
    pub const fn clamp(self, value: Duration) -> Duration {
        if value.as_nanos() < self.min.as_nanos() {
            self.min
        } else if value.as_nanos() > self.max.as_nanos() {
            self.max
        } else {
            value
        }
    }

    /// How many recent latencies the estimate needs: enough that about five lie above the
    /// quantile, and never fewer than twenty. p95 needs 100, p99 500, p99.9 5,000.
    pub fn min_samples(self) -> u64 {
        let above_ppm = u64::from(1_000_000 - self.quantile_ppm);
        (SAMPLES_ABOVE_QUANTILE * 1_000_000)
            .div_ceil(above_ppm)
            .max(MIN_SAMPLES_FLOOR)
    }

    /// The threshold for a read: the quantile of the primary region's recent latencies when there
    /// is one (`estimate`), the `fallback` otherwise; clamped to `[min, max]` either way.
    pub const fn threshold(self, estimate: Option<Duration>, fallback: Duration) -> Duration {
        match estimate {
            Some(e) => self.clamp(e),
            None => self.clamp(fallback),
        }
    }

    /// `p95`, `p99.9`: the quantile as a percentile label.
    pub fn label(self) -> String {
        let percent = f64::from(self.quantile_ppm) / 1e4;
        format!("p{percent}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn construction_table() {
        // (quantile, min ms, max ms, accepted?)
        let cases: &[(f64, u64, u64, bool)] = &[
            (0.95, 5, 1000, true),
            (0.5, 1, 1, true),
            (0.999, 1, 50, true),
            (0.0, 5, 1000, false),
            (1.0, 5, 1000, false),
            (-0.5, 5, 1000, false),
            (f64::NAN, 5, 1000, false),
            (f64::INFINITY, 5, 1000, false),
            (0.95, 0, 1000, false),
            (0.95, 100, 10, false),
            (0.000_000_1, 5, 1000, false),
            (0.999_999_9, 5, 1000, false),
        ];
        for &(q, min, max, ok) in cases {
            assert_eq!(
                AdaptiveThreshold::new(q, ms(min), ms(max)).is_some(),
                ok,
                "q {q}, [{min}, {max}] ms"
            );
        }
    }

    #[test]
    fn threshold_table() {
        let a = AdaptiveThreshold::new(0.95, ms(5), ms(200)).unwrap();
        // (estimate ms, fallback ms, threshold ms)
        let cases: &[(Option<u64>, u64, u64)] = &[
            (None, 1000, 200),
            (None, 50, 50),
            (None, 1, 5),
            (Some(3), 1000, 5),
            (Some(40), 1000, 40),
            (Some(5000), 1000, 200),
            (Some(200), 1000, 200),
            (Some(5), 1000, 5),
        ];
        for &(estimate, fallback, want) in cases {
            assert_eq!(
                a.threshold(estimate.map(ms), ms(fallback)),
                ms(want),
                "estimate {estimate:?}, fallback {fallback}"
            );
        }
    }

    #[test]
    fn min_samples_table() {
        let cases: &[(f64, u64)] = &[
            (0.5, 20),
            (0.9, 50),
            (0.95, 100),
            (0.99, 500),
            (0.999, 5000),
        ];
        for &(q, want) in cases {
            let a = AdaptiveThreshold::new(q, ms(1), ms(10)).unwrap();
            assert_eq!(a.min_samples(), want, "q {q}");
        }
    }

    #[test]
    fn labels() {
        let label = |q| AdaptiveThreshold::new(q, ms(1), ms(2)).unwrap().label();
        assert_eq!(label(0.95), "p95");
        assert_eq!(label(0.999), "p99.9");
        assert_eq!(label(0.5), "p50");
    }
}
