//! Replication lag: how long a committed write takes to reach a region's replica.

use std::time::Duration;

use rand::Rng;

/// A region's replication lag, sampled per write.
#[derive(Clone, Debug, PartialEq)]
pub enum ReplicationLag {
    /// Every write arrives after the same time (zero = at once).
    Fixed(Duration),
    /// Uniformly between `min` and `max`.
    Uniform { min: Duration, max: Duration },
    /// Log-normal with the given median and shape `sigma`.
    LogNormal { median: Duration, sigma: f64 },
}

impl Default for ReplicationLag {
    fn default() -> Self {
        Self::Fixed(Duration::ZERO)
    }
}

/// Upper bound on one sampled lag.
const MAX_LAG: Duration = Duration::from_secs(3600);

impl ReplicationLag {
    /// A fixed lag in milliseconds.
    pub fn fixed_ms(ms: u64) -> Self {
        Self::Fixed(Duration::from_millis(ms))
    }

    /// Whether every sample is zero.
    pub fn is_zero(&self) -> bool {
        match self {
            Self::Fixed(d) => d.is_zero(),
            Self::Uniform { max, .. } => max.is_zero(),
            Self::LogNormal { median, .. } => median.is_zero(),
        }
    }

    /// Draws one lag.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        let d = match self {
            Self::Fixed(d) => *d,
            Self::Uniform { min, max } if max > min => {
                Duration::from_secs_f64(rng.random_range(min.as_secs_f64()..=max.as_secs_f64()))
            }
            Self::Uniform { min, .. } => *min,
            Self::LogNormal { median, sigma } => {
                // Box-Muller: a standard normal from two uniforms.
                let u1: f64 = rng.random_range(f64::EPSILON..1.0);
                let u2: f64 = rng.random();
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                let secs = median.as_secs_f64() * (sigma * z).exp();
                Duration::try_from_secs_f64(secs).unwrap_or(MAX_LAG)
            }
        };
        d.min(MAX_LAG)
    }

    /// Parses `MS`, `uniform:MIN-MAX` or `lognormal:MEDIAN,SIGMA` (milliseconds).
    pub fn parse(text: &str) -> Result<Self, String> {
        let ms = |s: &str| -> Result<Duration, String> {
            let v: f64 = s
                .trim()
                .parse()
                .map_err(|_| format!("{s:?} is not a number of milliseconds"))?;
            if !(0.0..=MAX_LAG.as_millis() as f64).contains(&v) {
                return Err(format!("{v} ms is outside 0..={} ms", MAX_LAG.as_millis()));
            }
            Ok(Duration::from_secs_f64(v / 1000.0))
        };
        let text = text.trim();
        if let Some(rest) = text.strip_prefix("uniform:") {
            let (a, b) = rest
                .split_once('-')
                .ok_or("uniform lag is written uniform:MIN-MAX")?;
            let (min, max) = (ms(a)?, ms(b)?);
            if min > max {
                return Err("uniform lag: MIN is larger than MAX".into());
            }
            return Ok(Self::Uniform { min, max });
        }
        if let Some(rest) = text.strip_prefix("lognormal:") {
            let (a, b) = rest
                .split_once(',')
                .ok_or("log-normal lag is written lognormal:MEDIAN,SIGMA")?;
            let sigma: f64 = b
                .trim()
                .parse()
                .map_err(|_| format!("sigma {b:?} is not a number"))?;
            if !(0.0..=10.0).contains(&sigma) {
                return Err("log-normal sigma must be within 0..=10".into());
            }
            return Ok(Self::LogNormal {
                median: ms(a)?,
                sigma,
            });
        }
        Ok(Self::Fixed(ms(text)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_form() {
        assert_eq!(
            ReplicationLag::parse("250").unwrap(),
            ReplicationLag::fixed_ms(250)
        );
        assert_eq!(
            ReplicationLag::parse("uniform:10-20").unwrap(),
            ReplicationLag::Uniform {
                min: Duration::from_millis(10),
                max: Duration::from_millis(20)
            }
        );
        assert!(matches!(
            ReplicationLag::parse("lognormal:30,0.5").unwrap(),
            ReplicationLag::LogNormal { .. }
        ));
        for bad in [
            "x",
            "-5",
            "uniform:20-10",
            "uniform:5",
            "lognormal:5",
            "lognormal:5,99",
        ] {
            assert!(ReplicationLag::parse(bad).is_err(), "accepted {bad}");
        }
    }

    #[test]
    fn samples_stay_in_bounds() {
        let mut rng = rand::rng();
        let uniform = ReplicationLag::Uniform {
            min: Duration::from_millis(10),
            max: Duration::from_millis(20),
        };
        let log_normal = ReplicationLag::LogNormal {
            median: Duration::from_millis(10),
            sigma: 1.0,
        };
        for _ in 0..1000 {
            let d = uniform.sample(&mut rng);
            assert!(d >= Duration::from_millis(10) && d <= Duration::from_millis(20));
            assert!(log_normal.sample(&mut rng) <= MAX_LAG);
        }
        assert_eq!(
            ReplicationLag::fixed_ms(7).sample(&mut rng),
            Duration::from_millis(7)
        );
    }
}
