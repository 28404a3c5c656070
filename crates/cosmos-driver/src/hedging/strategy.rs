//! The hedging configuration types: threshold, strategy and the availability-strategy switch.

use std::time::Duration;

/// A validated, non-zero hedging threshold: how long the primary attempt may run before one
/// speculative attempt goes to an alternate region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HedgeThreshold(Duration);

impl HedgeThreshold {
    /// `None` when `duration` is zero: a zero threshold would hedge every read at once.
    pub const fn new(duration: Duration) -> Option<Self> {
        if duration.is_zero() {
            None
        } else {
            Some(Self(duration))
        }
    }

    /// The threshold as a duration.
    pub const fn get(self) -> Duration {
        self.0
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
    fn hedge_threshold_accepts_positive() {
        let t = HedgeThreshold::new(Duration::from_millis(1)).map(HedgeThreshold::get);
        assert_eq!(t, Some(Duration::from_millis(1)));
    }
}
