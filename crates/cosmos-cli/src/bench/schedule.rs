//! When operations start and which of them count: pure arithmetic, no clocks read here.

use std::num::NonZeroU64;
use std::time::Duration;

/// How operations are paced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pacing {
    /// Open loop: operation `n` is scheduled at `n / rate` seconds after the start, whether or not
    /// earlier operations have finished. Latency is measured from the scheduled start.
    Open {
        /// Operations started per second.
        rate_per_s: NonZeroU64,
    },
    /// Closed loop: each of the `concurrency` workers starts its next operation when its last one ends.
    Closed,
}

impl Pacing {
    /// `rate` 0 means closed loop.
    pub fn from_rate(rate: u64) -> Self {
        match NonZeroU64::new(rate) {
            Some(rate_per_s) => Pacing::Open { rate_per_s },
            None => Pacing::Closed,
        }
    }

    /// The rate as given on the command line (0 for closed loop).
    pub fn rate(self) -> u64 {
        match self {
            Pacing::Open { rate_per_s } => rate_per_s.get(),
            Pacing::Closed => 0,
        }
    }
}

/// The scheduled start of operation `seq` relative to the run's origin, at `rate_per_s`.
///
/// Computed from `seq` directly (not by adding intervals), so rounding never accumulates.
pub fn scheduled_offset(seq: u64, rate_per_s: NonZeroU64) -> Duration {
    let nanos = u128::from(seq) * 1_000_000_000 / u128::from(rate_per_s.get());
    let secs = (nanos / 1_000_000_000) as u64;
    Duration::new(secs, (nanos % 1_000_000_000) as u32)
}

/// When the measured part of a run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopAt {
    /// After this much measured time (operations scheduled or started before it count).
    Elapsed(Duration),
    /// After this many measured operations.
    Ops(u64),
}

/// Which part of the run an operation belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Started during warm-up: carried out, not recorded.
    Warmup,
    /// Recorded.
    Measured,
    /// Past the end: not started at all.
    Done,
}

/// The shape of a run in time: a warm-up, then the measured part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Unrecorded time at the start.
    pub warmup: Duration,
    /// End of the measured part.
    pub stop: StopAt,
}

impl Window {
    /// Classifies an operation starting `offset` after the origin, when `measured_before` measured
    /// operations have already been started.
    pub fn classify(&self, offset: Duration, measured_before: u64) -> Phase {
        if offset < self.warmup {
            return Phase::Warmup;
        }
        let more = match self.stop {
            StopAt::Elapsed(d) => offset < self.warmup.saturating_add(d),
            StopAt::Ops(n) => measured_before < n,
        };
        if more {
            Phase::Measured
        } else {
            Phase::Done
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(n: u64) -> NonZeroU64 {
        NonZeroU64::new(n).unwrap()
    }

    #[test]
    fn scheduled_offsets_are_evenly_spaced() {
        let cases: &[(u64, u64, Duration)] = &[
            (0, 500, Duration::ZERO),
            (1, 500, Duration::from_millis(2)),
            (500, 500, Duration::from_secs(1)),
            (10_001, 500, Duration::from_millis(20_002)),
            (1, 3, Duration::from_nanos(333_333_333)),
            (2, 3, Duration::from_nanos(666_666_666)),
            (3, 3, Duration::from_secs(1)),
            (7, 1_000_000_000, Duration::from_nanos(7)),
            (1, 1, Duration::from_secs(1)),
        ];
        for &(seq, r, want) in cases {
            assert_eq!(scheduled_offset(seq, rate(r)), want, "seq {seq} at {r}/s");
        }
    }

    #[test]
    fn no_rounding_drift_over_a_long_run() {
        // 7/s does not divide a second evenly; a summed interval would drift by 7e6 * 1 ns.
        let r = rate(7);
        assert_eq!(
            scheduled_offset(7_000_000, r),
            Duration::from_secs(1_000_000)
        );
        assert!(scheduled_offset(u64::MAX, rate(1)) > Duration::from_secs(1 << 60));
    }

    #[test]
    fn rate_zero_is_closed_loop() {
        assert_eq!(Pacing::from_rate(0), Pacing::Closed);
        assert_eq!(Pacing::from_rate(0).rate(), 0);
        assert_eq!(Pacing::from_rate(500).rate(), 500);
    }

    #[test]
    fn classify_by_elapsed_time() {
        let w = Window {
            warmup: Duration::from_secs(2),
            stop: StopAt::Elapsed(Duration::from_secs(20)),
        };
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        assert_eq!(w.classify(s(0), 0), Phase::Warmup);
        assert_eq!(w.classify(ms(1999), 0), Phase::Warmup);
        assert_eq!(w.classify(s(2), 0), Phase::Measured);
        assert_eq!(w.classify(ms(21_999), 99_999), Phase::Measured);
        assert_eq!(w.classify(s(22), 0), Phase::Done);
    }

    #[test]
    fn classify_by_op_count() {
        let w = Window {
            warmup: Duration::from_secs(1),
            stop: StopAt::Ops(3),
        };
        let s = Duration::from_secs;
        assert_eq!(w.classify(Duration::ZERO, 0), Phase::Warmup);
        assert_eq!(w.classify(s(1), 0), Phase::Measured);
        assert_eq!(w.classify(s(100), 2), Phase::Measured);
        assert_eq!(w.classify(s(1), 3), Phase::Done);
    }

    #[test]
    fn no_warmup_measures_from_the_first_op() {
        let w = Window {
            warmup: Duration::ZERO,
            stop: StopAt::Ops(1),
        };
        assert_eq!(w.classify(Duration::ZERO, 0), Phase::Measured);
        assert_eq!(w.classify(Duration::ZERO, 1), Phase::Done);
    }
}
