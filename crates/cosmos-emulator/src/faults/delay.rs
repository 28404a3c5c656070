//! Delay distributions for fault reactions and latency profiles, in milliseconds.

use std::time::Duration;

use rand::Rng;

/// The longest delay a sample can produce (a log-normal tail is cut here).
pub const MAX_DELAY: Duration = Duration::from_secs(3600);

/// How long to wait, as a distribution in milliseconds.
///
/// Build it with [`DelaySpec::fixed`], [`DelaySpec::uniform`] or [`DelaySpec::log_normal`]; they
/// check their arguments, so a sample is always a valid [`Duration`] no longer than [`MAX_DELAY`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DelaySpec {
    /// Always this many milliseconds.
    Fixed { ms: f64 },
    /// Uniform between `min_ms` and `max_ms` (inclusive).
    Uniform { min_ms: f64, max_ms: f64 },
    /// Log-normal: half of the samples are below `median_ms`; `sigma` is the standard deviation of
    /// the logarithm (0 = always the median).
    LogNormal { median_ms: f64, sigma: f64 },
}

impl DelaySpec {
    /// No delay.
    pub const ZERO: DelaySpec = DelaySpec::Fixed { ms: 0.0 };

    /// A fixed delay. Errors when `ms` is negative, not finite or beyond [`MAX_DELAY`].
    pub fn fixed(ms: f64) -> Result<Self, String> {
        check_ms("fixed delay", ms)?;
        Ok(DelaySpec::Fixed { ms })
    }

    /// A uniform delay between `min_ms` and `max_ms`. Errors when a bound is invalid or
    /// `min_ms > max_ms`.
    pub fn uniform(min_ms: f64, max_ms: f64) -> Result<Self, String> {
        check_ms("uniform delay minimum", min_ms)?;
        check_ms("uniform delay maximum", max_ms)?;
        if min_ms > max_ms {
            return Err(format!(
                "uniform delay minimum {min_ms} ms is above its maximum {max_ms} ms"
            ));
        }
        Ok(DelaySpec::Uniform { min_ms, max_ms })
    }

    /// A log-normal delay with this median and log standard deviation. Errors when the median is
    /// invalid or `sigma` is negative, not finite or above 10.
    pub fn log_normal(median_ms: f64, sigma: f64) -> Result<Self, String> {
        check_ms("log-normal median", median_ms)?;
        if !sigma.is_finite() || !(0.0..=10.0).contains(&sigma) {
            return Err(format!(
                "log-normal sigma must be between 0 and 10, got {sigma}"
            ));
        }
        Ok(DelaySpec::LogNormal { median_ms, sigma })
    }

    /// True when every sample is zero.
    pub fn is_zero(&self) -> bool {
        match *self {
            DelaySpec::Fixed { ms } => ms == 0.0,
            DelaySpec::Uniform { max_ms, .. } => max_ms == 0.0,
            DelaySpec::LogNormal { median_ms, .. } => median_ms == 0.0,
        }
    }

    /// Draw one delay. Never panics, even for a spec built by hand with bad numbers: those are
    /// clamped to `0..=MAX_DELAY`.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        let ms = match *self {
            DelaySpec::Fixed { ms } => ms,
            DelaySpec::Uniform { min_ms, max_ms } => {
                let u: f64 = rng.random();
                min_ms + (max_ms - min_ms) * u
            }
            DelaySpec::LogNormal { median_ms, sigma } => {
                median_ms * (sigma * standard_normal(rng)).exp()
            }
        };
        ms_to_duration(ms)
    }
}

/// Milliseconds as a duration, clamped to `0..=MAX_DELAY` (NaN counts as zero).
pub(super) fn ms_to_duration(ms: f64) -> Duration {
    if ms.is_nan() || ms <= 0.0 {
        return Duration::ZERO;
    }
    let max_ms = MAX_DELAY.as_secs_f64() * 1000.0;
    Duration::from_secs_f64(ms.min(max_ms) / 1000.0)
}

fn check_ms(what: &str, ms: f64) -> Result<(), String> {
    let max_ms = MAX_DELAY.as_millis() as f64;
    if !ms.is_finite() || ms < 0.0 || ms > max_ms {
        return Err(format!(
            "{what} must be between 0 and {max_ms} ms, got {ms}"
        ));
    }
    Ok(())
}

/// One draw from the standard normal distribution (Box-Muller).
fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    // 1 - u lies in (0, 1], so its logarithm is finite.
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn rng() -> SmallRng {
        SmallRng::seed_from_u64(7)
    }

    #[test]
    fn fixed_is_exact() {
        let spec = DelaySpec::fixed(250.0).unwrap();
        assert_eq!(spec.sample(&mut rng()), Duration::from_millis(250));
        assert!(DelaySpec::ZERO.is_zero());
        assert_eq!(DelaySpec::ZERO.sample(&mut rng()), Duration::ZERO);
    }

    #[test]
    fn uniform_stays_in_bounds_and_covers_them() {
        let spec = DelaySpec::uniform(800.0, 1500.0).unwrap();
        let mut r = rng();
        let samples: Vec<f64> = (0..10_000)
            .map(|_| spec.sample(&mut r).as_secs_f64() * 1000.0)
            .collect();
        assert!(samples.iter().all(|ms| (800.0..=1500.0).contains(ms)));
        let min = samples.iter().cloned().fold(f64::MAX, f64::min);
        let max = samples.iter().cloned().fold(0.0, f64::max);
        assert!(min < 820.0 && max > 1480.0, "min {min} max {max}");
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        assert!((mean - 1150.0).abs() < 20.0, "mean {mean}");
    }

    #[test]
    fn log_normal_median_is_near_the_given_median() {
        let spec = DelaySpec::log_normal(50.0, 0.5).unwrap();
        let mut r = rng();
        let mut samples: Vec<f64> = (0..20_001)
            .map(|_| spec.sample(&mut r).as_secs_f64() * 1000.0)
            .collect();
        samples.sort_by(|a, b| a.total_cmp(b));
        let median = samples[samples.len() / 2];
        assert!((median - 50.0).abs() < 3.0, "median {median}");
        // sigma 0.5: the 84th percentile is about median * e^0.5 = 82 ms.
        let p84 = samples[samples.len() * 84 / 100];
        assert!((70.0..95.0).contains(&p84), "p84 {p84}");
        assert!(samples.iter().all(|ms| *ms > 0.0));
    }

    #[test]
    fn log_normal_with_zero_sigma_is_the_median() {
        let spec = DelaySpec::log_normal(12.0, 0.0).unwrap();
        assert_eq!(spec.sample(&mut rng()), Duration::from_millis(12));
    }

    #[test]
    fn constructors_reject_bad_numbers() {
        let bad = [
            DelaySpec::fixed(-1.0),
            DelaySpec::fixed(f64::NAN),
            DelaySpec::fixed(f64::INFINITY),
            DelaySpec::fixed(1e12),
            DelaySpec::uniform(10.0, 5.0),
            DelaySpec::uniform(-5.0, 5.0),
            DelaySpec::log_normal(10.0, -0.1),
            DelaySpec::log_normal(10.0, f64::NAN),
            DelaySpec::log_normal(-10.0, 0.1),
        ];
        for result in bad {
            assert!(result.is_err(), "{result:?}");
        }
        let err = DelaySpec::uniform(10.0, 5.0).unwrap_err();
        assert!(err.contains("above its maximum"), "{err}");
    }

    #[test]
    fn hand_built_bad_specs_are_clamped_not_panicking() {
        let mut r = rng();
        assert_eq!(DelaySpec::Fixed { ms: -5.0 }.sample(&mut r), Duration::ZERO);
        assert_eq!(
            DelaySpec::Fixed { ms: f64::NAN }.sample(&mut r),
            Duration::ZERO
        );
        assert_eq!(
            DelaySpec::Fixed { ms: f64::INFINITY }.sample(&mut r),
            MAX_DELAY
        );
        let huge = DelaySpec::LogNormal {
            median_ms: 1e300,
            sigma: 100.0,
        };
        assert!(huge.sample(&mut r) <= MAX_DELAY);
    }
}
