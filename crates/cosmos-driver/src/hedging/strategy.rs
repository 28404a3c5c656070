//! The hedging configuration types: threshold, strategy and the availability-strategy switch.

use std::time::Duration;

use super::adaptive::AdaptiveThreshold;

/// How long the primary attempt may run before one speculative attempt goes to an alternate
/// region: a fixed, non-zero duration ([`HedgeThreshold::new`]), or adaptive
/// ([`HedgeThreshold::adaptive`]): a quantile of the primary region's recent latencies, clamped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HedgeThreshold(Kind);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    Fixed(Duration),
    Adaptive(AdaptiveThreshold),
}

impl HedgeThreshold {
    /// A fixed threshold; `None` when `duration` is zero: a zero threshold would hedge every read
    /// at once.
    pub const fn new(duration: Duration) -> Option<Self> {
        if duration.is_zero() {
            None
        } else {
            Some(Self(Kind::Fixed(duration)))
        }
    }

    /// An adaptive threshold: for each read, the `quantile` (e.g. `0.95`) of the recent latencies of
    /// its primary region, clamped to `[min, max]`. Until the region has enough recent latencies
    /// (about five above the quantile, at least twenty), the driver default threshold clamped to
    /// `[min, max]` applies. `None` unless `0 < quantile < 1`, `min` is not zero and `min <= max`.
    pub fn adaptive(quantile: f64, min: Duration, max: Duration) -> Option<Self> {
        AdaptiveThreshold::new(quantile, min, max).map(|a| Self(Kind::Adaptive(a)))
    }

    /// The fixed threshold; for an adaptive one, the driver default threshold (1000 ms) clamped to
    /// its bounds, which is what a read uses while its region has too few recent latencies (the
    /// threshold a read actually raced with is in its `HedgeDiagnostics`).
    pub const fn get(self) -> Duration {
        match self.0 {
            Kind::Fixed(d) => d,
            Kind::Adaptive(a) => a.clamp(Duration::from_millis(1000)),
        }
    }

    /// The adaptive settings, `None` for a fixed threshold.
    pub const fn adaptive_settings(self) -> Option<AdaptiveThreshold> {
        match self.0 {
            Kind::Fixed(_) => None,
            Kind::Adaptive(a) => Some(a),
        }
    }

    /// Whether the threshold is adaptive.
    pub const fn is_adaptive(self) -> bool {
        matches!(self.0, Kind::Adaptive(_))
    }
}

impl From<AdaptiveThreshold> for HedgeThreshold {
    fn from(adaptive: AdaptiveThreshold) -> Self {
        Self(Kind::Adaptive(adaptive))
    }
}

/// Cross-region hedging: when the primary attempt has not produced a final result within the
/// threshold, one speculative attempt goes to the next applicable preferred region; the first final
/// result wins and the other attempt is cancelled. At most two attempts are ever in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct HedgingStrategy {
    threshold: HedgeThreshold,
}

impl HedgingStrategy {
    /// A strategy with the given threshold.
    pub const fn new(threshold: HedgeThreshold) -> Self {
        Self { threshold }
    }

    /// The threshold before the alternate-region attempt fires.
    pub const fn threshold(self) -> HedgeThreshold {
        self.threshold
    }
}

/// The availability strategy of a client or of one operation.
///
/// `Disabled` on the client suppresses the driver's default hedging for every operation; on an
/// operation it suppresses hedging for that operation only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AvailabilityStrategy {
    /// Cross-region hedging with this strategy.
    Hedging(HedgingStrategy),
    /// No hedging.
    Disabled,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hedge_threshold_rejects_zero() {
        assert_eq!(HedgeThreshold::new(Duration::ZERO), None);
    }

    #[test]
    fn adaptive_threshold_is_checked_and_falls_back_within_its_bounds() {
        let ms = Duration::from_millis;
        assert_eq!(HedgeThreshold::adaptive(1.0, ms(5), ms(10)), None);
        assert_eq!(HedgeThreshold::adaptive(0.9, ms(0), ms(10)), None);
        let a = HedgeThreshold::adaptive(0.95, ms(5), ms(200)).unwrap();
        assert!(a.is_adaptive());
        assert_eq!(a.get(), ms(200));
        let wide = HedgeThreshold::adaptive(0.95, ms(5), ms(5000)).unwrap();
        assert_eq!(wide.get(), ms(1000));
        let f = HedgeThreshold::new(ms(50)).unwrap();
        assert!(!f.is_adaptive() && f.adaptive_settings().is_none());
        assert_eq!(a.adaptive_settings().map(|s| s.min()), Some(ms(5)));
    }

    #[test]
    fn hedge_threshold_accepts_positive() {
        let t = HedgeThreshold::new(Duration::from_millis(1)).map(HedgeThreshold::get);
        assert_eq!(t, Some(Duration::from_millis(1)));
    }
}
